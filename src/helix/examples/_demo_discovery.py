"""The demo's discovery step: the example's traces through determine → cluster → aggregate, offline.

The determination and cluster verdicts ship with the example (``support_shop/discovery/``, written
through the dispatch protocol by an LLM agent runtime; provenance in its ``PROVENANCE.json``). The
step prepares a discovery run over the demo's traces, copies the shipped verdict of every packet
that has one, and aggregates. When verdicts are missing (not shipped yet, or stale after a prompt
change), the step is skipped with a note saying which, and the rest of the demo goes on.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ..traces import Trace

__all__ = ["DemoDiscovery", "run_demo_discovery", "shipped_discovery_dir"]


def shipped_discovery_dir() -> Path:
    """Where the example's shipped discovery verdicts live (``determine/`` and ``cluster/``)."""
    return Path(__file__).parent / "support_shop" / "discovery"


@dataclass(frozen=True, kw_only=True)
class DemoDiscovery:
    """What the discovery step did: either the aggregate's summary or why it was skipped."""

    run_dir: Path
    skipped: str | None
    """Why the step did not aggregate (None when it did)."""
    summary: str
    report_path: Path | None = None


def _copy(stage_src: Path, stage_dst: Path, keys: list[str]) -> list[str]:
    """Copy the shipped verdict of each key; returns the keys still missing."""
    missing = []
    (stage_dst / "verdicts").mkdir(parents=True, exist_ok=True)
    for key in keys:
        source = stage_src / f"{key}.verdict.json"
        if source.is_file():
            shutil.copyfile(source, stage_dst / "verdicts" / source.name)
        else:
            missing.append(key)
    return missing


def run_demo_discovery(
    traces: list[Trace], out_dir: str | Path, *, shipped: Path | None = None
) -> DemoDiscovery:
    """Run the discovery step into ``<out_dir>/discovery`` (rebuilt each time) over ``traces``.

    ``shipped`` is the folder of verdicts to use (default: the example's, :func:`shipped_discovery_dir`).
    """
    import orjson

    from ..discovery import aggregate_discovery, prep_cluster, prep_discovery

    run = Path(out_dir) / "discovery"
    if run.exists():
        shutil.rmtree(run)
    prep_discovery(traces, run, subject="support-shop")
    from ..discovery import open_discovery

    opened = open_discovery(run)
    shipped = shipped or shipped_discovery_dir()
    missing = _copy(shipped / "determine", opened.determine.root, opened.determine.keys())
    if missing:
        return DemoDiscovery(
            run_dir=run,
            skipped=(
                f"{len(missing)} of {len(opened.units)} determination verdicts are not shipped in "
                f"{shipped / 'determine'} yet (a runtime session writes them; see docs/discovery.md)"
            ),
            summary=f"discovery packets are ready in {opened.determine.root}",
        )
    prep_cluster(run)
    missing = _copy(shipped / "cluster", opened.cluster.root, opened.cluster.keys())
    if missing:
        return DemoDiscovery(
            run_dir=run,
            skipped=f"{len(missing)} cluster verdicts are not shipped in {shipped / 'cluster'} yet",
            summary=f"cluster packets are ready in {opened.cluster.root}",
        )
    out = aggregate_discovery(run, last_k=8)
    provenance = shipped / "PROVENANCE.json"
    who = "unknown readers"
    if provenance.is_file():
        who = str(orjson.loads(provenance.read_bytes()).get("judged_by", who))
    r = out.result
    top = ", ".join(f"{c.id} ({c.failures})" for c in r.categories[:5])
    return DemoDiscovery(
        run_dir=run,
        skipped=None,
        summary=(
            f"discovery over {r.traces} runs (verdicts by {who}): {r.determinations.failed} failed, "
            f"{len(r.categories)} emergent categories: {top}; coverage "
            + (f"{r.saturation.coverage:.2f}" if r.saturation.coverage is not None else "n/a")
        ),
        report_path=out.report_path,
    )
