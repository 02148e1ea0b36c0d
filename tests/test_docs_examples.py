"""Every ```python block of README.md and docs/*.md runs as written.

The blocks of one file run in order in one namespace (a later block may use what an earlier one
defined), in a fresh temporary directory. A block that cannot run here says so on its first line,
visibly in the rendered page: ``# not run by the doc tests: <why>``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from doc_blocks import DOCS, python_blocks

SKIP = re.compile(r"^# not run by the doc tests: (\S.*)$")


def test_the_blocks_are_found() -> None:
    found = {doc.name: len(python_blocks(doc)) for doc in DOCS}
    assert found["campaigns.md"] >= 3 and found["protocol.md"] >= 2, found


@pytest.mark.parametrize("doc", [d for d in DOCS if python_blocks(d)], ids=lambda d: d.name)
def test_python_blocks_run(doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"docs_{doc.stem}"}
    for first_line, code in python_blocks(doc):
        head = code.split("\n", 1)[0]
        if head.startswith("# not run by the doc tests"):
            assert SKIP.match(head), f"{doc.name}:{first_line}: a skipped block must say why"
            continue
        # pad so that a traceback points at the line of the doc
        exec(compile("\n" * (first_line - 1) + code, str(doc), "exec"), namespace)
