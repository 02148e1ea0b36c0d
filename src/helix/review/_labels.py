"""The human label: one annotator's judgment of one criterion on one trace, and its JSONL form.

A label file is JSON Lines, one :class:`HumanLabel` per line. Reading is tolerant: a line that is
not valid JSON or not a valid label is counted with its line number and reason, never silently
dropped and never fatal, so one hand-edited line cannot lose an annotator's whole session.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import orjson
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, field_validator

from .._exceptions import UsageError
from .._util import write_atomic

__all__ = [
    "DECIDED_LABELS",
    "LABEL_FORMAT_VERSION",
    "READABLE_LABEL_VERSIONS",
    "BadLine",
    "HumanLabel",
    "LabelFile",
    "LabelKey",
    "LabelValue",
    "label_line",
    "latest_labels",
    "parse_labels_jsonl",
    "read_labels_jsonl",
    "utc_now",
    "write_labels_jsonl",
]

LABEL_FORMAT_VERSION: Literal[2] = 2
READABLE_LABEL_VERSIONS: frozenset[int] = frozenset({1, 2})
"""Version 1 lines (no ``design``/``stratum``) still read."""

LabelValue = Literal["pass", "fail", "defer", "underdetermined"]
"""``pass``/``fail`` decide; ``defer`` = skipped for now; ``underdetermined`` = the trace cannot tell."""

DECIDED_LABELS: frozenset[str] = frozenset({"pass", "fail"})

LabelKey = tuple[str, str, str]
"""(trace_id, criterion_id, annotator): at most one current label per key."""


def utc_now() -> datetime:
    """The current time, tz-aware UTC (the one clock seam of this package)."""
    return datetime.now(UTC)


class HumanLabel(BaseModel):
    """One human label. ``created_at`` is tz-aware and normalized to UTC."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1, 2] = LABEL_FORMAT_VERSION
    trace_id: str = Field(min_length=1)
    criterion_id: str = Field(min_length=1)
    label: LabelValue
    note: str = ""
    annotator: str = Field(min_length=1)
    """Who labelled: a person, or a score's source for gold taken from the traces (``tau2:reward``)."""
    created_at: AwareDatetime = Field(default_factory=utc_now)
    design: str | None = None
    """How this trace came to be labelled: ``by-class``, ``random``, ``by-verdict``, ``active`` or
    ``stratified:KEY`` (see docs/labels.md); None when not recorded."""
    stratum: str | None = None
    """The design's stratum the trace was chosen from (``fail/unsure``), when the design has strata."""

    @field_validator("design")
    @classmethod
    def _known_design(cls, value: str | None) -> str | None:
        if value is not None:
            from ._design import parse_design

            try:
                return parse_design(value).text
            except UsageError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("created_at")
    @classmethod
    def _to_utc(cls, value: datetime) -> datetime:
        return value.astimezone(UTC)

    @property
    def key(self) -> LabelKey:
        """(trace_id, criterion_id, annotator)."""
        return (self.trace_id, self.criterion_id, self.annotator)

    @property
    def decided(self) -> bool:
        """True for ``pass`` and ``fail``."""
        return self.label in DECIDED_LABELS

    def sort_key(self) -> tuple[str, str, str, datetime]:
        """A total, deterministic order: by key, then time."""
        return (self.trace_id, self.criterion_id, self.annotator, self.created_at)


def latest_labels(labels: Iterable[HumanLabel]) -> list[HumanLabel]:
    """The latest label per (trace, criterion, annotator); ties on time keep the later one given.

    Sorted by (trace_id, criterion_id, annotator), so the result is deterministic.
    """
    best: dict[LabelKey, HumanLabel] = {}
    for label in labels:
        current = best.get(label.key)
        if current is None or label.created_at >= current.created_at:
            best[label.key] = label
    return [best[k] for k in sorted(best)]


@dataclass(frozen=True, kw_only=True)
class BadLine:
    """A line of a label file that could not be read."""

    line: int
    reason: str


@dataclass(frozen=True, kw_only=True)
class LabelFile:
    """What a tolerant read of a label JSONL file found."""

    labels: tuple[HumanLabel, ...]
    bad_lines: tuple[BadLine, ...]
    source: str = ""

    def describe(self) -> str:
        """One line per problem after a summary line."""
        head = (
            f"{self.source or 'labels'}: {len(self.labels)} label(s) read, {len(self.bad_lines)} bad line(s)"
        )
        return "\n".join([head, *(f"  line {b.line}: {b.reason}" for b in self.bad_lines)])


def _reason(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err["loc"])
    return f"field {where!r}: {err['msg']}" if where else str(err["msg"])


def parse_labels_jsonl(data: bytes | str, *, source: str = "") -> LabelFile:
    """Parse label JSONL text; blank lines are skipped, bad lines are counted with why."""
    raw = data.encode("utf-8", errors="replace") if isinstance(data, str) else data
    labels: list[HumanLabel] = []
    bad: list[BadLine] = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            bad.append(BadLine(line=number, reason=f"not JSON ({exc})"))
            continue
        if not isinstance(obj, dict):
            bad.append(BadLine(line=number, reason=f"expected a JSON object, got {type(obj).__name__}"))
            continue
        if obj.get("version", LABEL_FORMAT_VERSION) not in READABLE_LABEL_VERSIONS:
            bad.append(
                BadLine(
                    line=number,
                    reason=f"label format version {obj.get('version')!r} is not supported "
                    f"(this Helix reads {sorted(READABLE_LABEL_VERSIONS)}); upgrade Helix",
                )
            )
            continue
        try:
            labels.append(HumanLabel.model_validate(obj))
        except ValidationError as exc:
            bad.append(BadLine(line=number, reason=_reason(exc)))
    return LabelFile(labels=tuple(labels), bad_lines=tuple(bad), source=source)


def read_labels_jsonl(path: str | Path) -> LabelFile:
    """Read a label JSONL file tolerantly (see :func:`parse_labels_jsonl`)."""
    return parse_labels_jsonl(Path(path).read_bytes(), source=str(path))


def label_line(label: HumanLabel) -> bytes:
    """One JSONL line (with newline) for ``label``."""
    return orjson.dumps(label.model_dump(mode="json")) + b"\n"


def write_labels_jsonl(path: str | Path, labels: Iterable[HumanLabel]) -> int:
    """Write ``labels`` as JSONL atomically, in the order given; returns how many."""
    lines = [label_line(label) for label in labels]
    write_atomic(path, b"".join(lines))
    return len(lines)
