"""Helix evaluates LLM agents: traces in, binary judgments out, numbers you can trust."""

from ._exceptions import (
    CodeCheckError,
    HelixError,
    InputFileError,
    MissingVerdictsError,
    ModelError,
    ModelHTTPError,
    RunError,
    UsageError,
    VerdictFileError,
)
from ._pipeline import AggregateResult, aggregate_run, evaluate, evaluate_async

__version__ = "0.1.0"

__all__ = [
    "AggregateResult",
    "CodeCheckError",
    "HelixError",
    "InputFileError",
    "MissingVerdictsError",
    "ModelError",
    "ModelHTTPError",
    "RunError",
    "UsageError",
    "VerdictFileError",
    "__version__",
    "aggregate_run",
    "evaluate",
    "evaluate_async",
]
