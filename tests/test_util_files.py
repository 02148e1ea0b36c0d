"""Atomic writes: readers see the old file or the whole new one, and no temp file is left behind."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helix._util import read_json, write_atomic, write_json_atomic


def test_writes_creates_parents_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.json"
    write_json_atomic(target, {"x": 1})
    assert read_json(target) == {"x": 1}
    write_atomic(target, "second", fsync=False)
    assert target.read_text() == "second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.json"]


def test_a_failed_write_keeps_the_old_content(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    write_atomic(target, "old")

    with pytest.raises(TypeError):  # the payload fails after the temp file was created
        write_atomic(target, object())  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    target = tmp_path / "shared.txt"
    payloads = [(str(i) * 50_000).encode() for i in range(8)]

    def writer(data: bytes) -> None:
        for _ in range(20):
            write_atomic(target, data, fsync=False)

    threads = [threading.Thread(target=writer, args=(p,)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert target.read_bytes() in payloads
    assert [p.name for p in tmp_path.iterdir()] == ["shared.txt"]
