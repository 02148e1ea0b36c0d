"""The SQLite label store: schema migrations, WAL, transactions, concurrent writers, JSONL exchange."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from helix import InputFileError, UsageError
from helix.review import MIGRATIONS, HumanLabel, LabelStore, load_labels

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def lab(trace: str, label: str, annotator: str = "ana", minutes: int = 0, note: str = "") -> HumanLabel:
    return HumanLabel(
        trace_id=trace,
        criterion_id="c1",
        label=label,  # type: ignore[arg-type]
        annotator=annotator,
        note=note,
        created_at=T0 + timedelta(minutes=minutes),
    )


def test_new_store_is_wal_with_every_migration_recorded(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "labels.sqlite")
    assert store.journal_mode() == "wal"
    assert store.schema_versions() == [m.version for m in MIGRATIONS]
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    LabelStore(tmp_path / "labels.sqlite")  # reopening applies nothing twice
    assert store.schema_versions() == [m.version for m in MIGRATIONS]


def test_an_old_schema_is_migrated_forward_keeping_its_labels(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT)"
    )
    for statement in MIGRATIONS[0].statements:
        conn.execute(statement)
    conn.execute("INSERT INTO schema_migrations VALUES (1, 'labels table', '2026-01-01')")
    conn.execute(
        "INSERT INTO labels (trace_id, criterion_id, annotator, label, note, created_at) "
        "VALUES ('t1', 'c1', 'ana', 'pass', '', '2026-01-01T00:00:00.000000+00:00')"
    )
    conn.commit()
    conn.close()
    store = LabelStore(path)
    assert store.schema_versions() == [1, 2, 3]
    assert [(x.trace_id, x.label, x.design) for x in store.all()] == [("t1", "pass", None)]
    with sqlite3.connect(path) as check:
        names = {r[0] for r in check.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    check.close()
    assert "labels_by_key" in names


def test_a_schema_from_a_newer_helix_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    LabelStore(path)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', '2030-01-01')")
    conn.commit()
    conn.close()
    with pytest.raises(UsageError, match=r"\[99\].*upgrade Helix"):
        LabelStore(path)


def test_a_file_that_is_not_sqlite_is_refused_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "labels.sqlite"
    path.write_text("not a database at all, just some text that is long enough" * 20)
    with pytest.raises(InputFileError, match="labels.sqlite"):
        LabelStore(path)


def test_latest_is_per_trace_criterion_annotator(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "l.sqlite")
    store.add_many(
        [
            lab("t1", "pass", minutes=0),
            lab("t1", "fail", minutes=5),
            lab("t1", "defer", "ben", 9),
            lab("t2", "pass"),
        ]
    )
    got = {(x.trace_id, x.annotator): x.label for x in store.latest()}
    assert got == {("t1", "ana"): "fail", ("t1", "ben"): "defer", ("t2", "ana"): "pass"}
    assert [x.label for x in store.latest(annotator="ben")] == ["defer"]
    assert len(store) == 4
    assert store.annotators() == ["ana", "ben"]


def test_times_are_stored_as_utc_and_read_back_equal(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "l.sqlite")
    local = datetime(2026, 3, 1, 14, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
    store.add(lab("t1", "pass").model_copy(update={"created_at": local}))
    (back,) = store.all()
    assert back.created_at == local
    assert back.created_at.utcoffset() == timedelta(0)


def test_naive_times_are_rejected() -> None:
    with pytest.raises(ValueError, match="timezone"):
        HumanLabel(
            trace_id="t",
            criterion_id="c",
            label="pass",
            annotator="a",
            created_at=datetime(2026, 1, 1),  # noqa: DTZ001
        )


def test_undo_removes_only_the_current_label(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "l.sqlite")
    store.add_many([lab("t1", "pass", minutes=0), lab("t1", "fail", minutes=1)])
    now = store.undo(trace_id="t1", criterion_id="c1", annotator="ana")
    assert now is not None and now.label == "pass"
    assert store.undo(trace_id="t1", criterion_id="c1", annotator="ana") is None
    assert store.latest() == []
    assert store.undo(trace_id="t1", criterion_id="c1", annotator="ana") is None


def test_undo_of_a_named_label_keeps_a_later_one_from_another_page(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "l.sqlite")
    mine, theirs = lab("t1", "pass", minutes=0), lab("t1", "fail", minutes=1)
    store.add_many([mine, theirs])
    now = store.undo(trace_id="t1", criterion_id="c1", annotator="ana", created_at=mine.created_at)
    assert now == theirs
    assert store.all() == [theirs]


def test_a_failed_write_rolls_back_the_whole_transaction(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "l.sqlite")

    def labels() -> object:
        yield lab("t1", "pass")
        yield lab("t2", "pass")
        raise RuntimeError("writer died mid-batch")

    with pytest.raises(RuntimeError):
        store.add_many(labels())  # type: ignore[arg-type]
    assert store.all() == []


def test_jsonl_round_trip_and_merge_dedup(tmp_path: Path) -> None:
    a = LabelStore(tmp_path / "a.sqlite")
    a.add_many(
        [lab("t1", "pass", minutes=0), lab("t1", "fail", minutes=3, note="wrong window"), lab("t2", "defer")]
    )
    out = tmp_path / "a.jsonl"
    assert a.export_jsonl(out) == 3

    b = LabelStore(tmp_path / "b.sqlite")
    b.add(lab("t3", "pass", "ben"))
    first = b.import_jsonl(out)
    assert (first.read, first.added, first.duplicates, first.bad_lines) == (3, 3, 0, ())
    before = b.all()
    again = b.import_jsonl(out)
    assert (again.added, again.duplicates) == (0, 3)
    assert b.all() == before  # import twice = no change

    # round trip: a fresh store fed a's export holds exactly a's labels
    c = LabelStore(tmp_path / "c.sqlite")
    c.import_jsonl(out)
    assert c.all() == a.all()

    merged = a.merge(b)
    assert merged.added == 1
    assert a.merge(b).added == 0
    assert {(x.trace_id, x.annotator): x.label for x in a.latest()} == {
        ("t1", "ana"): "fail",
        ("t2", "ana"): "defer",
        ("t3", "ben"): "pass",
    }
    latest_out = tmp_path / "latest.jsonl"
    assert a.export_jsonl(latest_out, latest_only=True) == 3
    assert load_labels(latest_out) == a.latest()
    assert load_labels(tmp_path / "a.sqlite") == a.latest()
    assert len(load_labels(tmp_path / "a.sqlite", latest_only=False)) == 4


def test_load_labels_refuses_a_jsonl_with_bad_lines_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(lab("t1", "pass").model_dump_json() + "\n{broken\n")
    with pytest.raises(InputFileError, match=r"bad.jsonl:2"):
        load_labels(path)
    with pytest.raises(UsageError, match="does not exist"):
        load_labels(tmp_path / "missing.jsonl")


def test_concurrent_threads_lose_no_label(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "l.sqlite")

    def worker(w: int) -> None:
        for i in range(20):
            store.record(trace_id=f"t{i}", criterion_id="c1", label="pass", annotator=f"w{w}")

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(store) == 6 * 20
    assert len(store.latest()) == 6 * 20


WRITER = """
import sys
from helix.review import LabelStore
store = LabelStore(sys.argv[1])
for i in range(int(sys.argv[3])):
    store.record(trace_id=f"t{i}", criterion_id="c1", label="fail", annotator="p" + sys.argv[2])
