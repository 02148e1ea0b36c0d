"""The cache index: a cache of every finished cell's result file, one line each, per cache identity.

The per-cell result file is the source of truth; the index only makes a cached rerun cheap (one
file read instead of 100k ``open`` calls, which on many filesystems are the dominant cost).
``<run>/cache-index/<identity>.jsonl`` holds one line per result file written::

    {"cell_id": ..., "cache_key": ..., "sha256": ..., "stat": [size, mtime_ns, inode]}<TAB><the file's bytes>

A line is used only while the file still has the recorded size, modification time and inode
(one ``stat``, no read); the hash checks the line itself. Otherwise the file is read: a missing
or unreadable file runs the cell again, and a file whose content differs from the line is used
and reported, never silently replaced by the index. A line that is torn, of another format or
whose bytes do not match its hash is skipped (the file decides). A result file is compact JSON,
which never holds a raw tab or newline, so the tab separates the header from exact bytes.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import orjson

from ._paths import INDEX_DIR

__all__ = ["IndexEntry", "ResultIndex", "file_stat", "index_path", "read_index"]

Stat = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One indexed result file: its content hash, its ``stat`` when indexed, its bytes."""

    sha256: str
    stat: Stat
    payload: bytes


def file_stat(path: str) -> Stat | None:
    """(size, mtime_ns, inode) of ``path``, or None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def index_path(run_dir: str | Path, identity: str) -> Path:
    """The index file of one cache identity in a run directory."""
    return Path(run_dir) / INDEX_DIR / f"{identity}.jsonl"


def read_index(run_dir: str | Path, identity: str) -> dict[tuple[str, str], IndexEntry]:
    """(cell_id, cache_key) → its entry; a later line for the same cell wins; bad lines are skipped."""
    path = index_path(run_dir, identity)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    out: dict[tuple[str, str], IndexEntry] = {}
    loads, sha256 = orjson.loads, hashlib.sha256
    for line in data.split(b"\n"):
        head, tab, payload = line.partition(b"\t")
        if not tab:
            continue  # empty, torn, or a line of the version 1 index (the bare result)
        try:
            meta = loads(head)
            digest, (size, mtime_ns, inode) = meta["sha256"], meta["stat"]
            key = (meta["cell_id"], meta["cache_key"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            continue
        if sha256(payload).hexdigest() != digest:
            continue  # torn or corrupted after the header was written
        out[key] = IndexEntry(sha256=digest, stat=(size, mtime_ns, inode), payload=payload)
    return out


class ResultIndex:
    """Appends lines to one identity's index through one open file."""

    def __init__(self, run_dir: str | Path, identity: str) -> None:
        self.path = index_path(run_dir, identity)
        self._fh: IO[bytes] | None = None

    def append(self, cell_id: str, cache_key: str, payload: bytes, result_file: str) -> None:
        """Index ``payload``, the bytes just written to ``result_file`` (stat'ed now)."""
        stat = file_stat(result_file)
        if stat is None:
            return  # nothing to vouch for: the file decides on the next run
        head = orjson.dumps(
            {
                "cell_id": cell_id,
                "cache_key": cache_key,
                "sha256": hashlib.sha256(payload).hexdigest(),
                "stat": stat,
            }
        )
        if self._fh is None:
            os.makedirs(self.path.parent, exist_ok=True)
            self._fh = self.path.open("ab")
        self._fh.write(head + b"\t" + payload + b"\n")  # a line torn by a kill fails its hash
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
