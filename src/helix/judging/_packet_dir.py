"""A packet directory, and the model transport over any packet kind that lives in one.

A *packet directory* is the file protocol's unit of dispatch, whatever is judged::

    <dir>/packets/<key>.packet.json     what a judge reads (one per judging unit)
    <dir>/verdicts/<key>.verdict.json   what a judge writes
    <dir>/receipts.jsonl                one receipt per unit judged by a provider

A trajectory run directory is one; each discovery stage (``determine/``, ``cluster/``) is one.
:func:`judge_packet_directory` judges every packet without a verdict through the one engine
(:func:`~helix.judging.judge_packet`) for any :class:`DirectoryKind`: the kind reads and checks a
packet file against its key, and encodes the verdict file (scored or unscored). The writing,
receipts, adaptive concurrency and pass summary are the trajectory transport's own (``_transport``),
so the trajectory model transport is this function with the trajectory kind plus its run's units;
it can be re-expressed with it once the engine work settles.

The agent-runtime kit works on the same layout (:mod:`~helix.judging` ``plan_batches``,
``verdict_progress``), so one ``helix judge batches`` / ``helix judge wait`` serves every kind.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

import anyio
import orjson
from pydantic import BaseModel

from .._exceptions import InputFileError, UsageError
from ..models import (
    RECEIPTS_FILE,
    AdaptiveLimiter,
    Limiter,
    Model,
    ModelSpec,
    ReceiptLog,
    price_table_hash,
    read_receipt_log,
)
from ._engine import Judgment, PacketKind, judge_packet
from ._packets import Pin
from ._transport import (
    ModelJudgeProgress,
    ModelJudgeSummary,
    PassTally,
    Pending,
    VerdictWriter,
    _is_unscored,
    receipt_line,
    report,
)

__all__ = [
    "PACKET_SUFFIX",
    "VERDICT_SUFFIX",
    "DirectoryKind",
    "PacketDirectory",
    "check_model_pin",
    "judge_packet_directory",
    "read_checked_packet",
]

PACKET_SUFFIX = ".packet.json"
VERDICT_SUFFIX = ".verdict.json"

P = TypeVar("P")
R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)


def read_checked_packet(
    path: str | Path, key: str, model: type[M], key_of: Callable[[M], str], *, remedy: str
) -> M:
    """Read a packet file into ``model`` and check that its content hashes to ``key``.

    ``key_of`` re-derives the key from the packet's judged content; ``remedy`` is the command that
    rewrites the packet. Raises :class:`~helix.InputFileError` for a missing, broken or edited file.
    """
    try:
        data: Any = orjson.loads(Path(path).read_bytes())
        packet = model.model_validate(data)
    except FileNotFoundError:
        raise InputFileError(f"packet file is missing; {remedy}", path=path) from None
    except (orjson.JSONDecodeError, ValueError) as exc:
        raise InputFileError(f"not a {model.__name__} packet ({exc}); {remedy}", path=path) from exc
    actual = key_of(packet)
    if getattr(packet, "key", None) != key or actual != key:
        raise InputFileError(
            f"key {key!r} does not match the packet's content (which hashes to {actual!r}): the file was "
            f"edited; {remedy}",
            path=path,
            field="key",
        )
    return packet


class DirectoryKind(PacketKind[P, R], Protocol[P, R]):
    """A packet kind whose packets and verdicts are files in a :class:`PacketDirectory`."""

    def read_packet(self, path: str, key: str) -> P:
        """Read the packet file of unit ``key`` and check its content hashes to the key.

        Raises :class:`~helix.InputFileError` (path, field, fix) for a missing, broken or edited packet.
        """
        ...

    def verdict_bytes(self, judgment: Judgment[R], *, model: str, temperature: float) -> bytes:
        """The verdict file of a judgment: the scored verdict, or an unscored record naming the failure."""
        ...


def _names(directory: Path) -> set[str]:
    try:
        return {entry.name for entry in os.scandir(directory)}
    except FileNotFoundError:
        return set()


@dataclass(frozen=True)
class PacketDirectory:
    """A folder with ``packets/`` and ``verdicts/``: what is to be judged and what was."""

    root: Path

    @property
    def packet_dir(self) -> Path:
        """Where the packets are."""
        return self.root / "packets"

    @property
    def verdict_dir(self) -> Path:
        """Where the verdict files go."""
        return self.root / "verdicts"

    def packet_path(self, key: str) -> Path:
        """The packet file of unit ``key``."""
        return self.packet_dir / f"{key}{PACKET_SUFFIX}"

    def verdict_path(self, key: str) -> Path:
        """The verdict file of unit ``key``."""
        return self.verdict_dir / f"{key}{VERDICT_SUFFIX}"

    def keys(self) -> list[str]:
        """The keys of every packet, sorted."""
        return sorted(n[: -len(PACKET_SUFFIX)] for n in _names(self.packet_dir) if n.endswith(PACKET_SUFFIX))

    def verdict_keys(self) -> set[str]:
        """The keys that have a verdict file."""
        return {n[: -len(VERDICT_SUFFIX)] for n in _names(self.verdict_dir) if n.endswith(VERDICT_SUFFIX)}

    def missing(self) -> list[str]:
        """The keys of packets without a verdict file, sorted."""
        done = self.verdict_keys()
        return [k for k in self.keys() if k not in done]


def check_model_pin(pin: Pin | None, spec: ModelSpec, *, where: str | Path) -> None:
    """Refuse a model the packets were not prepared for, and any temperature but 0."""
    if (
        pin is not None
        and pin.model is not None
        and (pin.model != spec.model or (pin.provider or spec.provider) != spec.provider)
    ):
        raise UsageError(
            f"{where} was prepared for model {(pin.provider or '?')}/{pin.model}, not {spec.ref!r}; "
            "judge it with the pinned model, or prepare it again with the new model"
        )
    if spec.temperature != 0.0:
        raise UsageError(
            f"model {spec.ref!r} has temperature {spec.temperature!r}; every judgment runs at temperature 0"
        )


def _pending(directory: PacketDirectory, *, rejudge_unscored: bool) -> Pending:
    done = directory.verdict_keys()
    keys: list[str] = []
    existing = still_unscored = 0
    for key in directory.keys():
        if key in done:
            unscored = _is_unscored(str(directory.verdict_path(key)))
            if not (rejudge_unscored and unscored):
                existing += 1
                still_unscored += unscored
                continue
        keys.append(key)
    return Pending(keys=keys, existing=existing, still_unscored=still_unscored)


async def judge_packet_directory(
    directory: str | Path,
    kind: DirectoryKind[P, R],
    model: Model,
    *,
    pin: Pin | None = None,
    concurrency: int = 16,
    adaptive: bool = True,
    on_progress: Callable[[ModelJudgeProgress], None] | None = None,
    rejudge_unscored: bool = False,
    limiter: Limiter | None = None,
) -> ModelJudgeSummary:
    """Judge every packet of ``directory`` that has no verdict yet with ``model``, through the engine.

    ``pin`` is what the packets were prepared for (checked against ``model.spec``). Verdicts (or
    unscored records naming the failure kind) go to ``verdicts/``, one receipt per unit to
    ``receipts.jsonl``, each HTTP attempt recorded before it is sent. Never raises for a provider
    failure or a bad answer; an edited packet (its content no longer hashes to its key) ends the
    pass with :class:`~helix.InputFileError`. The caller closes ``model``.
    """
    if concurrency < 1:
        raise UsageError(f"concurrency must be >= 1, got {concurrency!r}")
    t0 = time.perf_counter()
    folder = PacketDirectory(Path(directory).absolute())
    if not folder.packet_dir.is_dir():
        raise UsageError(f"{folder.root} has no packets/ folder; prepare the packets first")
    spec = model.spec
    check_model_pin(pin, spec, where=folder.root)
    pending = _pending(folder, rejudge_unscored=rejudge_unscored)
    unsettled = len(read_receipt_log(folder.root).unsettled) if (folder.root / RECEIPTS_FILE).is_file() else 0
    folder.verdict_dir.mkdir(parents=True, exist_ok=True)
    log = ReceiptLog(folder.root)
    writer = VerdictWriter(log)
    gate = limiter if limiter is not None else AdaptiveLimiter(concurrency, adaptive=adaptive)
    prices = price_table_hash()
    tally = PassTally()
    total = len(pending.keys)

    async def unit(key: str) -> None:
        started = datetime.now(UTC)
        packet = kind.read_packet(str(folder.packet_path(key)), key)

        def attempt(call: int, n: int) -> None:
            log.record_attempt(key, call, n)

        judgment: Judgment[R] = await judge_packet(kind, packet, model, limiter=gate, on_attempt=attempt)
        unscored = judgment.unscored
        line = receipt_line(
            key=key,
            spec=spec,
            calls=judgment.calls,
            started_at=started,
            failure=unscored.failure if unscored else None,
            error=unscored.error if unscored else None,
            prices=prices,
        )
        served = judgment.calls.served_model or spec.model
        data = kind.verdict_bytes(judgment, model=served, temperature=spec.temperature)
        writer.submit(line, str(folder.verdict_path(key)), data)
        tally.add(judgment, judgment.calls.known_cost)
        report(on_progress, tally, key, judgment.status, total)

    queue = iter(pending.keys)

    async def worker() -> None:
        for key in queue:
            await unit(key)

    try:
        async with anyio.create_task_group() as tg:
            for _ in range(min(concurrency, total)):
                tg.start_soon(worker)
    finally:
        try:
            writer.close()
        finally:
            log.close()
    stats = gate.rules.stats() if isinstance(gate, AdaptiveLimiter) else None
    return tally.summary(
        run_dir=folder.root,
        spec=spec,
        pending=pending,
        wall_s=time.perf_counter() - t0,
        unsettled=unsettled,
        mode="live",
        limiter=stats,
    )
