"""The support-shop files shipped inside the package: the written policy and the criteria matrix."""

from __future__ import annotations

from pathlib import Path

__all__ = ["POLICY_TEXT", "criteria_path", "policy_path"]

_DATA_DIR = Path(__file__).resolve().parent / "support_shop"


def policy_path() -> Path:
    """Where the shop's written support policy (Markdown) lives."""
    return _DATA_DIR / "policy.md"


def criteria_path() -> Path:
    """Where the shipped criteria matrix for the support shop (YAML, ``version: 1``) lives."""
    return _DATA_DIR / "criteria.yaml"


POLICY_TEXT: str = policy_path().read_text(encoding="utf-8")
"""The support policy the scripted agent follows and the criteria judge against."""
