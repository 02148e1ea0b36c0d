"""Helix evaluates LLM agents: traces in, binary judgments out, numbers you can trust."""

from ._exceptions import (
    AdmissionRejectedError,
    CampaignAbortedError,
    CodeCheckError,
    FewShotLeakError,
    HelixError,
    InputFileError,
    MissingVerdictsError,
    ModelError,
    ModelHTTPError,
    RunError,
    TestSplitReusedError,
    UsageError,
    VerdictFileError,
)
from ._pipeline import AggregateResult, aggregate_run, evaluate, evaluate_async
from ._version import __version__

__all__ = [
    "AdmissionRejectedError",
    "AggregateResult",
    "CampaignAbortedError",
    "CodeCheckError",
    "FewShotLeakError",
    "HelixError",
    "InputFileError",
    "MissingVerdictsError",
    "ModelError",
    "ModelHTTPError",
    "RunError",
    "TestSplitReusedError",
    "UsageError",
    "VerdictFileError",
    "__version__",
    "aggregate_run",
    "evaluate",
    "evaluate_async",
]
