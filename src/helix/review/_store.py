"""The SQLite label store.

One file, WAL mode (readers never block the writer), every write one ``BEGIN IMMEDIATE``
transaction, and a schema built from an append-only list of migrations whose application is
recorded in the ``schema_migrations`` table. A connection is opened per operation, so a store is
safe to share between threads, and several processes may write the same file at once.

Labels are append-only rows: the current label of a (trace, criterion, annotator) is the latest one
(by ``created_at``, then insertion order). An identical row (same key, time, label and note) is
stored once, so importing the same export twice changes nothing and merging stores round-trips.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .._exceptions import InputFileError, UsageError
from ._labels import BadLine, HumanLabel, LabelValue, parse_labels_jsonl, write_labels_jsonl

__all__ = ["MIGRATIONS", "ImportSummary", "LabelStore", "Migration", "load_labels"]

_BUSY_TIMEOUT_MS = 30_000


@dataclass(frozen=True, kw_only=True)
class Migration:
    """One schema step. Never edit or reorder a released one: append a new one."""

    version: int
    name: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        version=1,
        name="labels table",
        statements=(
            """CREATE TABLE labels (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                trace_id TEXT NOT NULL,
                criterion_id TEXT NOT NULL,
                annotator TEXT NOT NULL,
                label TEXT NOT NULL CHECK (label IN ('pass', 'fail', 'defer', 'underdetermined')),
                note TEXT NOT NULL DEFAULT '',
                created_at TEXT NOT NULL,
                UNIQUE (trace_id, criterion_id, annotator, created_at, label, note)
            )""",
        ),
    ),
    Migration(
        version=2,
        name="index on label key and time",
        statements=(
            "CREATE INDEX labels_by_key ON labels (trace_id, criterion_id, annotator, created_at, id)",
        ),
    ),
    Migration(
        version=3,
        name="label design and stratum",
        statements=(
            "ALTER TABLE labels ADD COLUMN design TEXT",
            "ALTER TABLE labels ADD COLUMN stratum TEXT",
        ),
    ),
)

_COLUMNS = "trace_id, criterion_id, annotator, label, note, created_at, design, stratum"


def _time_text(value: datetime) -> str:
    # Fixed width, UTC: text order is time order.
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def _row_label(row: tuple[str, str, str, str, str, str, str | None, str | None]) -> HumanLabel:
    trace_id, criterion_id, annotator, label, note, created_at, design, stratum = row
    return HumanLabel(
        trace_id=trace_id,
        criterion_id=criterion_id,
        annotator=annotator,
        label=label,
        note=note,
        created_at=datetime.fromisoformat(created_at),
        design=design,
        stratum=stratum,
    )


@dataclass(frozen=True, kw_only=True)
class ImportSummary:
    """What an import or merge did."""

    read: int
    added: int
    duplicates: int
    bad_lines: tuple[BadLine, ...] = ()
    source: str = ""

    def describe(self) -> str:
        """A summary line, then one line per bad input line."""
        head = (
            f"{self.source or 'import'}: {self.read} label(s) read, {self.added} added, "
            f"{self.duplicates} already present, {len(self.bad_lines)} bad line(s)"
        )
        return "\n".join([head, *(f"  line {b.line}: {b.reason}" for b in self.bad_lines)])


class LabelStore:
    """Human labels in one SQLite file (created with the current schema when absent)."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        """Open the store at ``path``; with ``create=False`` a missing file is refused (a typo in a path
        must not silently become an empty store)."""
        self.path = Path(path)
        if self.path.is_dir():
            raise UsageError(
                f"label store {str(self.path)!r} is a directory; pass a file such as labels.sqlite"
            )
        if not create and not self.path.is_file():
            raise UsageError(
                f"label store {str(self.path)!r} does not exist; check the path (stores are created by "
                "`helix review serve`, `helix review import` and `helix labels from-scores`)"
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise UsageError(
                    f"{self.path}: SQLite refused WAL mode (got {mode!r}); keep the label store on a local disk"
                )
            self._migrate(conn)

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except sqlite3.Error as exc:
            raise UsageError(f"cannot open label store {str(self.path)!r}: {exc}") from exc
        try:
            conn.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys=ON")
            yield conn
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            raise InputFileError(
                f"not a usable Helix label store ({exc}); pass a label store file made by Helix",
                path=self.path,
            ) from exc
        finally:
            conn.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: BEGIN IMMEDIATE ... COMMIT (ROLLBACK on any error)."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _migrate(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            done = {int(v) for (v,) in conn.execute("SELECT version FROM schema_migrations")}
            known = {m.version for m in MIGRATIONS}
            if done - known:
                raise UsageError(
                    f"{self.path} has schema version(s) {sorted(done - known)!r} that this Helix does not know "
                    f"(it knows up to {max(known)}); upgrade Helix to open it"
                )
            for migration in MIGRATIONS:
                if migration.version in done:
                    continue
                for statement in migration.statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, _time_text(datetime.now(UTC))),
                )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # -- reads ---------------------------------------------------------------------------------

    def schema_versions(self) -> list[int]:
        """The migrations applied to this file, in order."""
        with self._connect() as conn:
            return [int(v) for (v,) in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]

    def journal_mode(self) -> str:
        """SQLite's journal mode of this file (``wal``)."""
        with self._connect() as conn:
            return str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()

    def all(self) -> list[HumanLabel]:
        """Every stored label, oldest first (ties in insertion order)."""
        with self._connect() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM labels ORDER BY created_at, id").fetchall()
        return [_row_label(r) for r in rows]

    def latest(self, *, annotator: str | None = None) -> list[HumanLabel]:
        """The current label per (trace, criterion, annotator), sorted by that key.

        ``annotator`` restricts the result to one annotator.
        """
        where = "WHERE annotator = ?" if annotator is not None else ""
        params: tuple[str, ...] = (annotator,) if annotator is not None else ()
        query = (
            f"SELECT {_COLUMNS} FROM (SELECT *, ROW_NUMBER() OVER ("
            "PARTITION BY trace_id, criterion_id, annotator ORDER BY created_at DESC, id DESC) AS rn "
            f"FROM labels {where}) WHERE rn = 1 ORDER BY trace_id, criterion_id, annotator"
        )
        with self._connect() as conn:
            rows = conn.execute(query, params).fetchall()
        return [_row_label(r) for r in rows]

    def annotators(self) -> list[str]:
        """Every annotator with at least one label, sorted."""
        with self._connect() as conn:
            return [
                str(a) for (a,) in conn.execute("SELECT DISTINCT annotator FROM labels ORDER BY annotator")
            ]

    def __len__(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM labels").fetchone()[0])

    # -- writes --------------------------------------------------------------------------------

    @staticmethod
    def _insert(conn: sqlite3.Connection, labels: Iterable[HumanLabel]) -> tuple[int, int]:
        added = read = 0
        for label in labels:
            read += 1
            cur = conn.execute(
                f"INSERT OR IGNORE INTO labels ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    label.trace_id,
                    label.criterion_id,
                    label.annotator,
                    label.label,
                    label.note,
                    _time_text(label.created_at),
                    label.design,
                    label.stratum,
                ),
            )
            added += cur.rowcount
        return read, added

    def add(self, label: HumanLabel) -> bool:
        """Store one label (one transaction); False when an identical row was already there."""
        with self._write() as conn:
            return self._insert(conn, [label])[1] == 1

    def record(
        self,
        *,
        trace_id: str,
        criterion_id: str,
        label: LabelValue,
        annotator: str,
        note: str = "",
        design: str | None = None,
        stratum: str | None = None,
    ) -> HumanLabel:
        """Create a label stamped now (with the design it was chosen under), store it and return it."""
        made = HumanLabel(
            trace_id=trace_id,
            criterion_id=criterion_id,
            label=label,
            annotator=annotator,
            note=note,
            design=design,
            stratum=stratum,
        )
        self.add(made)
        return made

    def add_many(self, labels: Iterable[HumanLabel]) -> ImportSummary:
        """Store many labels in one transaction (identical rows are kept once)."""
        with self._write() as conn:
            read, added = self._insert(conn, labels)
        return ImportSummary(read=read, added=added, duplicates=read - added)

    def undo(
        self, *, trace_id: str, criterion_id: str, annotator: str, created_at: datetime | None = None
    ) -> HumanLabel | None:
        """Remove a label of this key (one transaction); returns the label now current.

        With ``created_at``, only the label made at that time is removed (so undoing one's own label
        never removes a later one from another page); without it, the current label.
        """
        when = "AND created_at = ? " if created_at is not None else ""
        params = (trace_id, criterion_id, annotator) + ((_time_text(created_at),) if created_at else ())
        with self._write() as conn:
            row = conn.execute(
                "SELECT id FROM labels WHERE trace_id = ? AND criterion_id = ? AND annotator = ? "
                f"{when}ORDER BY created_at DESC, id DESC LIMIT 1",
                params,
            ).fetchone()
            if row is not None:
                conn.execute("DELETE FROM labels WHERE id = ?", (row[0],))
            now = conn.execute(
                f"SELECT {_COLUMNS} FROM labels WHERE trace_id = ? AND criterion_id = ? AND annotator = ? "
                "ORDER BY created_at DESC, id DESC LIMIT 1",
                (trace_id, criterion_id, annotator),
            ).fetchone()
        return _row_label(now) if now is not None else None

    # -- exchange ------------------------------------------------------------------------------

    def export_jsonl(self, path: str | Path, *, latest_only: bool = False) -> int:
        """Write every label (or only the current ones) as JSONL, atomically; returns how many."""
        labels = self.latest() if latest_only else self.all()
        return write_labels_jsonl(path, labels)

    def import_jsonl(self, path: str | Path) -> ImportSummary:
        """Merge a label JSONL file in (one transaction). Bad lines are counted with line numbers."""
        source = Path(path)
        try:
            data = source.read_bytes()
        except FileNotFoundError as exc:
            raise UsageError(f"label file {str(source)!r} does not exist; check the path") from exc
        parsed = parse_labels_jsonl(data, source=str(source))
        summary = self.add_many(parsed.labels)
        return ImportSummary(
            read=summary.read,
            added=summary.added,
            duplicates=summary.duplicates,
            bad_lines=parsed.bad_lines,
            source=str(source),
        )

    def merge(self, other: LabelStore) -> ImportSummary:
        """Merge every label of ``other`` into this store (identical rows kept once)."""
        summary = self.add_many(other.all())
        return ImportSummary(
            read=summary.read, added=summary.added, duplicates=summary.duplicates, source=str(other.path)
        )


def load_labels(path: str | Path, *, latest_only: bool = True) -> list[HumanLabel]:
    """Labels from a label store (``.sqlite``/``.db``) or a label JSONL file.

    ``latest_only`` (default) keeps the current label per (trace, criterion, annotator). A JSONL file
    with bad lines is refused, naming the first one, so calibration never runs on half a file.
    """
    from ._labels import latest_labels

    source = Path(path)
    if not source.is_file():
        raise UsageError(
            f"label file {str(source)!r} does not exist; pass a label store or a labels JSONL file"
        )
    with source.open("rb") as fh:
        head = fh.read(16)
    if head.startswith(b"SQLite format 3"):
        store = LabelStore(source, create=False)
        return store.latest() if latest_only else store.all()
    parsed = parse_labels_jsonl(source.read_bytes(), source=str(source))
    if parsed.bad_lines:
        first = parsed.bad_lines[0]
        raise InputFileError(
            f"{first.reason} ({len(parsed.bad_lines)} bad line(s) in all); fix or remove them, or import the "
            "file into a label store with `helix review import` to skip them",
            path=source,
            line=first.line,
        )
    return latest_labels(parsed.labels) if latest_only else sorted(parsed.labels, key=HumanLabel.sort_key)
