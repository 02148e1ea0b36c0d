"""Langfuse scores: score rows, and the score files of a blob-storage export joined onto their traces.

A blob-storage export writes observations (``observations_v2/`` or the legacy ``observations/``) and
scores (``scores/``) to separate files. When a folder, or the observation and score files together, are
read in one intake, each observation file's traces get the scores of the score files beside them, joined
on ``trace_id`` (a score with an ``observation_id`` says so in its comment). The score files are indexed
once per intake, up to ``MAX_JOINED_SCORES`` scores.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from ._json import json_values, page_items
from ._model import Score
from ._report import IntakeReport
from ._source import open_source
from ._values import BadRecord, kind_of, number, shown, text_or_none

__all__ = ["MAX_JOINED_SCORES", "ScoreIndex", "companion_kinds", "is_score_row", "score_index", "score_of"]

MAX_JOINED_SCORES = 200_000
_PARENT_KEYS = ("parentObservationId", "parent_observation_id")

FileKind = Literal["scores", "observations", "other"]


def _get(obj: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in obj and obj[key] is not None:
            return obj[key]
    return None


def is_score_row(value: Any) -> bool:
    """A Langfuse score row: a data type, a name and a value (the trace id is checked by the caller)."""
    return (
        isinstance(value, dict)
        and ("dataType" in value or "data_type" in value)
        and "name" in value
        and "value" in value
    )


def score_of(raw: Any, where: str) -> dict[str, Any]:
    """A Langfuse score (API camelCase or export snake_case) as :class:`Score` fields."""
    if not isinstance(raw, dict):
        raise BadRecord(f"{where} is {kind_of(raw)}; expected a score object")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise BadRecord(f"{where}.name is {shown(name)}; expected a non-empty string")
    data_type = str(_get(raw, "dataType", "data_type") or "NUMERIC").upper()
    value: Any = raw.get("value")
    text = _get(raw, "stringValue", "string_value")
    if data_type == "BOOLEAN":
        flag = number(value)
        value = bool(flag) if flag is not None else value if isinstance(value, bool) else text
    elif data_type in ("CATEGORICAL", "TEXT"):
        value = text if isinstance(text, str) else value
    else:
        value = number(value)
    if not isinstance(value, bool | int | float | str):
        raise BadRecord(f"{where}.value is {shown(raw.get('value'))}; expected a number, boolean or string")
    source = text_or_none(raw.get("source"))
    comment = text_or_none(raw.get("comment"))
    observation = _get(raw, "observationId", "observation_id")
    if observation is not None:
        comment = f"{comment} (observation {observation})" if comment else f"observation {observation}"
    return {
        "name": name,
        "value": value,
        "source": f"langfuse:{source.lower()}" if source else "langfuse",
        "comment": comment,
    }


def _trace_id(row: dict[str, Any]) -> str | None:
    return text_or_none(_get(row, "traceId", "trace_id")) or None


@lru_cache(maxsize=4096)
def _file_kind(path: str, mtime_ns: int, size: int) -> FileKind:
    """What the first record of a file is: Langfuse score rows, observation rows (or traces), or other."""
    try:
        with open_source(Path(path)) as fh:
            values = json_values(fh, IntakeReport())
            for line, record, value in values:
                items = page_items(value, "data", line, record)
                if items:
                    first = items[0][1]
                    values.close()
                    if is_score_row(first) and _trace_id(first):
                        return "scores"
                    if isinstance(first, dict) and (
                        any(key in first for key in _PARENT_KEYS)
                        or isinstance(first.get("observations"), list)
                    ):
                        return "observations"
                    return "other"
    except Exception:  # not ours to report: that file's own read says what is wrong with it
        return "other"
    return "other"


def companion_kinds(companions: Iterable[Path]) -> dict[Path, FileKind]:
    """The Langfuse kind of each companion file of an intake (cached per file version)."""
    kinds: dict[Path, FileKind] = {}
    for path in companions:
        try:
            stat = path.stat()
        except OSError:
            continue
        kinds[path] = _file_kind(str(path), stat.st_mtime_ns, stat.st_size)
    return kinds


ScoreIndex = tuple[dict[str, list[Score]], int, int]
"""``(scores by trace id, scores indexed, scores past the cap)``."""


def score_index(files: Iterable[Path]) -> ScoreIndex:
    """The scores of Langfuse score files by trace id (built once per set of files)."""
    key = []
    for path in sorted(files):
        try:
            stat = path.stat()
        except OSError:
            continue
        key.append((str(path), stat.st_mtime_ns, stat.st_size))
    return _index(tuple(key))


@lru_cache(maxsize=1)
def _index(files: tuple[tuple[str, int, int], ...]) -> ScoreIndex:
    by_trace: dict[str, list[Score]] = {}
    kept = dropped = 0
    for path, _, _ in files:
        with open_source(Path(path)) as fh:
            for line, record, value in json_values(fh, IntakeReport()):
                for _, row, _ in page_items(value, "data", line, record):
                    trace_id = _trace_id(row) if is_score_row(row) else None
                    if trace_id is None:
                        continue
                    if kept >= MAX_JOINED_SCORES:
                        dropped += 1
                        continue
                    try:
                        by_trace.setdefault(trace_id, []).append(
                            Score.model_validate(score_of(row, "the score"))
                        )
                    except (BadRecord, ValueError):
                        continue  # the score file's own read counts it
                    kept += 1
    return by_trace, kept, dropped
