"""The criteria matrix: the binary things a subject's agent must get right.

A matrix is a YAML file (``version: 1``) with a ``subject`` and a list of ``criteria``. Each
criterion is either judged by an LLM (``kind: llm``: a question with pass and fail definitions) or
decided by a code check (``kind: code``: a built-in check name or ``module:function`` with ``args``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "CRITERIA_FORMAT_VERSION",
    "CodeCheckSpec",
    "Criterion",
    "CriteriaMatrix",
    "FewShotExample",
    "Severity",
]

CRITERIA_FORMAT_VERSION = 1

Severity = Literal["critical", "major", "minor"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FewShotExample(_Model):
    """A labelled example shown to the judge. Must come from the train split of labelled traces."""

    trace_id: str
    result: Literal["pass", "fail"]
    critique: str


class CodeCheckSpec(_Model):
    """A deterministic check: a built-in name (``tool_called``) or ``package.module:function``."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Criterion(_Model):
    """One binary criterion of the matrix."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,79}$")
    title: str
    severity: Severity = "major"
    kind: Literal["llm", "code"]
    # llm criteria
    question: str | None = None
    pass_definition: str | None = None
    fail_definition: str | None = None
    applies_when: str | None = None
    """When the criterion is relevant; where it is not (the agent rightly did nothing), it passes."""
    few_shot: tuple[FewShotExample, ...] = ()
    # code criteria
    check: CodeCheckSpec | None = None

    @field_validator("check", mode="before")
    @classmethod
    def _check_shorthand(cls, value: Any) -> Any:
        # `check: no_unhandled_tool_error` is shorthand for `check: {name: no_unhandled_tool_error}`.
        return {"name": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _fields_for_kind(self) -> Criterion:
        if self.kind == "llm":
            missing = [f for f in ("question", "pass_definition", "fail_definition") if not getattr(self, f)]
            if missing:
                raise ValueError(f"llm criterion {self.id!r} needs {', '.join(missing)}")
            if self.check is not None:
                raise ValueError(f"llm criterion {self.id!r} must not have `check` (that is for kind: code)")
        else:
            if self.check is None:
                raise ValueError(
                    f"code criterion {self.id!r} needs `check` (a built-in name or module:function)"
                )
            if self.few_shot:
                raise ValueError(f"code criterion {self.id!r} cannot have few_shot examples")
        return self


class CriteriaMatrix(_Model):
    """A subject's criteria matrix, as read from YAML."""

    version: int = CRITERIA_FORMAT_VERSION
    subject: str
    description: str | None = None
    criteria: tuple[Criterion, ...]

    @model_validator(mode="after")
    def _unique_ids(self) -> CriteriaMatrix:
        seen: set[str] = set()
        dupes = sorted({c.id for c in self.criteria if c.id in seen or seen.add(c.id)})  # type: ignore[func-returns-value]
        if dupes:
            raise ValueError(f"criterion ids must be unique; repeated: {', '.join(dupes)}")
        if not self.criteria:
            raise ValueError("a criteria matrix needs at least one criterion")
        return self

    def by_id(self, criterion_id: str) -> Criterion:
        """The criterion with this id (KeyError when absent)."""
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(criterion_id)

    @property
    def llm_criteria(self) -> tuple[Criterion, ...]:
        """The criteria judged by an LLM."""
        return tuple(c for c in self.criteria if c.kind == "llm")

    @property
    def code_criteria(self) -> tuple[Criterion, ...]:
        """The criteria decided by code checks."""
        return tuple(c for c in self.criteria if c.kind == "code")