"""


def test_concurrent_processes_lose_no_label(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(w), "20"], stderr=subprocess.PIPE)
        for w in range(3)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    store = LabelStore(path)
    assert len(store) == 3 * 20
    assert {x.annotator for x in store.latest()} == {"p0", "p1", "p2"}


def test_a_label_keeps_its_design_and_stratum_through_the_store_and_jsonl(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "labels.sqlite")
    made = store.record(
        trace_id="t1", criterion_id="c", label="fail", annotator="ana", design="active", stratum="pass/unsure"
    )
    assert [(x.design, x.stratum) for x in store.latest()] == [("active", "pass/unsure")]
    out = tmp_path / "labels.jsonl"
    store.export_jsonl(out)
    again = load_labels(out)
    assert again == [made] and again[0].version == 2


def test_version_1_label_lines_still_read_and_an_unknown_design_is_a_bad_line() -> None:
    from helix.review import parse_labels_jsonl

    old = b'{"version": 1, "trace_id": "t", "criterion_id": "c", "label": "pass", "annotator": "a", ' + (
        b'"created_at": "2026-01-01T00:00:00Z"}\n'
    )
    bad = old.replace(b'"version": 1', b'"version": 2, "design": "by-mood"')
    parsed = parse_labels_jsonl(old + bad)
    assert [x.version for x in parsed.labels] == [1]
    assert parsed.bad_lines[0].line == 2 and "by-mood" in parsed.bad_lines[0].reason
