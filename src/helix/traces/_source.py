"""Opening trace files: transparent gzip (by magic bytes), line iteration and whole-document reads."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, cast

from .._exceptions import UsageError

__all__ = [
    "GZIP_MAGIC",
    "READ_ERRORS",
    "file_stem",
    "iter_lines",
    "open_source",
    "read_all",
    "read_magic",
    "strip_bom",
]

GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"  # a UTF-8 byte-order mark, which some Windows tools write first


def strip_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte-order mark."""
    return data[3:] if data.startswith(_BOM) else data


# Agent traces make long lines (tens of KB); a large buffer keeps line splitting cheap.
_BUFFER_BYTES = 1 << 20

# Errors a damaged file can raise while it is being read (truncated or corrupt gzip streams, ...).
READ_ERRORS = (OSError, EOFError, zlib.error)


@contextmanager
def open_source(path: Path) -> Iterator[IO[bytes]]:
    """Open ``path`` for binary reading, decompressing it when it starts with the gzip magic bytes."""
    try:
        fh = path.open("rb", buffering=_BUFFER_BYTES)
    except FileNotFoundError:
        raise UsageError(f"Trace file {str(path)!r} does not exist; check the path.") from None
    except IsADirectoryError:
        raise UsageError(f"{str(path)!r} is a directory; pass a trace file inside it.") from None
    except OSError as exc:
        raise UsageError(f"Cannot open trace file {str(path)!r}: {exc}. Check its permissions.") from None
    with fh:
        head = fh.read(3)
        fh.seek(0)
        # RFC 1952: magic bytes then CM = 8 (deflate, the only method defined), so a plain file that
        # starts with the two magic bytes by chance is still read as it is.
        if head == GZIP_MAGIC + b"\x08":
            with gzip.GzipFile(fileobj=fh, mode="rb") as gz:
                # No extra buffer over gzip: a truncated stream then loses only the partial last line.
                yield cast(IO[bytes], gz)
        else:
            yield fh


def iter_lines(fh: IO[bytes], on_error: Callable[[int, str], None]) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw_line)`` (1-based, the newline kept); a read failure ends the file.

    A damaged stream (a truncated ``.gz``, say) is reported through ``on_error(line, message)`` with the
    number of the line that could not be read, instead of raising: the lines before it still count.
    """
    lineno = 0
    try:
        for raw in fh:
            lineno += 1
            yield lineno, (strip_bom(raw) if lineno == 1 else raw)
    except READ_ERRORS as exc:
        on_error(lineno + 1, f"{type(exc).__name__}: {exc}")


def read_all(fh: IO[bytes], on_error: Callable[[int, str], None]) -> bytes | None:
    """The whole (decompressed) content, or ``None`` after reporting why it could not be read."""
    try:
        return strip_bom(fh.read())
    except READ_ERRORS as exc:
        on_error(1, f"{type(exc).__name__}: {exc}")
        return None


def read_magic(fh: IO[bytes], size: int = 4) -> bytes:
    """The first ``size`` (decompressed) bytes of ``fh``, ``b""`` if they cannot be read; rewinds ``fh``."""
    try:
        magic = fh.read(size)
        fh.seek(0)
    except READ_ERRORS:
        return b""  # a damaged stream: the reader that reads it says where it breaks
    return magic


def file_stem(path: Path) -> str:
    """The file name without ``.gz`` and its format suffix: ``runs/gpt-4o.json.gz`` -> ``gpt-4o``."""
    name = path.name
    if name.endswith(".gz"):
        name = name[:-3]
    stem = Path(name).stem
    return stem or name
