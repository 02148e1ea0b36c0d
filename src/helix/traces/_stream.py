"""Big JSON documents read record by record, so memory follows the largest record, not the file.

A document of at least ``STREAM_DOCUMENT_BYTES`` on disk (compressed size for ``.gz``) is not loaded
whole: its records (the items of a top-level array, the record list inside one big object such as an OTLP
request's ``resourceSpans`` or a ``{"data": [...]}`` page, tau2's ``simulations``, Inspect's ``samples``)
are parsed one at a time by ijson's C backend, at about a third of orjson's speed. Smaller documents keep the
faster whole read. A parse error ends the stream with one counted skip; the records before it are kept.
These are the primitives; :func:`helix.traces._json.json_values` decides when to use them.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from typing import IO, Any

import ijson  # type: ignore[import-untyped]
import orjson

from ._depth import bounded, too_deep
from ._report import IntakeReport

__all__ = ["FIRST_LINE_BYTES", "STREAM_DOCUMENT_BYTES", "is_big", "stream_items", "stream_value"]

STREAM_DOCUMENT_BYTES = 64 * 2**20
FIRST_LINE_BYTES = 2**20  # a first line longer than this is one big document, not a JSONL record

_ERRORS = (ijson.JSONError, OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError)


def is_big(fh: IO[bytes]) -> bool:
    """Whether the file behind ``fh`` is big enough to be read record by record."""
    try:
        size = os.fstat(fh.fileno()).st_size
    except (AttributeError, OSError, ValueError):  # not a real file (an in-memory stream): small
        return False
    return size >= STREAM_DOCUMENT_BYTES


def stream_items(fh: IO[bytes], prefix: str, report: IntakeReport) -> Iterator[tuple[int, Any]]:
    """``(record number, value)`` for each value at the ijson ``prefix`` (``"item"``, ``"samples.item"``).

    A value JSON cannot hold (a lone surrogate escape, which ijson's C backend reads as ``?`` but its pure
    Python one keeps) is skipped and counted; a parse error ends the stream with one counted skip.
    """
    report.notes.append(
        f"read record by record ({prefix!r}): the file is at least {STREAM_DOCUMENT_BYTES // 2**20} MB, "
        "so it was not loaded whole"
    )
    index = 0
    try:
        _start(fh)
        for value in ijson.items(fh, prefix, use_float=True):
            index += 1
            if too_deep(value):  # too deep (clipped below), or holding a string JSON cannot write
                try:
                    orjson.dumps(bounded(value))
                except orjson.JSONEncodeError as exc:
                    report.skip("invalid-utf8", f"record {index}: {exc}", record=index)
                    continue
            yield index, value
    except _ERRORS as exc:
        report.skip(
            "invalid-json",
            f"the document could not be read past record {index}: {type(exc).__name__}: {exc}",
            record=index + 1,
        )
    finally:
        _rewind(fh)


def stream_value(fh: IO[bytes], prefix: str) -> Any:
    """The first value at ``prefix`` (a small part of a big document, such as its header), or ``None``."""
    try:
        _start(fh)
        return next(ijson.items(fh, prefix, use_float=True), None)
    except _ERRORS:
        return None
    finally:
        _rewind(fh)


def _start(fh: IO[bytes]) -> None:
    """Rewind ``fh`` past a UTF-8 byte order mark, which the parser would reject."""
    fh.seek(0)
    if fh.read(3) != b"\xef\xbb\xbf":
        fh.seek(0)


def _rewind(fh: IO[bytes]) -> None:
    try:
        fh.seek(0)
    except _ERRORS:  # pragma: no cover - a stream that was read can be rewound
        pass
