"""The discovery run directory: PREP of the determiner and of the clusterer, re-derived from files.

```
<run>/discovery.json                     DiscoveryManifest: prompt version, pin, counts, input hash
<run>/inputs/traces.jsonl                the traces read (after sampling), canonical JSON per line
<run>/determine/packets/<key>.packet.json    one per distinct trajectory (what a reader reads)
<run>/determine/verdicts/<key>.verdict.json  one determination each (what a reader writes)
<run>/cluster/cluster.json               ClusterManifest: the batch size the notes were cut by
<run>/cluster/packets/<key>.packet.json      one per batch of first-thing-wrong notes
<run>/cluster/verdicts/<key>.verdict.json    one set of emergent categories each
<run>/aggregate/...                      written by AGGREGATE (discovery.json, criteria draft, handoff, report)
```

Each stage folder is a :class:`~helix.judging.PacketDirectory`, so the model transport, ``helix judge
batches`` and ``helix judge wait`` work on it unchanged. Everything is re-derived from ``inputs/``
and the determination verdicts: PREP and AGGREGATE share no state but the files, and re-running a
PREP on the same inputs rewrites nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from .._exceptions import InputFileError, MissingVerdictsError, UsageError
from .._util import canonical_json, write_atomic
from ..judging import PacketDirectory, Pin
from ..models import ModelSpec
from ..traces import Trace
from ._cluster import (
    CLUSTER_FORMAT_VERSION,
    ClusterFile,
    ClusterPacket,
    NoteView,
    cluster_key,
    example_cluster_verdict,
    parse_cluster_file,
)
from ._determine import (
    DeterminationFile,
    DeterminationPacket,
    determination_key,
    example_verdict,
    parse_determination_file,
)
from ._present import present_for_discovery
from ._texts import DISCOVERY_PROMPT_VERSION

__all__ = [
    "DEFAULT_BATCH_NOTES",
    "DISCOVERY_FORMAT_VERSION",
    "ClusterManifest",
    "ClusterPrep",
    "DeterminationUnit",
    "DiscoveryManifest",
    "DiscoveryPrep",
    "DiscoveryRun",
    "Note",
    "cluster_batches",
    "notes_of",
    "open_discovery",
    "prep_cluster",
    "prep_discovery",
    "read_clusters",
    "read_determinations",
    "read_notes",
    "verdict_schema",
]

DISCOVERY_FORMAT_VERSION = 1
_MANIFEST = "discovery.json"
_TRACES = "inputs/traces.jsonl"
_CLUSTER_MANIFEST = "cluster/cluster.json"
DEFAULT_BATCH_NOTES = 40


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DiscoveryManifest(_Model):
    """The content of ``discovery.json``."""

    version: int = DISCOVERY_FORMAT_VERSION
    helix_version: str
    prompt_version: str
    pin: Pin
    subject: str | None = None
    traces: int
    determination_units: int
    traces_sha256: str
    sample: dict[str, Any] | None = None
    """How the traces were sampled before PREP (strategy, n, seed), when they were."""


class ClusterManifest(_Model):
    """The content of ``cluster/cluster.json``."""

    version: int = CLUSTER_FORMAT_VERSION
    batch_notes: int
    notes: int
    packets: int


@dataclass(frozen=True, kw_only=True)
class DeterminationUnit:
    """One determiner packet: a distinct trajectory and every trace that shares it."""

    key: str
    trace_ids: tuple[str, ...]
    trajectory: dict[str, Any]

    @property
    def entries(self) -> int:
        """Transcript entries (the range a first-wrong index must fall in)."""
        return len(self.trajectory.get("transcript") or ())


@dataclass(frozen=True, kw_only=True)
class Note:
    """The first thing that went wrong in one failed determination: what the clusterer groups."""

    id: str
    """The determination's key: the same trajectory always gives the same note id."""
    trace_ids: tuple[str, ...]
    index: int
    agent: str
    note: str
    order: int
    """Position of the determination in the run (the order traces were read: the discovery curve's x)."""

    def view(self) -> NoteView:
        """What the clusterer sees."""
        return NoteView(id=self.id, agent=self.agent, note=self.note)


