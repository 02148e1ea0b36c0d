"""Reading JSON trace files: the one decision "one JSON document or JSONL?", and the values it yields.

Every reader of a JSON format takes its values from :func:`json_values`, and format detection takes the
same decision through :func:`layout`, so a file reads the way it was detected. The rule, on the first
non-blank line (the *head*):

- it opens an array (``[``) and is the only line, or is not a JSON value by itself: one document;
- it opens an object (``{``) and is not a JSON value by itself (a pretty-printed object): one document;
- anything else is JSONL, one value per line (a one-line object file is JSONL with one line).

A big file (``STREAM_DOCUMENT_BYTES`` or more, see :mod:`helix.traces._stream`) whose head opens a
document and is its only line is one document too. A big document is read record by record when it is an
array, or an object holding one of the record lists a reader names (``pages``).

A document that does not parse is read line by line (see :func:`json_values` for formats whose files
each hold one document). Blank lines, invalid UTF-8 and invalid JSON lines are skipped and counted with their line; a damaged
stream ends the read with one ``unreadable`` skip (:func:`unreadable` is the callback).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any, TypeVar

import orjson
from pydantic import ValidationError

from ._depth import CLIP_DEPTH, bounded
from ._model import Trace
from ._report import IntakeReport, SkipReason
from ._source import READ_ERRORS, iter_lines, read_all, strip_bom
from ._stream import FIRST_LINE_BYTES, is_big, stream_items, stream_value
from ._values import BadRecord

__all__ = [
    "Layout",
    "Located",
    "clipped_retry",
    "json_failure",
    "json_values",
    "layout",
    "page_items",
    "record_traces",
    "unreadable",
    "validated",
    "validation_summary",
]

T = TypeVar("T")

Located = tuple[int | None, int | None, Any]
"""``(line, record, value)``: the 1-based JSONL line, or the 1-based record of a document (one is set)."""

_REST_BYTES = 4096  # read after the head to tell a one-line file from JSONL
_MAX_ERRORS_SHOWN = 3


def unreadable(report: IntakeReport) -> Callable[[int, str], None]:
    """The callback that records a damaged stream (a truncated ``.gz``, say) as one ``unreadable`` skip."""

    def on_error(line: int, message: str) -> None:
        report.skip("unreadable", f"the rest of the file could not be read: {message}", line=line)

    return on_error


def json_failure(raw: bytes, exc: Exception) -> tuple[SkipReason, str]:
    """Why bytes are not JSON: bad UTF-8 (with the byte offset) or a JSON syntax error."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return "invalid-utf8", f"byte {raw[bad.start : bad.start + 1]!r} at offset {bad.start} is not UTF-8"
    return "invalid-json", f"not valid JSON: {exc}"


# -- the layout decision -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """How a file holds its JSON: one document or JSONL, decided from its first non-blank line."""

    document: bool  # one JSON document (else JSONL)
    head: bytes  # the first non-blank line, stripped (cut at FIRST_LINE_BYTES for a big file)
    single_line: bool  # nothing but blanks after the head
    big: bool  # big enough to be read record by record

    @property
    def opener(self) -> bytes:
        """``b"["`` or ``b"{"`` when the head opens an array or an object, else ``b""``."""
        first = self.head[:1]
        return first if first in (b"[", b"{") else b""


def _is_value(line: bytes) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def layout(fh: IO[bytes], on_error: Callable[[int, str], None]) -> Layout:
    """The :class:`Layout` of ``fh`` (see the module docstring); rewinds ``fh`` after."""
    big = is_big(fh)
    head = b""
    rest = b""
    whole_line = True
    try:
        lineno = 0
        while True:
            raw = fh.readline(FIRST_LINE_BYTES) if big else fh.readline()
            lineno += 1
            if not raw:
                break
            line = (strip_bom(raw) if lineno == 1 else raw).strip()
            if line:
                head = line
                whole_line = not big or len(raw) < FIRST_LINE_BYTES or raw.endswith(b"\n")
                while raw and not raw.endswith(b"\n"):  # the end of a long first line, a chunk at a time
                    raw = fh.readline(FIRST_LINE_BYTES)
                rest = fh.read(_REST_BYTES)
                break
    except READ_ERRORS as exc:
        on_error(1, f"{type(exc).__name__}: {exc}")
        head, rest = b"", b""
    finally:
        try:
            fh.seek(0)
        except READ_ERRORS:  # pragma: no cover - a stream we could read once can be rewound
            pass
    single = not rest.strip()
    opener = head[:1]
    document = False
    if opener in (b"[", b"{"):
        value = whole_line and _is_value(head)
        document = not value or (single and (opener == b"[" or big))
    return Layout(document=document, head=head, single_line=single, big=big)


# -- values ------------------------------------------------------------------------------------------------

_PROBE_LINES = 1000


def _some_line_is_a_record(fh: IO[bytes]) -> bool:
    """Whether one of the first non-blank lines is a non-empty JSON object or array by itself: then the file
    is JSONL after a bad first line, not a broken pretty-printed document (whose containers span lines).
    Rewinds ``fh``."""
    seen = 0
    try:
        for raw in fh:
            if raw.strip():
                try:
                    value = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    value = None
                if isinstance(value, dict | list) and value:
                    return True
                seen += 1
                if seen >= _PROBE_LINES:
                    break
    except READ_ERRORS:
        pass
    finally:
        try:
            fh.seek(0)
        except READ_ERRORS:  # pragma: no cover - a stream we could read once can be rewound
            pass
    return False


def _page_key(fh: IO[bytes], pages: tuple[str, ...]) -> str | None:
    for key in pages:
        if stream_value(fh, f"{key}.item") is not None:
            return key
    return None


