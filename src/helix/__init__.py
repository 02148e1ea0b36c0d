"""Helix evaluates LLM agents: traces in, binary judgments out, numbers you can trust."""

from ._exceptions import (
    HelixError,
    InputFileError,
    MissingVerdictsError,
    ModelError,
    ModelHTTPError,
    RunError,
    UsageError,
    VerdictFileError,
)

__version__ = "0.1.0"

__all__ = [
    "HelixError",
    "InputFileError",
    "MissingVerdictsError",
    "ModelError",
    "ModelHTTPError",
    "RunError",
    "UsageError",
    "VerdictFileError",
    "__version__",
]