@dataclass(frozen=True, kw_only=True, eq=False)
class DiscoveryRun:
    """A discovery run re-derived from its inputs."""

    run_dir: Path
    manifest: DiscoveryManifest
    traces: tuple[Trace, ...]
    units: tuple[DeterminationUnit, ...]

    @property
    def determine(self) -> PacketDirectory:
        """The determiner's packet directory."""
        return PacketDirectory(self.run_dir / "determine")

    @property
    def cluster(self) -> PacketDirectory:
        """The clusterer's packet directory."""
        return PacketDirectory(self.run_dir / "cluster")

    @property
    def aggregate_dir(self) -> Path:
        """Where AGGREGATE writes."""
        return self.run_dir / "aggregate"


@dataclass(frozen=True, kw_only=True)
class DiscoveryPrep:
    """What :func:`prep_discovery` did."""

    run_dir: Path
    traces: int
    units: int
    shared: int
    written: int
    unchanged: int
    removed: int

    def describe(self) -> str:
        """A short human summary."""
        return (
            f"{self.run_dir}: {self.traces} traces -> {self.units} determiner packets ({self.written} written, "
            f"{self.unchanged} unchanged, {self.removed} removed; {self.shared} shared by identical traces)"
        )


@dataclass(frozen=True, kw_only=True)
class ClusterPrep:
    """What :func:`prep_cluster` did."""

    run_dir: Path
    determinations: int
    failed: int
    notes: int
    packets: int
    written: int
    removed: int

    def describe(self) -> str:
        """A short human summary."""
        return (
            f"{self.determinations} determinations, {self.failed} failed with a note -> {self.packets} cluster "
            f"packet(s) ({self.written} written, {self.removed} removed)"
        )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_if_changed(path: Path, data: bytes) -> bool:
    if path.is_file() and path.read_bytes() == data:
        return False
    write_atomic(path, data)
    return True


def _json(obj: BaseModel | dict[str, Any]) -> bytes:
    body = obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
    return orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n"


def _pin(model: ModelSpec | None) -> Pin:
    if model is None:
        return Pin(model=None, prompt_version=DISCOVERY_PROMPT_VERSION)
    if model.temperature != 0.0:
        raise UsageError(
            f"model {model.ref!r} has temperature {model.temperature!r}; discovery reads at temperature 0"
        )
    return Pin(
        model=model.model, provider=model.provider, temperature=0.0, prompt_version=DISCOVERY_PROMPT_VERSION
    )


def _units(traces: Sequence[Trace], prompt_version: str) -> tuple[DeterminationUnit, ...]:
    found: dict[str, tuple[dict[str, Any], list[str]]] = {}
    seen: set[str] = set()
    for t in traces:
        if t.id in seen:
            raise UsageError(f"trace id {t.id!r} appears more than once; trace ids must be unique in a run")
        seen.add(t.id)
        trajectory = present_for_discovery(t)
        key = determination_key(trajectory, prompt_version=prompt_version)
        if key in found:
            found[key][1].append(t.id)
        else:
            found[key] = (trajectory, [t.id])
    return tuple(
        DeterminationUnit(key=k, trace_ids=tuple(ids), trajectory=tr) for k, (tr, ids) in found.items()
    )


def _replace_packets(folder: PacketDirectory, packets: dict[str, bytes]) -> tuple[int, int, int]:
    written = unchanged = removed = 0
    for key, data in packets.items():
        if _write_if_changed(folder.packet_path(key), data):
            written += 1
        else:
            unchanged += 1
    for key in folder.keys():
        if key not in packets:
            folder.packet_path(key).unlink()
            removed += 1
    return written, unchanged, removed


