"""`helix profile` (the subject profile) and `helix sample` (balanced sampling)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import console, helix_errors

if TYPE_CHECKING:
    from ..discovery import VerdictSignal

__all__ = ["register"]

Traces = Annotated[list[Path], typer.Argument(help="Trace files or folders (any format Helix reads).")]


@helix_errors
def profile(
    traces: Traces,
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the profile (YAML).")] = Path(
        "profile.yaml"
    ),
    subject: Annotated[str | None, typer.Option("--subject", help="The agent's name.")] = None,
) -> None:
    """Profile the agent behind TRACES: tools, events, agents and hand-offs, typical tool order, distributions.

    Tool inventory: calls, error rate and argument keys per tool. Event taxonomy by kind and name.
    Agents and sub-agents with their hand-offs (consecutive entries by different agents). The typical
    tool order as an expected flow (tool-to-next-tool edges). Turns, transcript length, tool calls
    and cost as n / min / p50 / p90 / max.
    """
    import yaml

    from .._util import write_atomic
    from ..discovery import profile_subject
    from ._discover import read_trace_paths

    items, skipped = read_trace_paths(traces)
    prof = profile_subject(items, subject=subject)
    write_atomic(
        out, yaml.safe_dump(prof.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=100)
    )
    c = console()
    c.print(
        f"profiled {prof.traces} traces" + (f" ({skipped} records skipped)" if skipped else "") + f" -> {out}"
    )
    for t in prof.tools[:10]:
        c.print(
            f"  tool {t.name}: {t.calls} calls, {t.error_rate:.0%} errors, args {', '.join(t.argument_keys) or '-'}"
        )
    if prof.agents:
        c.print("  agents: " + ", ".join(f"{a.name} ({a.entries})" for a in prof.agents[:8]))
    if prof.typical_order:
        c.print(
            f"  typical tool order ({prof.typical_order_share:.0%} of traces): {' -> '.join(prof.typical_order)}"
        )


def _verdicts(run: Path) -> dict[str, VerdictSignal]:
    """Per-trace verdict signals from a discovery run's determinations or a judging run's verdicts."""
    from ..discovery import VerdictSignal, open_discovery, read_determinations

    out: dict[str, VerdictSignal] = {}
    if (run / "discovery.json").is_file():
        for unit, v in read_determinations(open_discovery(run)):
            if v.determination is not None:
                for tid in unit.trace_ids:
                    out[tid] = VerdictSignal(
                        result=v.determination.result, confidence=v.determination.confidence
                    )
        return out
    from ..judging import collect_results

    for row in collect_results(run).results:  # the least sure verdict of a trace speaks for it
        if row.verdict is None:
            continue
        signal = VerdictSignal(result=row.verdict.result, confidence=row.verdict.confidence)
        old = out.get(row.trace_id)
        rank = (0 if signal.result == "uncertain" else 1, signal.confidence)
        if old is None or rank < (0 if old.result == "uncertain" else 1, old.confidence):
            out[row.trace_id] = signal
    return out


@helix_errors
def sample(
    traces: Traces,
    n: Annotated[int, typer.Option("--n", min=1, help="How many traces to pick.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Sampled traces (Helix JSONL).")] = Path(
        "sample.jsonl"
    ),
    strategy: Annotated[
        str, typer.Option("--strategy", help="random, outlier, failure, uncertainty or stratified.")
    ] = "stratified",
    seed: Annotated[int, typer.Option("--seed", help="Seed (the same seed gives the same sample).")] = 0,
    run: Annotated[
        Path | None,
        typer.Option("--run", help="A judged or determined run whose verdicts drive failure/uncertainty."),
    ] = None,
    score: Annotated[str | None, typer.Option("--score", help="The trace score that says pass/fail.")] = None,
) -> None:
    """Pick N traces to read first, each with its reason; writes OUT and OUT's plan (.plan.json).

    random: uniform. outlier: unusual length, tool calls, errors or cost (robust z-score). failure:
    failed source scores or verdicts first. uncertainty: uncertain then low-confidence verdicts
    (needs --run). stratified: as many passing as failing traces.
    """
    import orjson

    from .._util import write_atomic
    from ..discovery import sample_traces
    from ..traces import write_traces_jsonl
    from ._discover import read_trace_paths

    items, _ = read_trace_paths(traces)
    verdicts = _verdicts(run) if run is not None else None
    plan = sample_traces(items, strategy=strategy, n=n, seed=seed, verdicts=verdicts, score_name=score)  # type: ignore[arg-type]
    by_id = {t.id: t for t in items}
    write_traces_jsonl([by_id[i] for i in plan.trace_ids], out)
    plan_path = out.with_name(out.name.split(".")[0] + ".plan.json")
    body = {**plan.describe(), "picks": [{"trace_id": p.trace_id, "reason": p.reason} for p in plan.picks]}
    write_atomic(plan_path, orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n")
    c = console()
    c.print(
        f"picked {len(plan.picks)} of {len(items)} traces ({strategy}, seed {seed}) -> {out}, {plan_path}"
    )
    for p in plan.picks[:10]:
        c.print(f"  {p.trace_id}: {p.reason}")


def register(app: typer.Typer) -> None:
    """Add `profile` and `sample` to the root app."""
    app.command("profile")(profile)
    app.command("sample")(sample)
