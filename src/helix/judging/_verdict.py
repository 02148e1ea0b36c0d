"""The verdict contract: what a judge (an agent runtime, an LLM provider or a code check) writes.

A verdict file ``<key>.verdict.json`` answers one judging unit (one packet). It holds one entry per
criterion of the unit; in every entry ``critique`` comes before ``result`` (reason first, then
decide). ``result`` is ``pass``, ``fail`` or ``uncertain`` (abstain, saying in ``blocked_by`` what
evidence was missing). A unit the judge could not answer is recorded with ``status: unscored`` and
an ``error``: never as a pass or a fail.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["VERDICT_FORMAT_VERSION", "CriterionVerdict", "JudgeInfo", "Result", "VerdictFile"]

VERDICT_FORMAT_VERSION = 1

Result = Literal["pass", "fail", "uncertain"]


class CriterionVerdict(BaseModel):
    """One criterion's verdict. Field order is part of the contract: critique before result."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    criterion_id: str
    critique: str = Field(min_length=1)
    result: Result
    confidence: float = Field(ge=0.0, le=1.0)
    blocked_by: str | None = None
    """Required when ``result`` is ``uncertain``: the evidence the trace lacked."""


class JudgeInfo(BaseModel):
    """Who produced the verdict: the runtime (``dispatch``, ``model``, ``code``) and pinned model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    runtime: str
    model: str | None = None
    temperature: float | None = None
    prompt_version: str | None = None


class VerdictFile(BaseModel):
    """The content of ``<key>.verdict.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = VERDICT_FORMAT_VERSION
    key: str
    status: Literal["scored", "unscored"] = "scored"
    verdicts: tuple[CriterionVerdict, ...] = ()
    error: str | None = None
    """Why the unit is unscored (only with ``status: unscored``)."""
    judge: JudgeInfo | None = None