def prep_discovery(
    traces: Iterable[Trace],
    run_dir: str | Path,
    *,
    model: ModelSpec | None = None,
    subject: str | None = None,
    sample: dict[str, Any] | None = None,
) -> DiscoveryPrep:
    """PREP the determiner: copy the traces into ``run_dir`` and write one packet per distinct trajectory.

    ``model`` pins the reader (None lets an agent runtime use its own and record it). Identical
    trajectories share a packet. Re-running on the same inputs rewrites nothing; packets of
    trajectories no longer in the inputs are removed, verdict files never are.
    """
    from .._version import __version__

    trace_list = list(traces)
    if not trace_list:
        raise UsageError("no traces to analyse; pass at least one trace")
    root = Path(run_dir).absolute()
    pin = _pin(model)
    data = b"".join(canonical_json(t.model_dump(mode="json")) + b"\n" for t in trace_list)
    units = _units(trace_list, DISCOVERY_PROMPT_VERSION)
    manifest = DiscoveryManifest(
        helix_version=__version__,
        prompt_version=DISCOVERY_PROMPT_VERSION,
        pin=pin,
        subject=subject,
        traces=len(trace_list),
        determination_units=len(units),
        traces_sha256=_sha256(data),
        sample=sample,
    )
    _write_if_changed(root / _TRACES, data)
    _write_if_changed(root / _MANIFEST, _json(manifest))
    run = open_discovery(root)
    if [u.key for u in run.units] != [u.key for u in units]:
        raise UsageError(
            f"the traces copied into {root / 'inputs'} do not re-derive the same packets; a trace holds a value "
            "that does not survive JSON. Report this as a Helix bug."
        )
    folder = run.determine
    schema = verdict_schema("determination")
    packets = {
        u.key: _json(
            DeterminationPacket(
                key=u.key,
                verdict_file=str(folder.verdict_path(u.key)),
                pin=pin,
                trajectory=u.trajectory,
                verdict_format={"example": example_verdict(u.key), "json_schema": schema},
                trace_ids=u.trace_ids,
            )
        )
        for u in units
    }
    written, unchanged, removed = _replace_packets(folder, packets)
    return DiscoveryPrep(
        run_dir=root,
        traces=len(trace_list),
        units=len(units),
        shared=sum(len(u.trace_ids) > 1 for u in units),
        written=written,
        unchanged=unchanged,
        removed=removed,
    )


