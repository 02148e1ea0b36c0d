"""The result index: every finished cell's result, one JSON line each, per cache identity.

``<run>/cache-index/<identity>.jsonl`` is appended (one ``write`` per line, flushed) right after a
cell's own result file is written, so it holds a second durable copy of each finished result.
Reading 100k cached results then costs one file read instead of 100k ``open`` calls, which on
many filesystems are the dominant cost of a cached rerun. The per-cell files stay the source of
truth: a cell whose line is missing (the process died between the two writes) or torn is read
from its own file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

import orjson

from ._paths import INDEX_DIR

__all__ = ["ResultIndex", "index_path", "read_index"]


def index_path(run_dir: str | Path, identity: str) -> Path:
    """The index file of one cache identity in a run directory."""
    return Path(run_dir) / INDEX_DIR / f"{identity}.jsonl"


def read_index(run_dir: str | Path, identity: str) -> dict[tuple[str, str], bytes]:
    """(cell_id, cache_key) → the raw JSON line of its result; torn or foreign lines are skipped."""
    path = index_path(run_dir, identity)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    out: dict[tuple[str, str], bytes] = {}
    loads = orjson.loads
    for line in data.split(b"\n"):
        if not line:
            continue
        try:
            obj = loads(line)
            out[(obj["cell_id"], obj["cache_key"])] = line  # a later line for the same cell wins
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue
    return out


class ResultIndex:
    """Appends result lines to one identity's index through one open file."""

    def __init__(self, run_dir: str | Path, identity: str) -> None:
        self.path = index_path(run_dir, identity)
        self._fh: IO[bytes] | None = None

    def append(self, line: bytes) -> None:
        if self._fh is None:
            os.makedirs(self.path.parent, exist_ok=True)
            self._fh = self.path.open("ab")
        self._fh.write(line + b"\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
