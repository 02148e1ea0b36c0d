"""The run directory of the dispatch protocol, and PREP.

```
<run>/run.json                      RunManifest: axis, prompt version, pin, counts, input hashes
<run>/inputs/traces.jsonl           the traces, one canonical JSON object per line
<run>/inputs/criteria.yaml          the criteria matrix
<run>/packets/<key>.packet.json     one per LLM judging unit (what a judge reads)
<run>/verdicts/<key>.verdict.json   one per judging unit (what a judge writes; code units at PREP)
```

Everything else is re-derived from ``inputs/`` alone (:func:`open_run`): PREP and AGGREGATE share no
state but the files. Re-running PREP on the same inputs rewrites nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from .._exceptions import CodeCheckError, InputFileError, RunError, UsageError
from .._util import canonical_json, write_atomic
from ..models import ModelSpec
from ..traces import Trace
from ._checks import run_code_check
from ._criteria import CriteriaMatrix
from ._loader import dump_criteria, load_criteria
from ._packets import Packet, Pin, build_packet, read_packet, write_packet
from ._texts import PROMPT_VERSION
from ._units import JudgingUnit, UnitAxis, build_units
from ._verdict import CriterionVerdict, JudgeInfo, VerdictFile

__all__ = [
    "RUN_FORMAT_VERSION",
    "JudgingRun",
    "PrepSummary",
    "RunCounts",
    "RunInputs",
    "RunManifest",
    "list_packets",
    "missing_verdict_keys",
    "open_run",
    "prep_run",
]

# Bump when a run.json field changes meaning or is removed.
RUN_FORMAT_VERSION = 1

_MANIFEST = "run.json"
_TRACES = "inputs/traces.jsonl"
_CRITERIA = "inputs/criteria.yaml"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunCounts(_Model):
    """How much there is to judge."""

    traces: int
    llm_criteria: int
    code_criteria: int
    llm_units: int
    code_units: int


class RunInputs(_Model):
    """SHA-256 of the copied input files, so AGGREGATE notices inputs edited after PREP."""

    traces_sha256: str
    criteria_sha256: str


class RunManifest(_Model):
    """The content of ``run.json``."""

    version: int = RUN_FORMAT_VERSION
    helix_version: str
    axis: UnitAxis
    prompt_version: str
    pin: Pin
    counts: RunCounts
    inputs: RunInputs


@dataclass(frozen=True, kw_only=True)
class PrepSummary:
    """What PREP did."""

    run_dir: Path
    axis: UnitAxis
    prompt_version: str
    traces: int
    llm_units: int
    code_units: int
    shared_units: int
    """Units that cover more than one trace (identical content, judged once)."""
    packets_written: int
    packets_unchanged: int
    packets_removed: int
    """Packets of an earlier PREP whose unit no longer exists."""
    code_verdicts_written: int
    code_unscored: int

    def describe(self) -> str:
        """A short human summary."""
        return (
            f"{self.run_dir}: {self.traces} traces, axis {self.axis}, prompt {self.prompt_version}: "
            f"{self.llm_units} LLM units ({self.packets_written} packets written, "
            f"{self.packets_unchanged} unchanged, {self.packets_removed} removed), "
            f"{self.code_units} code units ({self.code_unscored} unscored), "
            f"{self.shared_units} units shared by identical traces"
        )


@dataclass(frozen=True, kw_only=True, eq=False)
class JudgingRun:
    """A run directory re-derived from its inputs: every unit and key."""

    run_dir: Path
    manifest: RunManifest
    traces: tuple[Trace, ...]
    matrix: CriteriaMatrix
    units: tuple[JudgingUnit, ...]

    @property
    def packet_dir(self) -> Path:
        """Where the packets are."""
        return self.run_dir / "packets"

    @property
    def verdict_dir(self) -> Path:
        """Where the verdict files go."""
        return self.run_dir / "verdicts"

    def packet_path(self, key: str) -> Path:
        """The packet file of unit ``key``."""
        return self.packet_dir / f"{key}.packet.json"

    def verdict_path(self, key: str) -> Path:
        """The verdict file of unit ``key``."""
        return self.verdict_dir / f"{key}.verdict.json"

    def unit(self, key: str) -> JudgingUnit:
        """The unit with this key (KeyError when absent)."""
        for u in self.units:
            if u.key == key:
                return u
        raise KeyError(key)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _traces_bytes(traces: Iterable[Trace]) -> bytes:
    return b"".join(canonical_json(t.model_dump(mode="json")) + b"\n" for t in traces)


def _parse_traces(data: bytes, path: Path) -> list[Trace]:
    traces = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            traces.append(Trace.model_validate_json(line))
        except ValidationError as exc:
            raise InputFileError(
                f"not a valid trace ({exc.errors()[0]['msg']}); re-run prep to rewrite the inputs",
                path=path,
                line=number,
            ) from exc
    return traces


def _write_if_changed(path: Path, data: bytes) -> bool:
    if path.is_file() and path.read_bytes() == data:
        return False
    write_atomic(path, data)
    return True


def _json_bytes(obj: BaseModel) -> bytes:
    return orjson.dumps(obj.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n"


def _pin(model: ModelSpec | None) -> Pin:
    if model is None:
        return Pin(model=None)
    if model.temperature != 0.0:
        raise UsageError(
            f"judge model {model.ref!r} has temperature {model.temperature!r}; every judgment runs at "
            "temperature 0, so pass a ModelSpec with temperature=0.0"
        )
    return Pin(model=model.model, provider=model.provider, temperature=0.0)


def _code_verdict(unit: JudgingUnit, matrix: CriteriaMatrix, trace: Trace) -> VerdictFile:
    judge = JudgeInfo(runtime="code")
    verdicts: list[CriterionVerdict] = []
    for cid in unit.criterion_ids:
        try:
            verdicts.append(run_code_check(matrix.by_id(cid), trace))
        except CodeCheckError as exc:
            return VerdictFile(key=unit.key, status="unscored", error=str(exc), judge=judge)
    return VerdictFile(key=unit.key, verdicts=tuple(verdicts), judge=judge)


def prep_run(
    traces: Iterable[Trace],
    matrix: CriteriaMatrix,
    run_dir: str | Path,
    *,
    unit: UnitAxis = "matrix",
    model: ModelSpec | None = None,
) -> PrepSummary:
    """PREP: copy the inputs into ``run_dir``, write a packet per LLM unit and decide the code units.

    ``model`` pins the judge model into every packet (None lets an agent runtime use its own and
    record it). Unchanged files are not rewritten, so PREP on the same inputs is idempotent; packets
    of units that no longer exist are removed, verdict files are never removed.
    """
    from .._version import __version__

    trace_list = list(traces)
    units = build_units(trace_list, matrix, axis=unit)
    pin = _pin(model)
    root = Path(run_dir).absolute()
    traces_data = _traces_bytes(trace_list)
    criteria_data = dump_criteria(matrix).encode("utf-8")

    _write_if_changed(root / _TRACES, traces_data)
    _write_if_changed(root / _CRITERIA, criteria_data)
    llm_units = [u for u in units if u.kind == "llm"]
    code_units = [u for u in units if u.kind == "code"]
    manifest = RunManifest(
        helix_version=__version__,
        axis=unit,
        prompt_version=PROMPT_VERSION,
        pin=pin,
        counts=RunCounts(
            traces=len(trace_list),
            llm_criteria=len(matrix.llm_criteria),
            code_criteria=len(matrix.code_criteria),
            llm_units=len(llm_units),
            code_units=len(code_units),
        ),
        inputs=RunInputs(traces_sha256=_sha256(traces_data), criteria_sha256=_sha256(criteria_data)),
    )
    _write_if_changed(root / _MANIFEST, _json_bytes(manifest))

    run = open_run(root)
    if [u.key for u in run.units] != [u.key for u in units]:
        raise RunError(
            f"the inputs copied into {root / 'inputs'} do not re-derive the same judging units; a trace "
            "or criterion holds a value that does not survive JSON/YAML. Report this as a Helix bug."
        )

    written = unchanged = 0
    for u in llm_units:
        packet = build_packet(u, verdict_file=run.verdict_path(u.key), pin=pin)
        if write_packet(run.packet_path(u.key), packet):
            written += 1
        else:
            unchanged += 1
    live = {run.packet_path(u.key).name for u in llm_units}
    removed = 0
    if run.packet_dir.is_dir():
        for stale in sorted(run.packet_dir.glob("*.packet.json")):
            if stale.name not in live:
                stale.unlink()
                removed += 1

    by_id = {t.id: t for t in trace_list}
    code_written = code_unscored = 0
    for u in code_units:
        verdict = _code_verdict(u, matrix, by_id[u.trace_ids[0]])
        code_unscored += verdict.status == "unscored"
        code_written += _write_if_changed(run.verdict_path(u.key), _json_bytes(verdict))

    return PrepSummary(
        run_dir=root,
        axis=unit,
        prompt_version=PROMPT_VERSION,
        traces=len(trace_list),
        llm_units=len(llm_units),
        code_units=len(code_units),
        shared_units=sum(len(u.trace_ids) > 1 for u in units),
        packets_written=written,
        packets_unchanged=unchanged,
        packets_removed=removed,
        code_verdicts_written=code_written,
        code_unscored=code_unscored,
    )


def _read_input(path: Path, expected_sha: str) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise InputFileError("missing from the run directory; re-run prep", path=path) from exc
    if _sha256(data) != expected_sha:
        raise InputFileError(
            "changed since PREP (its hash no longer matches run.json); re-run prep to re-derive the units",
            path=path,
        )
    return data


def open_run(run_dir: str | Path) -> JudgingRun:
    """Re-derive every judging unit and key of a prepared run from its copied inputs alone."""
    root = Path(run_dir).absolute()
    manifest_path = root / _MANIFEST
    try:
        manifest = RunManifest.model_validate_json(manifest_path.read_bytes())
    except FileNotFoundError as exc:
        raise UsageError(
            f"{root} is not a prepared run (no {_MANIFEST}); run `helix judge prep` (prep_run) first"
        ) from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputFileError(
            f"not a valid run manifest ({err['msg']}); re-run prep",
            path=manifest_path,
            field=".".join(str(x) for x in err["loc"]) or None,
        ) from exc
    if manifest.version != RUN_FORMAT_VERSION:
        raise InputFileError(
            f"run format version {manifest.version!r} is not supported (this Helix reads "
            f"{RUN_FORMAT_VERSION}); re-run prep",
            path=manifest_path,
            field="version",
        )
    traces = _parse_traces(_read_input(root / _TRACES, manifest.inputs.traces_sha256), root / _TRACES)
    _read_input(root / _CRITERIA, manifest.inputs.criteria_sha256)
    matrix = load_criteria(root / _CRITERIA)
    units = build_units(traces, matrix, axis=manifest.axis, prompt_version=manifest.prompt_version)
    return JudgingRun(run_dir=root, manifest=manifest, traces=tuple(traces), matrix=matrix, units=units)


def missing_verdict_keys(run: JudgingRun) -> list[str]:
    """Keys of the units (LLM and code) that have no verdict file yet, in unit order."""
    return [u.key for u in run.units if not run.verdict_path(u.key).is_file()]


def list_packets(run_dir: str | Path) -> list[Packet]:
    """The packets of a prepared run, one per LLM unit in unit order, each checked against its key."""
    run = open_run(run_dir)
    packets = []
    for u in run.units:
        if u.kind != "llm":
            continue
        path = run.packet_path(u.key)
        if not path.is_file():
            raise InputFileError("packet file is missing; re-run prep to rewrite it", path=path)
        packets.append(read_packet(path))
    return packets
