"""Batches of packets for an agent runtime, sized to a context budget, and waiting for verdicts.

A parent session (Claude Code, Codex) fans out one subagent per batch. :func:`plan_batches` packs
packets into batches whose estimated size stays within ``budget_tokens``, covering every packet
exactly once (a packet larger than the budget gets a batch of its own, marked ``oversize``).
:func:`write_batches` writes ``<dir>/batches/batch-NNNN.json`` (the packet and verdict paths of one
batch) and ``<dir>/batches/index.json``. :func:`verdict_progress` counts the verdict files.

Token estimate (documented approximation): a packet costs ``ceil(bytes / 4)`` tokens for its file
(:data:`BYTES_PER_TOKEN`; JSON of English text runs about 3.5 to 4.5 bytes per token in current
tokenizers, so this errs a little high) plus :data:`REPLY_TOKENS` for the verdict the subagent
writes. Packing is first-fit decreasing (largest first, ties by key), so the plan is deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict

from .._exceptions import UsageError
from .._util import write_atomic
from ._packet_dir import PacketDirectory

__all__ = [
    "BATCH_FORMAT_VERSION",
    "BYTES_PER_TOKEN",
    "REPLY_TOKENS",
    "Batch",
    "BatchFile",
    "BatchPlan",
    "VerdictProgress",
    "estimate_tokens",
    "packet_kind",
    "plan_batches",
    "verdict_progress",
    "write_batches",
]

BATCH_FORMAT_VERSION = 1
BYTES_PER_TOKEN = 4
REPLY_TOKENS = 600
"""Tokens reserved per packet for the verdict the subagent writes (critique and result)."""


def estimate_tokens(size_bytes: int) -> int:
    """The estimated context cost of one packet file of ``size_bytes`` (see the module docstring)."""
    return math.ceil(size_bytes / BYTES_PER_TOKEN) + REPLY_TOKENS


@dataclass(frozen=True, kw_only=True)
class Batch:
    """One subagent's share: packet keys and their summed estimate."""

    index: int
    keys: tuple[str, ...]
    tokens: int
    oversize: bool
    """One packet alone exceeds the budget (it still gets judged, in a batch of its own)."""


def plan_batches(sizes: Sequence[tuple[str, int]], budget_tokens: int) -> list[Batch]:
    """Pack ``(key, tokens)`` pairs into batches of at most ``budget_tokens`` (first-fit decreasing).

    Every key lands in exactly one batch; keys must be unique. Batches are numbered from 1 in the
    order they were opened; keys inside a batch are sorted.
    """
    if budget_tokens < 1:
        raise UsageError(f"the token budget must be >= 1, got {budget_tokens!r}")
    keys = [k for k, _ in sizes]
    if len(set(keys)) != len(keys):
        raise UsageError("packet keys must be unique to be batched")
    bins: list[list[tuple[str, int]]] = []
    loads: list[int] = []
    for key, tokens in sorted(sizes, key=lambda kv: (-kv[1], kv[0])):
        if tokens < 0:
            raise UsageError(f"packet {key!r} has a negative size {tokens!r}")
        for i, load in enumerate(loads):
            if load + tokens <= budget_tokens:
                bins[i].append((key, tokens))
                loads[i] += tokens
                break
        else:
            bins.append([(key, tokens)])
            loads.append(tokens)
    return [
        Batch(
            index=i,
            keys=tuple(sorted(k for k, _ in b)),
            tokens=load,
            oversize=load > budget_tokens,
        )
        for i, (b, load) in enumerate(zip(bins, loads, strict=True), start=1)
    ]