def json_values(
    fh: IO[bytes],
    report: IntakeReport,
    *,
    pages: tuple[str, ...] = (),
    header: tuple[str, ...] = (),
    keep_array: Callable[[Any], bool] | None = None,
    one_document: bool = False,
) -> Iterator[Located]:
    """The JSON values of a file, located: ``(line, None, value)`` per JSONL line, ``(None, record, value)``
    for a document.

    A document that is an object is record 1; an array's items are records 1..n, unless ``keep_array``
    says (given the first item) that the array is one record (a conversation of chat messages). A big
    document streams: the items of an array one by one, or, for an object holding a list under one of
    ``pages``, ``{key: [item], **header}`` per item of that list, where ``header`` names small fields read
    first (an Inspect log's ``eval``, tau2's ``info``). Records are numbered the same both ways.

    A document that does not parse is read line by line, each line counted, unless ``one_document`` (the
    format's files each hold one document): then it is one skip, or, when a later line is a record by
    itself (JSONL after a broken first line), still read line by line.
    """
    on_error = unreadable(report)
    shape = layout(fh, on_error)
    if shape.document and shape.big:
        if shape.opener == b"[":
            if keep_array is None or not keep_array(stream_value(fh, "item")):
                for record, item in stream_items(fh, "item", report):
                    yield None, record, item
                return
        else:
            key = _page_key(fh, pages)
            if key is not None:
                context = {name: stream_value(fh, name) for name in header}
                for record, item in stream_items(fh, f"{key}.item", report):
                    yield None, record, {**context, key: [item]}
                return
    if shape.document:
        content = read_all(fh, on_error)
        if content is None:
            return
        try:
            document = orjson.loads(content)
        except orjson.JSONDecodeError as exc:
            fh.seek(0)
            if one_document and not _some_line_is_a_record(fh):
                reason, detail = json_failure(content, exc)
                where = {"line": 1} if shape.single_line else {"record": 1}
                report.skip(reason, f"the file is not one valid JSON document: {detail}", **where)
                return
            del content
            if not shape.single_line:  # (a one-line file read line by line is read as it is)
                report.notes.append(
                    f"the file is not one valid JSON document ({exc}); it was read line by line"
                )
        else:
            del content
            if isinstance(document, list) and not (
                keep_array is not None and document and keep_array(document[0])
            ):
                if not document:
                    report.notes.append("the file is an empty JSON list: read as zero traces")
                for record, item in enumerate(document, 1):
                    yield None, record, item
            else:
                yield None, 1, document
            return
    for lineno, raw in iter_lines(fh, on_error):
        if not raw or raw.isspace():
            report.skip("blank-line", "blank line", line=lineno)
            continue
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            reason, detail = json_failure(raw, exc)
            report.skip(reason, detail, line=lineno)
            continue
        yield lineno, None, value


def page_items(
    value: Any, key: str | None, line: int | None, record: int | None, noun: str = "item"
) -> Iterator[tuple[int | None, Any, str]]:
    """``(record, item, prefix)`` for each record of one located value: a page ``{key: [...]}`` or a list
    is several records, anything else one. ``prefix`` names the item (``"item 2 of the line: "``) in a
    skip when a line holds several."""
    if key is not None and isinstance(value, dict) and isinstance(value.get(key), list):
        items: list[Any] = value[key]
    else:
        items = value if isinstance(value, list) else [value]
    several = len(items) > 1
    for index, item in enumerate(items, 1):
        if line is not None:
            yield None, item, f"{noun} {index} of the line: " if several else ""
        else:
            yield (index if several or record is None else record), item, ""


# -- records ---------------------------------------------------------------------------------------------


def clipped_retry(convert: Callable[..., T], value: Any, *args: Any, **kwargs: Any) -> T:
    """``convert(value, *args, **kwargs)``; if ``value`` nests too deeply for Python or orjson (hostile input reaches
    ~1,000 levels), again with its deep parts clipped (:func:`bounded`), else a :class:`BadRecord`."""
    try:
        return convert(value, *args, **kwargs)
    except (RecursionError, orjson.JSONEncodeError):
        pass
    try:
        return convert(bounded(value), *args, **kwargs)
    except (RecursionError, orjson.JSONEncodeError):
        raise BadRecord(f"a value is nested more than {CLIP_DEPTH} levels deep and cannot be read") from None


def record_traces(
    values: Iterable[Located], report: IntakeReport, convert: Callable[[Any, int | None, int | None], Trace]
) -> Iterator[tuple[int | None, int | None, Trace]]:
    """A trace from each located value by ``convert(value, line, record)``; a :class:`BadRecord` (or a value
    too deep to convert, see :func:`clipped_retry`) is skipped and counted where it was."""
    for line, record, value in values:
        try:
            trace = clipped_retry(convert, value, line, record)
        except BadRecord as bad:
            report.skip(bad.reason, bad.detail, line=line, record=record)
            continue
        yield line, record, trace


def validation_summary(exc: ValidationError) -> str:
    """The first few validation errors as ``field.path: message``, for a skip's detail."""
    errors = exc.errors(include_url=False, include_input=False)
    shown = "; ".join(
        f"{'.'.join(str(part) for part in err['loc']) or '(record)'}: {err['msg']}"
        for err in errors[:_MAX_ERRORS_SHOWN]
    )
    more = f" (+{len(errors) - _MAX_ERRORS_SHOWN} more)" if len(errors) > _MAX_ERRORS_SHOWN else ""
    return shown + more


def validated(fields: dict[str, Any]) -> Trace:
    """Validate converted fields into a :class:`Trace` (deep parts clipped); a failure is a :class:`BadRecord`."""
    try:
        return Trace.model_validate(bounded(fields))
    except ValidationError as exc:
        raise BadRecord(f"cannot build a trace: {validation_summary(exc)}") from None
