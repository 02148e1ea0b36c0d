"""Verdict parsing: the strict gate between what a judge wrote and what Helix will count.

A provider answer (:func:`parse_verdict_text`) or an agent's verdict file
(:func:`parse_verdict_file`) becomes a :class:`VerdictFile` only if every entry reasons first
(``critique`` before ``result``, checked on the raw key order), decides in the allowed set, and the
entries answer exactly the unit's criteria. Anything else raises :class:`VerdictFileError` naming the
source, the criterion and the fix: a broken verdict is never read as a pass or a fail.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._exceptions import VerdictFileError
from ._verdict import VERDICT_FORMAT_VERSION, CriterionVerdict, JudgeInfo, VerdictFile

__all__ = ["parse_verdict_file", "parse_verdict_text"]

_RESULTS = ("pass", "fail", "uncertain")
_TOP_KEYS = frozenset({"version", "key", "status", "verdicts", "error", "judge"})
_ENTRY_KEYS = ("criterion_id", "critique", "result", "confidence", "blocked_by")
_FENCED = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```", re.DOTALL)


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(key)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKeyError(k)
        out[k] = v
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_no_constant)


def _fail(message: str, source: str, field: str | None = None, line: int | None = None) -> VerdictFileError:
    return VerdictFileError(message, path=source, field=field, line=line)


def _decode_whole(text: str, source: str) -> Any:
    try:
        return _DECODER.decode(text)
    except _DuplicateKeyError as exc:
        raise _fail(f"key {exc.key!r} appears twice in one object; write each key once", source) from exc
    except ValueError as exc:
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        raise _fail(f"not valid JSON ({exc}); write one JSON object", source, line=line) from exc


def _find_object(text: str, source: str) -> Any:
    """The verdict object in a provider answer: bare JSON, a fenced block, or an object in prose."""
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCED.finditer(text))]
    for candidate in candidates:
        try:
            obj = _DECODER.decode(candidate)
        except _DuplicateKeyError as exc:
            raise _fail(f"key {exc.key!r} appears twice in one object; write each key once", source) from exc
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = _DECODER.raw_decode(text, match.start())
        except _DuplicateKeyError as exc:
            raise _fail(f"key {exc.key!r} appears twice in one object; write each key once", source) from exc
        except ValueError:
            continue
        if isinstance(obj, dict) and "verdicts" in obj:
            return obj
    preview = stripped[:120]
    raise _fail(
        f"no JSON object with a 'verdicts' list in the answer (it begins {preview!r}); "
        'the judge must answer with one JSON object {"verdicts": [...]}',
        source,
    )


def _judge(raw: Any, source: str) -> JudgeInfo:
    if not isinstance(raw, dict):
        raise _fail(
            f"'judge' must be an object with 'runtime' and 'model', got {raw!r}", source, field="judge"
        )
    try:
        judge = JudgeInfo.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in ("judge", *err["loc"]))
        raise _fail(
            f"{err['msg']} (got {raw!r}); see the packet's verdict_format", source, field=where
        ) from exc
    if not judge.runtime.strip():
        raise _fail("'judge.runtime' is empty; name the runtime that judged", source, field="judge.runtime")
    return judge


def _check_judge_model(judge: JudgeInfo | None, source: str) -> None:
    if judge is not None and judge.runtime != "code" and not (judge.model and judge.model.strip()):
        raise _fail(
            f"judge runtime {judge.runtime!r} gives no model; record the model that judged in "
            "'judge.model' (every LLM judgment is pinned to a model)",
            source,
            field="judge.model",
        )


def _entry(raw: Any, index: int, source: str, allowed: Sequence[str]) -> CriterionVerdict:
    where = f"verdicts[{index}]"
    if not isinstance(raw, dict):
        raise _fail(f"each verdict must be an object, got {raw!r}", source, field=where)
    cid = raw.get("criterion_id")
    if not isinstance(cid, str):
        raise _fail(
            f"missing or non-string 'criterion_id' ({cid!r}); use one of {list(allowed)}",
            source,
            field=f"{where}.criterion_id",
        )
    label = f"criterion {cid!r}"
    extra = [k for k in raw if k not in _ENTRY_KEYS]
    if extra:
        raise _fail(
            f"{label}: unexpected key(s) {extra}; an entry has only {list(_ENTRY_KEYS)}", source, field=where
        )
    keys = list(raw)
    if "critique" not in raw:
        raise _fail(
            f"{label}: no 'critique'; write the reasoning in 'critique' before 'result'",
            source,
            field=f"{where}.critique",
        )
    if "result" not in raw:
        raise _fail(
            f"{label}: no 'result'; add 'result' (pass, fail or uncertain) after 'critique'",
            source,
            field=f"{where}.result",
        )
    if keys.index("result") < keys.index("critique"):
        raise _fail(
            f"{label}: 'result' comes before 'critique'; reason first: write 'critique' before 'result'",
            source,
            field=f"{where}.result",
        )
    critique = raw["critique"]
    if not isinstance(critique, str) or not critique.strip():
        raise _fail(
            f"{label}: critique {critique!r} is empty or not text; write the evidence and reasoning",
            source,
            field=f"{where}.critique",
        )
    result = raw["result"]
    if result not in _RESULTS:
        raise _fail(
            f"{label}: result {result!r} is not allowed; use one of 'pass', 'fail', 'uncertain'",
            source,
            field=f"{where}.result",
        )
    confidence = raw.get("confidence")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not math.isfinite(confidence)
        or not 0.0 <= confidence <= 1.0
    ):
        raise _fail(
            f"{label}: confidence {confidence!r} must be a number from 0 to 1",
            source,
            field=f"{where}.confidence",
        )
    blocked_by = raw.get("blocked_by")
    if blocked_by is not None and not isinstance(blocked_by, str):
        raise _fail(
            f"{label}: blocked_by {blocked_by!r} must be text or null", source, field=f"{where}.blocked_by"
        )
    if result == "uncertain" and not (blocked_by and blocked_by.strip()):
        raise _fail(
            f"{label}: result 'uncertain' needs 'blocked_by' saying what evidence the trace lacks; "
            "decide pass or fail if the evidence is there",
            source,
            field=f"{where}.blocked_by",
        )
    return CriterionVerdict(
        criterion_id=cid,
        critique=critique,
        result=result,
        confidence=float(confidence),
        blocked_by=blocked_by,
    )


def _validate(
    obj: Any,
    *,
    key: str,
    criterion_ids: Sequence[str],
    source: str,
    envelope: bool,
    judge: JudgeInfo | None,
) -> VerdictFile:
    if not isinstance(obj, dict):
        raise _fail(f"a verdict must be a JSON object, got {type(obj).__name__}", source)
    extra = sorted(k for k in obj if k not in _TOP_KEYS)
    if extra:
        raise _fail(f"unexpected key(s) {extra}; a verdict has only {sorted(_TOP_KEYS)}", source)
    if envelope or "version" in obj:
        if obj.get("version") != VERDICT_FORMAT_VERSION:
            raise _fail(
                f'version {obj.get("version")!r} is not supported; write "version": {VERDICT_FORMAT_VERSION}',
                source,
                field="version",
            )
    if envelope or "key" in obj:
        if obj.get("key") != key:
            raise _fail(
                f"key {obj.get('key')!r} does not match the unit's key {key!r}; copy the key from the packet",
                source,
                field="key",
            )
    if judge is None and "judge" in obj and obj["judge"] is not None:
        judge = _judge(obj["judge"], source)
    status = obj.get("status", "scored")
    if status == "unscored":
        error = obj.get("error")
        if not isinstance(error, str) or not error.strip():
            raise _fail("an unscored verdict needs 'error' saying why", source, field="error")
        if obj.get("verdicts"):
            raise _fail("an unscored verdict must not carry verdicts", source, field="verdicts")
        return VerdictFile(key=key, status="unscored", error=error, judge=judge)
    if status != "scored":
        raise _fail(f"status {status!r} is not allowed; use 'scored' or 'unscored'", source, field="status")
    if obj.get("error") is not None:
        raise _fail("'error' is only for unscored verdicts; remove it or set status unscored", source)
    if envelope and judge is None:
        raise _fail(
            'no \'judge\'; add {"runtime": ..., "model": ...} naming who judged', source, field="judge"
        )
    _check_judge_model(judge, source)
    entries = obj.get("verdicts")
    if not isinstance(entries, list) or not entries:
        raise _fail(
            f"'verdicts' must be a non-empty list with one entry per criterion {list(criterion_ids)}",
            source,
            field="verdicts",
        )
    seen: dict[str, CriterionVerdict] = {}
    for i, raw in enumerate(entries):
        verdict = _entry(raw, i, source, criterion_ids)
        cid = verdict.criterion_id
        if cid not in criterion_ids:
            raise _fail(
                f"criterion {cid!r} is not judged in this unit; answer only {list(criterion_ids)}",
                source,
                field=f"verdicts[{i}].criterion_id",
            )
        if cid in seen:
            raise _fail(
                f"criterion {cid!r} is answered twice; give one entry per criterion",
                source,
                field=f"verdicts[{i}].criterion_id",
            )
        seen[cid] = verdict
    missing = [c for c in criterion_ids if c not in seen]
    if missing:
        raise _fail(
            f"no verdict for criterion(s) {missing}; add one entry for each", source, field="verdicts"
        )
    return VerdictFile(key=key, verdicts=tuple(seen[c] for c in criterion_ids), judge=judge)


def parse_verdict_text(
    text: str,
    *,
    key: str,
    criterion_ids: Sequence[str],
    source: str,
    judge: JudgeInfo | None = None,
) -> VerdictFile:
    """Parse a provider's answer into the verdict of unit ``key``.

    The answer may be bare JSON, JSON in a fenced code block, or a JSON object inside prose. It
    needs ``verdicts``; ``key`` and ``version`` are optional (checked when present). ``judge``
    (who answered) is recorded on the result; ``source`` names the answer in error messages.
    """
    obj = _find_object(text, source)
    return _validate(obj, key=key, criterion_ids=criterion_ids, source=source, envelope=False, judge=judge)


def parse_verdict_file(path: str | Path, *, key: str, criterion_ids: Sequence[str]) -> VerdictFile:
    """Read and check ``<key>.verdict.json`` as an agent runtime (or a code check) wrote it."""
    p = Path(path)
    source = str(p)
    try:
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError as exc:
        raise _fail("verdict file does not exist; dispatch the unit's packet to a judge", source) from exc
    except UnicodeDecodeError as exc:
        raise _fail(f"not UTF-8 text ({exc}); write the verdict as UTF-8 JSON", source) from exc
    obj = _decode_whole(text, source)
    return _validate(obj, key=key, criterion_ids=criterion_ids, source=source, envelope=True, judge=None)
