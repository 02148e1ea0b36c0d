"""The cell schedule (pure), the cache identity, and the cached/to-run/blocked plan of a run directory.

The cache key of a cell hashes the campaign identity (caller commit, config, ``dispatch_ref``, the
scorers' names) with the scenario's full content, the repetition and the seed. A cell is cached
when its result file exists (see :mod:`._paths` for the layout); the cache index only makes
loading the results cheap, and only for files it vouches for (see :mod:`._index`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._exceptions import UsageError
from .._util import canonical_json, content_hash
from ._index import file_stat, read_index
from ._model import Scenario
from ._paths import CellPaths

__all__ = [
    "CampaignPlan",
    "CellScheduleSlot",
    "build_cell_schedule",
    "campaign_identity",
    "cell_id_for",
    "plan_campaign_run",
]

_SEED_MASK = (1 << 63) - 1


@dataclass(frozen=True, kw_only=True, slots=True)
class CellScheduleSlot:
    """One cell of the design: its position, scenario, repetition (0-based), id and seed."""

    index: int
    scenario: Scenario
    rep: int
    cell_id: str
    seed: int

    @property
    def scenario_id(self) -> str:
        return self.scenario.id


def cell_id_for(scenario_id: str, rep: int) -> str:
    """The id of a cell: ``<scenario_id>@r<rep>`` (``@`` never occurs in a scenario id)."""
    return f"{scenario_id}@r{rep}"


def _cell_seed(seed: int, group: str, rep: int) -> int:
    digest = hashlib.sha256(f"helix.cell-seed\x00{seed}\x00{group}\x00{rep}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & _SEED_MASK


def build_cell_schedule(scenarios: Sequence[Scenario], seed: int, reps: int) -> tuple[CellScheduleSlot, ...]:
    """One slot per (scenario, repetition), scenario-major, in the caller's scenario order.

    Pure: touches no filesystem. A cell's seed is derived from ``seed``, the scenario's
    ``seed_group`` (or its id when it has none) and the repetition, so scenarios of one seed group
    share per-replicate seeds and a given cell keeps its seed when other scenarios are added.
    """
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise UsageError(
            f"reps must be a positive integer, got {reps!r}; use reps=1 for one run per scenario"
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise UsageError(f"seed must be an integer, got {seed!r}")
    seen: set[str] = set()
    for s in scenarios:
        if not isinstance(s, Scenario):
            raise UsageError(f"scenarios must be Scenario objects, got {type(s).__name__}: {s!r:.80}")
        if s.id in seen:
            raise UsageError(f"scenario id {s.id!r} appears more than once; give every scenario a unique id")
        seen.add(s.id)
    slots: list[CellScheduleSlot] = []
    seeds: dict[tuple[str, int], int] = {}
    for s in scenarios:
        group = s.seed_group if s.seed_group is not None else f"scenario:{s.id}"
        for rep in range(reps):
            cell_seed = seeds.get((group, rep))
            if cell_seed is None:
                cell_seed = seeds[(group, rep)] = _cell_seed(seed, group, rep)
            slots.append(
                CellScheduleSlot(
                    index=len(slots), scenario=s, rep=rep, cell_id=cell_id_for(s.id, rep), seed=cell_seed
                )
            )
    return tuple(slots)


def campaign_identity(
    *,
    commit: str,
    config: Mapping[str, Any] | None = None,
    dispatch_ref: str | None = None,
    scorers: Iterable[str] = (),
) -> str:
    """The hash every cell's cache key starts from: caller commit, config, ``dispatch_ref`` and scorers.

    ``commit`` is required and non-empty: a cache not keyed on the code that produced it would
    serve stale results after a change. Set ``dispatch_ref`` when behaviour changes without a new
    commit (a different model endpoint, a prompt file read at run time).
    """
    if not isinstance(commit, str) or not commit.strip():
        raise UsageError(
            f"commit must be a non-empty string naming the caller's code version, got {commit!r}; "
            "pass e.g. the output of `git rev-parse HEAD`"
        )
    try:
        return content_hash(
            {
                "commit": commit,
                "config": dict(config or {}),
                "dispatch_ref": dispatch_ref,
                # "judges" is the key version 1 hashed: kept, so caches written before the rename
                # of judges to scorers stay valid (their cell files are read and upgraded).
                "judges": sorted(scorers),
            },
            length=32,
        )
    except TypeError as exc:
        raise UsageError(
            f"config must be JSON-serializable (it is part of the cache identity): {exc}"
        ) from exc


def _scenario_hash(scenario: Scenario) -> str:
    return hashlib.sha256(canonical_json(scenario.model_dump(mode="json"))).hexdigest()


def cell_cache_keys(identity: str, slots: Sequence[CellScheduleSlot]) -> list[str]:
    """The cache key of every slot (scenario content hashed once per scenario)."""
    by_scenario: dict[str, str] = {}
    keys: list[str] = []
    for slot in slots:
        sh = by_scenario.get(slot.scenario.id)
        if sh is None:
            sh = by_scenario[slot.scenario.id] = _scenario_hash(slot.scenario)
        keys.append(
            hashlib.sha256(f"{identity}\x00{sh}\x00{slot.rep}\x00{slot.seed}".encode()).hexdigest()[:32]
        )
    return keys


@dataclass(frozen=True, kw_only=True)
class CampaignPlan:
    """How a run directory stands against a design.

    ``cached``: a finished result exists (not dispatched again). ``to_run``: never run, or failed
    and due for another try. ``blocked``: failed before and ``retry_failed`` is off, so the durable
    failure stands. ``keys`` holds every slot's cache key (same order as ``slots``).
    """

    run_dir: Path
    identity: str
    slots: tuple[CellScheduleSlot, ...]
    keys: tuple[str, ...]
    cached: tuple[CellScheduleSlot, ...]
    to_run: tuple[CellScheduleSlot, ...]
    blocked: tuple[CellScheduleSlot, ...]
    indexed: Mapping[tuple[str, str], bytes] = field(default_factory=dict, repr=False, compare=False)
    """Result bytes from the cache index, by (cell_id, cache_key), for the cached cells whose file is
    unchanged since it was indexed (same size, modification time and inode)."""
    index_hashes: Mapping[tuple[str, str], str] = field(default_factory=dict, repr=False, compare=False)
    """The indexed content hash of the other cached cells that have a line, to compare with the file."""
    cache_problems: tuple[str, ...] = ()
    """What the cache check found: result files gone although the index had them (those cells run)."""

    @property
    def total(self) -> int:
        return len(self.slots)


def plan_campaign_run(
    run_dir: str | Path,
    scenarios: Sequence[Scenario],
    *,
    seed: int,
    reps: int,
    commit: str,
    config: Mapping[str, Any] | None = None,
    dispatch_ref: str | None = None,
    scorers: Iterable[str] = (),
    retry_failed: bool = True,
) -> CampaignPlan:
    """Classify every cell of the design as cached, to run, or blocked, by reading the durable cache.

    ``scorers`` are the scorer names (they are part of the cache identity, as in :func:`run_campaign`).
    """
    root = Path(run_dir)
    slots = build_cell_schedule(scenarios, seed, reps)
    identity = campaign_identity(commit=commit, config=config, dispatch_ref=dispatch_ref, scorers=scorers)
    keys = cell_cache_keys(identity, slots)
    index = read_index(root, identity)
    indexed: dict[tuple[str, str], bytes] = {}
    index_hashes: dict[tuple[str, str], str] = {}
    problems: list[str] = []
    cached: list[CellScheduleSlot] = []
    to_run: list[CellScheduleSlot] = []
    blocked: list[CellScheduleSlot] = []
    exists = os.path.exists
    run_dir_str = os.fspath(root)  # once, not per cell: Path.__fspath__ is a cost at 100k cells
    for slot, key in zip(slots, keys, strict=True):
        paths = CellPaths.of(run_dir_str, slot.cell_id, key)
        entry = index.get((slot.cell_id, key))
        stat = file_stat(paths.result)
        if stat is not None:
            cached.append(slot)
            if entry is not None:
                if entry.stat == stat:
                    indexed[(slot.cell_id, key)] = entry.payload
                else:
                    index_hashes[(slot.cell_id, key)] = entry.sha256
            continue
        if entry is not None:
            problems.append(
                f"cell {slot.cell_id}: its result file is gone (the cache index still had it); it runs again"
            )
        if not retry_failed and exists(paths.failed):
            blocked.append(slot)
        else:
            to_run.append(slot)
    return CampaignPlan(
        run_dir=root,
        identity=identity,
        slots=slots,
        keys=tuple(keys),
        cached=tuple(cached),
        to_run=tuple(to_run),
        blocked=tuple(blocked),
        indexed=indexed,
        index_hashes=index_hashes,
        cache_problems=tuple(problems),
    )