def verdict_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of a determination or cluster verdict file."""
    model: type[BaseModel] = DeterminationFile if kind == "determination" else ClusterFile
    return model.model_json_schema()


def open_discovery(run_dir: str | Path) -> DiscoveryRun:
    """Re-derive every determiner unit and key of a discovery run from its copied traces alone."""
    root = Path(run_dir).absolute()
    path = root / _MANIFEST
    try:
        manifest = DiscoveryManifest.model_validate_json(path.read_bytes())
    except FileNotFoundError as exc:
        raise UsageError(
            f"{root} is not a discovery run (no {_MANIFEST}); run `helix discover prep` first"
        ) from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputFileError(
            f"not a discovery manifest ({err['msg']}); re-run `helix discover prep`",
            path=path,
            field=".".join(str(x) for x in err["loc"]) or None,
        ) from exc
    if manifest.version != DISCOVERY_FORMAT_VERSION:
        raise InputFileError(
            f"discovery format {manifest.version!r} is not supported", path=path, field="version"
        )
    traces_path = root / _TRACES
    try:
        data = traces_path.read_bytes()
    except FileNotFoundError as exc:
        raise InputFileError("missing from the run; re-run `helix discover prep`", path=traces_path) from exc
    if _sha256(data) != manifest.traces_sha256:
        raise InputFileError(
            "changed since PREP (its hash no longer matches discovery.json); re-run prep", path=traces_path
        )
    traces: list[Trace] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if line.strip():
            try:
                traces.append(Trace.model_validate_json(line))
            except ValidationError as exc:
                raise InputFileError(
                    f"not a valid trace ({exc.errors()[0]['msg']})", path=traces_path, line=number
                ) from exc
    units = _units(traces, manifest.prompt_version)
    return DiscoveryRun(run_dir=root, manifest=manifest, traces=tuple(traces), units=units)


def read_determinations(run: DiscoveryRun) -> list[tuple[DeterminationUnit, DeterminationFile]]:
    """Every determination, strictly parsed, in unit order; missing verdicts fail loudly, listed."""
    folder = run.determine
    missing = [u.key for u in run.units if not folder.verdict_path(u.key).is_file()]
    if missing:
        raise MissingVerdictsError(missing, verdict_dir=folder.verdict_dir)
    return [
        (u, parse_determination_file(folder.verdict_path(u.key), key=u.key, entries=u.entries))
        for u in run.units
    ]


def notes_of(determinations: Sequence[tuple[DeterminationUnit, DeterminationFile]]) -> list[Note]:
    """The first-thing-wrong notes of the failed determinations, in reading order."""
    notes: list[Note] = []
    for order, (unit, verdict) in enumerate(determinations):
        d = verdict.determination
        if d is None or d.result != "fail" or d.first_wrong is None:
            continue
        w = d.first_wrong
        notes.append(
            Note(
                id=unit.key, trace_ids=unit.trace_ids, index=w.index, agent=w.agent, note=w.note, order=order
            )
        )
    return notes


def cluster_batches(notes: Sequence[Note], batch_notes: int) -> list[tuple[Note, ...]]:
    """The notes cut into batches of at most ``batch_notes``, in reading order."""
    if batch_notes < 1:
        raise UsageError(f"--batch-notes must be >= 1, got {batch_notes!r}")
    return [tuple(notes[i : i + batch_notes]) for i in range(0, len(notes), batch_notes)]


def _cluster_packets(run: DiscoveryRun, notes: Sequence[Note], batch_notes: int) -> dict[str, ClusterPacket]:
    folder = run.cluster
    pin = run.manifest.pin
    out: dict[str, ClusterPacket] = {}
    for n, batch in enumerate(cluster_batches(notes, batch_notes), start=1):
        views = tuple(x.view() for x in batch)
        key = cluster_key(views, prompt_version=run.manifest.prompt_version)
        out[key] = ClusterPacket(
            key=key,
            verdict_file=str(folder.verdict_path(key)),
            pin=pin,
            batch=n,
            notes=views,
            verdict_format={
                "example": example_cluster_verdict(key, [v.id for v in views]),
                "json_schema": verdict_schema("cluster"),
            },
        )
    return out


def prep_cluster(run_dir: str | Path, *, batch_notes: int = DEFAULT_BATCH_NOTES) -> ClusterPrep:
    """PREP the clusterer: cut the failed determinations' notes into batches, one packet each.

    Needs every determination (fails listing the missing ones). Re-running with the same
    determinations and batch size rewrites nothing.
    """
    run = open_discovery(run_dir)
    determinations = read_determinations(run)
    notes = notes_of(determinations)
    failed = sum(
        1 for _, v in determinations if v.determination is not None and v.determination.result == "fail"
    )
    packets = _cluster_packets(run, notes, batch_notes)
    manifest = ClusterManifest(batch_notes=batch_notes, notes=len(notes), packets=len(packets))
    _write_if_changed(run.run_dir / _CLUSTER_MANIFEST, _json(manifest))
    run.cluster.packet_dir.mkdir(parents=True, exist_ok=True)
    written, _, removed = _replace_packets(run.cluster, {k: _json(p) for k, p in packets.items()})
    return ClusterPrep(
        run_dir=run.run_dir,
        determinations=len(determinations),
        failed=failed,
        notes=len(notes),
        packets=len(packets),
        written=written,
        removed=removed,
    )


def read_notes(run: DiscoveryRun) -> list[Note]:
    """The first-thing-wrong notes of the run's failed determinations, in reading order."""
    return notes_of(read_determinations(run))


def read_clusters(run: DiscoveryRun, notes: Sequence[Note]) -> list[tuple[ClusterPacket, ClusterFile]]:
    """Every cluster verdict, strictly parsed, in batch order; missing verdicts fail loudly, listed."""
    path = run.run_dir / _CLUSTER_MANIFEST
    try:
        manifest = ClusterManifest.model_validate_json(path.read_bytes())
    except FileNotFoundError as exc:
        raise UsageError(
            f"{run.run_dir} has no clustering yet; run `helix discover cluster --run {run.run_dir}`"
        ) from exc
    packets = _cluster_packets(run, notes, manifest.batch_notes)
    folder = run.cluster
    missing = [k for k in packets if not folder.verdict_path(k).is_file()]
    if missing:
        stale = [k for k in missing if not folder.packet_path(k).is_file()]
        if stale:
            raise UsageError(
                f"the determinations changed since `helix discover cluster` ({len(stale)} batch(es) have no packet); "
                f"run `helix discover cluster --run {run.run_dir}` again"
            )
        raise MissingVerdictsError(missing, verdict_dir=folder.verdict_dir)
    return [
        (p, parse_cluster_file(folder.verdict_path(k), key=k, note_ids=p.note_ids))
        for k, p in packets.items()
    ]
