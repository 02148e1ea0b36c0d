"""The support-shop files shipped inside the package: the written policy, the criteria matrix and
the campaign config."""

from __future__ import annotations

from pathlib import Path

__all__ = ["POLICY_TEXT", "campaign_config_path", "criteria_path", "policy_path"]

_DATA_DIR = Path(__file__).resolve().parent / "support_shop"


def policy_path() -> Path:
    """Where the shop's written support policy (Markdown) lives."""
    return _DATA_DIR / "policy.md"


def criteria_path() -> Path:
    """Where the shipped criteria matrix for the support shop (YAML, ``version: 1``) lives."""
    return _DATA_DIR / "criteria.yaml"


def campaign_config_path() -> Path:
    """Where the shipped campaign config (YAML, ``version: 2``; produced-state grading) lives."""
    return _DATA_DIR / "campaign.yaml"


POLICY_TEXT: str = policy_path().read_text(encoding="utf-8")
"""The support policy the scripted agent follows and the criteria judge against."""
