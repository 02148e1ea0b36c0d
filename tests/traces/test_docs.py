"""docs/traces.md runs as written: its Python example reads, links, reports and round-trips a file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "traces.md"


def test_the_python_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not DOC.is_file():
        pytest.skip("docs/traces.md not present")
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert blocks, "docs/traces.md has no python example"
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], str(DOC), "exec"), {"__name__": "docs_traces"})  # its asserts are the test
    assert capsys.readouterr().out.splitlines() == ["4 wrong-type", "trace_1 3"]
    assert (tmp_path / "canonical.jsonl").is_file()
