"""PREP → (synthetic) verdicts → cluster → aggregate over a discovery run directory."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import orjson
import pytest

from helix import InputFileError, MissingVerdictsError
from helix.discovery import (
    aggregate_discovery,
    open_discovery,
    prep_cluster,
    prep_discovery,
    read_stage_with_model,
)
from helix.judging import verdict_progress
from helix.models import open_model
from helix.models.testing import RecordedRequest, ScriptedLLMServer
from helix.traces import Trace

from .conftest import PASS_BODY, SYNTHETIC_JUDGE, MakeRun, fail_body, write_determination


def category(cid: str, note_ids: list[str], routing: str = "eval-worthy", title: str | None = None) -> dict:
    return {
        "id": cid,
        "title": title or f"synthetic {cid}",
        "definition": f"synthetic definition of {cid}",
        "question": f"Did the agent avoid {cid}?",
        "pass_definition": "synthetic pass",
        "fail_definition": "synthetic fail",
        "routing": routing,
        "routing_reason": "synthetic reason",
        "note_ids": note_ids,
    }


def write_cluster(run, key: str, categories: list[dict], unassigned: list[dict] | None = None) -> None:
    path = run.cluster.verdict_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "version": 1,
        "key": key,
        "status": "scored",
        "judge": SYNTHETIC_JUDGE,
        "clustering": {"critique": "synthetic", "categories": categories, "unassigned": unassigned or []},
    }
    path.write_bytes(orjson.dumps(doc))


def test_prep_writes_one_fenced_packet_per_distinct_trajectory_and_is_idempotent(make_run: MakeRun) -> None:
    run = make_run()
    assert len(run.units) == len(run.traces)
    packet = json.loads(run.determine.packet_path(run.units[0].key).read_text())
    assert packet["kind"] == "determination" and packet["verdict_file"].endswith(".verdict.json")
    assert "_" not in "".join(k[0] for k in packet["trajectory"].get("metadata", {}))  # no ground truth
    assert packet["verdict_format"]["json_schema"]["title"] == "DeterminationFile"
    again = prep_discovery(list(run.traces), run.run_dir)
    assert again.written == 0 and again.unchanged == len(run.units)


def test_identical_traces_share_one_packet(make_run: MakeRun, shop_traces: list[Trace]) -> None:
    twin = shop_traces[0].model_copy(update={"id": "twin"})
    run = make_run([*shop_traces[:3], twin])
    assert len(run.units) == 3 and run.units[0].trace_ids == (shop_traces[0].id, "twin")


def test_an_edited_packet_is_refused(make_run: MakeRun) -> None:
    from helix.discovery import Determining

    run = make_run()
    path = run.determine.packet_path(run.units[0].key)
    doc = json.loads(path.read_text())
    doc["trajectory"]["input"] = "changed"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputFileError, match="edited"):
        Determining().read_packet(str(path), run.units[0].key)


def test_missing_determinations_fail_loudly_listing_keys(make_run: MakeRun) -> None:
    run = make_run()
    with pytest.raises(MissingVerdictsError) as caught:
        prep_cluster(run.run_dir)
    assert set(caught.value.keys) == {u.key for u in run.units}


def test_the_whole_flow_counts_rates_saturation_drafts_and_handoff(make_run: MakeRun) -> None:
    run = make_run()
    units = run.units
    # SYNTHETIC: the first 8 traces fail (4 + 3 + 1 in three made-up modes), the rest pass.
    modes = ["m-wrong-refund"] * 4 + ["m-tool-crash"] * 3 + ["m-rude"]
    for unit, mode in zip(units, modes, strict=False):
        write_determination(run, unit.key, fail_body(1, "assistant", f"synthetic note {mode}"))
    for unit in units[len(modes) :]:
        write_determination(run, unit.key, PASS_BODY)
    prep = prep_cluster(run.run_dir, batch_notes=5)
    assert (prep.notes, prep.packets) == (8, 2)
    assert verdict_progress(run.cluster.root).done == 0
    ids = [u.key for u in units[:8]]
    keys = sorted(
        run.cluster.keys(), key=lambda k: json.loads(run.cluster.packet_path(k).read_text())["batch"]
    )
    write_cluster(
        run,
        keys[0],
        [
            category("wrong-refund", ids[:4], title="Refund to a forbidden payment method"),
            category("tool-crash", ids[4:5], routing="fixable"),
        ],
    )
    # batch 2 names the crash mode with another id but the same content: merged by content, and the
    # merged category takes the id of its larger member
    write_cluster(
        run,
        keys[1],
        [
            category("tool-crashes", ids[5:7], routing="fixable"),
            category("rudeness", ids[7:8]),
        ],
    )
    out = aggregate_discovery(run.run_dir, last_k=3)
    r = out.result
    assert (r.determinations.failed, r.determinations.passed, r.decided) == (8, 4, 12)
    by_id = {c.id: c for c in r.categories}
    assert set(by_id) == {"wrong-refund", "tool-crashes", "rudeness"}
    assert by_id["tool-crashes"].failures == 3 and by_id["tool-crashes"].routing == "fixable"
    assert by_id["tool-crashes"].members == ((1, "tool-crash"), (2, "tool-crashes"))
    assert by_id["wrong-refund"].rate == pytest.approx(4 / 12)
    lo, hi = by_id["wrong-refund"].ci95
    assert lo < 4 / 12 < hi
    assert r.saturation.curve[:8] == (1, 1, 1, 1, 2, 2, 2, 3) and r.saturation.singletons == 1
    assert r.saturation.coverage == pytest.approx(1 - 1 / 8)
    draft = out.draft_path.read_text()
    assert "wrong-refund" in draft and "tool-crash" not in draft and "# failed 4 of 12" in draft
    handoff = json.loads(out.handoff_path.read_text())
    assert [f["id"] for f in handoff["fixables"]] == ["tool-crashes"] and len(
        handoff["fixables"][0]["evidence"]
    ) == 3
    assert str(run.run_dir) not in out.handoff_path.read_text()  # masked
    html = out.report_path.read_text()
    assert "<svg" in html and "Refund to a forbidden payment method" in html
    first = out.result_path.read_bytes()
    assert aggregate_discovery(run.run_dir, last_k=3).result_path.read_bytes() == first  # deterministic


def test_untrusted_text_is_escaped_in_the_report(make_run: MakeRun) -> None:
    run = make_run()
    for unit in run.units:
        write_determination(run, unit.key, fail_body(0, "<script>alert(1)</script>", "x"))
    prep_cluster(run.run_dir, batch_notes=50)
    (key,) = run.cluster.keys()
    write_cluster(
        run, key, [category("evil", [u.key for u in run.units], title="<img src=x onerror=alert(1)>")]
    )
    html = aggregate_discovery(run.run_dir).report_path.read_text()
    assert "<img src=x" not in html and "&lt;img src=x" in html and "<script>alert" not in html


def test_a_provider_reads_the_determiner_packets_through_the_engine(make_run: MakeRun) -> None:
    run = make_run()
    first_wrong = fail_body(0, "assistant", "synthetic scripted note")

    def answer(req: RecordedRequest) -> str:  # a scripted server answer (synthetic), not a judgment
        assert "UNTRUSTED TRAJECTORY" in req.prompt_text
        return json.dumps(first_wrong)

    async def go() -> object:
        async with ScriptedLLMServer(answer) as srv:
            model = open_model(srv.spec("openai/gpt-4o-2024-08-06"), rng=random.Random(0), max_retries=0)
            try:
                return await read_stage_with_model(run.run_dir, "determine", model)
            finally:
                await model.aclose()

    summary = asyncio.run(go())
    assert summary.judged == len(run.units) and summary.unscored == 0  # type: ignore[attr-defined]
    assert verdict_progress(run.determine.root).complete
    assert (run.determine.root / "receipts.jsonl").is_file()
    opened = open_discovery(run.run_dir)
    assert prep_cluster(opened.run_dir).notes == len(run.units)


def test_a_provider_that_never_answers_in_shape_leaves_units_unscored(
    make_run: MakeRun, shop_traces: list[Trace]
) -> None:
    run = make_run(shop_traces[:2])

    async def go() -> object:
        async with ScriptedLLMServer(lambda req: "I think it failed.") as srv:
            model = open_model(srv.spec("openai/gpt-4o-2024-08-06"), rng=random.Random(0), max_retries=0)
            try:
                return await read_stage_with_model(run.run_dir, "determine", model)
            finally:
                await model.aclose()

    summary = asyncio.run(go())
    assert summary.unscored == 2 and summary.unscored_reasons == {"unparseable": 2}  # type: ignore[attr-defined]
    verdict = json.loads(run.determine.verdict_path(run.units[0].key).read_text())
    assert verdict["status"] == "unscored" and verdict["determination"] is None


def test_stale_cluster_packets_are_named(make_run: MakeRun, tmp_path: Path) -> None:
    run = make_run()
    for unit in run.units:
        write_determination(run, unit.key, fail_body(0, "a", "n"))
    prep_cluster(run.run_dir)
    write_determination(run, run.units[0].key, PASS_BODY)  # a determination changed after clustering
    with pytest.raises(Exception, match="run `helix discover cluster"):
        aggregate_discovery(run.run_dir)
