"""The ```python blocks of README.md and docs/*.md (shared by the doc tests)."""

from __future__ import annotations

import re
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
DOCS = [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]


def python_blocks(doc: Path) -> list[tuple[int, str]]:
    """(line of the block's first code line, code) of every ```python block of ``doc``."""
    text = doc.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start(1)) + 1, m.group(1))
        for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M)
    ]