class BatchFile(BaseModel):
    """The content of ``batches/batch-NNNN.json``: what one subagent judges."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = BATCH_FORMAT_VERSION
    batch: int
    of: int
    budget_tokens: int
    estimated_tokens: int
    oversize: bool
    kind: str
    """The packet kind (``trajectory``, ``criterion``, ``determination``, ``cluster``, ...): which reader to send."""
    packets: tuple[str, ...]
    """Absolute paths of the packet files to judge: read each, follow its instructions."""
    verdicts: tuple[str, ...]
    """The verdict file each packet asks for, in the same order."""


@dataclass(frozen=True, kw_only=True)
class BatchPlan:
    """What :func:`write_batches` wrote."""

    directory: Path
    batches: tuple[Path, ...]
    packets: int
    already_judged: int
    budget_tokens: int
    tokens: int
    oversize: int

    def describe(self) -> str:
        """One line for the terminal."""
        extra = f", {self.oversize} over the budget alone" if self.oversize else ""
        return (
            f"{self.packets} packet(s) in {len(self.batches)} batch(es) of at most {self.budget_tokens} "
            f"estimated tokens ({self.tokens} in all{extra}); {self.already_judged} already have verdicts"
        )


def packet_kind(path: str | Path) -> str:
    """A packet file's kind: its ``kind`` field, or for trajectory packets ``trajectory``/``criterion`` by axis."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return "unknown"
    if not isinstance(data, dict):
        return "unknown"
    if isinstance(data.get("kind"), str):
        return str(data["kind"])
    return "criterion" if data.get("axis") == "criterion" else "trajectory"


def write_batches(directory: str | Path, *, budget_tokens: int, include_judged: bool = False) -> BatchPlan:
    """Plan and write the batches of a packet directory (by default only packets without a verdict).

    Batch files of an earlier plan are replaced, so the folder always holds one plan.
    """
    folder = PacketDirectory(Path(directory).absolute())
    keys = folder.keys()
    if not keys:
        raise UsageError(f"{folder.packet_dir} holds no packets; prepare them first")
    done = folder.verdict_keys()
    todo = keys if include_judged else [k for k in keys if k not in done]
    sizes = [(k, estimate_tokens(folder.packet_path(k).stat().st_size)) for k in todo]
    plan = plan_batches(sizes, budget_tokens)
    out = folder.root / "batches"
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("batch-*.json"):
        stale.unlink()
    written: list[Path] = []
    for b in plan:
        body = BatchFile(
            batch=b.index,
            of=len(plan),
            budget_tokens=budget_tokens,
            estimated_tokens=b.tokens,
            oversize=b.oversize,
            kind=packet_kind(folder.packet_path(b.keys[0])),
            packets=tuple(str(folder.packet_path(k)) for k in b.keys),
            verdicts=tuple(str(folder.verdict_path(k)) for k in b.keys),
        )
        path = out / f"batch-{b.index:04d}.json"
        write_atomic(path, orjson.dumps(body.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n")
        written.append(path)
    index = {
        "version": BATCH_FORMAT_VERSION,
        "budget_tokens": budget_tokens,
        "token_estimate": f"ceil(packet bytes / {BYTES_PER_TOKEN}) + {REPLY_TOKENS} per packet",
        "batches": [p.name for p in written],
        "kinds": sorted({packet_kind(folder.packet_path(b.keys[0])) for b in plan}),
        "packets": len(todo),
    }
    write_atomic(out / "index.json", orjson.dumps(index, option=orjson.OPT_INDENT_2) + b"\n")
    return BatchPlan(
        directory=folder.root,
        batches=tuple(written),
        packets=len(todo),
        already_judged=len(keys) - len(todo),
        budget_tokens=budget_tokens,
        tokens=sum(b.tokens for b in plan),
        oversize=sum(b.oversize for b in plan),
    )


@dataclass(frozen=True, kw_only=True)
class VerdictProgress:
    """How many packets of a directory have a verdict file."""

    total: int
    done: int
    missing: tuple[str, ...]

    @property
    def complete(self) -> bool:
        """Every packet has a verdict file."""
        return not self.missing


def verdict_progress(directory: str | Path) -> VerdictProgress:
    """Count the packets of ``directory`` that have a verdict file."""
    folder = PacketDirectory(Path(directory).absolute())
    keys = folder.keys()
    missing = tuple(folder.missing())
    return VerdictProgress(total=len(keys), done=len(keys) - len(missing), missing=missing)
