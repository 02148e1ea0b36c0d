"""Crash-safe file writes: temp file in the same directory, fsync, atomic rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

__all__ = ["read_json", "write_atomic", "write_json_atomic"]


def write_atomic(path: str | Path, data: bytes | str, *, fsync: bool = True) -> Path:
    """Write ``data`` to ``path`` so that readers see either the old file or the whole new one.

    ``fsync=False`` skips the flush to disk (the rename stays atomic) for hot paths where losing the
    last few files on power loss is acceptable because they can be recomputed.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return target


def write_json_atomic(path: str | Path, obj: Any, *, fsync: bool = True) -> Path:
    """Write ``obj`` as indented, key-order-preserving JSON (with a trailing newline), atomically."""
    return write_atomic(path, orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n", fsync=fsync)


def read_json(path: str | Path) -> Any:
    """Read a JSON file."""
    return orjson.loads(Path(path).read_bytes())
