"""Reading a discovery stage with an LLM provider, through the one engine and the packet-directory transport."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from .._exceptions import UsageError
from ..judging import ModelJudgeProgress, ModelJudgeSummary, judge_packet_directory
from ..models import Model
from ._cluster import Clustering
from ._determine import Determining
from ._run import open_discovery

__all__ = ["Stage", "read_stage_with_model"]

Stage = Literal["determine", "cluster"]


async def read_stage_with_model(
    run_dir: str | Path,
    stage: Stage,
    model: Model,
    *,
    concurrency: int = 8,
    on_progress: Callable[[ModelJudgeProgress], None] | None = None,
    rejudge_unscored: bool = False,
) -> ModelJudgeSummary:
    """Have ``model`` answer every packet of ``stage`` that has no verdict (temperature 0, pinned).

    The run's pin must match ``model.spec`` when the run was prepared with a model. Unscored
    answers are recorded as such (never as a pass or a fail); the caller closes ``model``.
    """
    run = open_discovery(run_dir)
    if stage not in ("determine", "cluster"):
        raise UsageError(f"unknown stage {stage!r}; use 'determine' or 'cluster'")
    pin, done = run.manifest.pin, rejudge_unscored
    if stage == "determine":
        kind_d = Determining()
        return await judge_packet_directory(
            run.determine.root,
            kind_d,
            model,
            pin=pin,
            concurrency=concurrency,
            on_progress=on_progress,
            rejudge_unscored=done,
        )
    kind_c = Clustering()
    return await judge_packet_directory(
        run.cluster.root,
        kind_c,
        model,
        pin=pin,
        concurrency=concurrency,
        on_progress=on_progress,
        rejudge_unscored=done,
    )
