"""Every error Helix raises descends from :class:`HelixError`.

```
HelixError
├── UsageError                  the caller misused Helix (bad argument, bad config): fix the call
│   ├── InputFileError          a file the user gave is malformed (carries path, line, field)
│   │   └── VerdictFileError    a verdict file breaks the verdict contract
│   ├── FewShotLeakError        a few-shot example is not from the train split (carries criterion_id)
│   └── TestSplitReusedError    a test split was measured before (test-once ledger; carries fingerprint)
└── RunError                    a run failed at runtime
    ├── MissingVerdictsError    AGGREGATE found judging units without a verdict file (carries keys)
    ├── CodeCheckError          a code check raised or returned nonsense (carries criterion_id, trace_id)
    ├── AdmissionRejectedError  a campaign dispatch was turned away by a busy runtime (transient, retryable)
    ├── CampaignAbortedError    abort_on_cell_error stopped a campaign (carries the failed cell)
    └── ModelError              an LLM provider call failed (carries model)
        └── ModelHTTPError      ... with an HTTP status (carries status_code, body)
```

Messages show the offending value with ``!r`` and end with how to fix it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "AdmissionRejectedError",
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
]


class HelixError(Exception):
    """Root of every error Helix raises."""


class UsageError(HelixError):
    """Helix was called wrongly: a bad argument, option or configuration. The message says the fix."""


class InputFileError(UsageError):
    """A user-supplied file is malformed.

    Carries where the problem is so a CLI can point at it: ``path``, ``line`` (1-based, when known)
    and ``field`` (a dotted path into the record, when known).
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        where = []
        if self.path:
            where.append(self.path + (f":{line}" if line is not None else ""))
        if field:
            where.append(f"field {field!r}")
        prefix = (", ".join(where) + ": ") if where else ""
        super().__init__(prefix + message)


class VerdictFileError(InputFileError):
    """A verdict file breaks the verdict contract (see ``helix schema verdict``)."""


class FewShotLeakError(UsageError):
    """A criterion's few-shot example is not a train-split trace (it would leak into dev/test)."""

    def __init__(self, message: str, *, criterion_id: str, trace_ids: Sequence[str]) -> None:
        self.criterion_id = criterion_id
        self.trace_ids = tuple(trace_ids)
        super().__init__(message)


class TestSplitReusedError(UsageError):
    """A judge was already measured on this test split; the test-once ledger refuses a repeat."""

    __test__ = False  # not a pytest test class

    def __init__(self, message: str, *, criterion_id: str, fingerprint: str) -> None:
        self.criterion_id = criterion_id
        self.fingerprint = fingerprint
        super().__init__(message)


class RunError(HelixError):
    """A run failed at runtime (not the caller's misuse)."""


class MissingVerdictsError(RunError):
    """AGGREGATE was asked to fold a run in which some judging units have no verdict file yet."""

    def __init__(self, keys: Sequence[str], *, verdict_dir: str | Path) -> None:
        self.keys = list(keys)
        self.verdict_dir = str(verdict_dir)
        shown = "\n  ".join(self.keys[:50])
        more = f"\n  ... and {len(self.keys) - 50} more" if len(self.keys) > 50 else ""
        super().__init__(
            f"{len(self.keys)} judging unit(s) have no verdict in {self.verdict_dir}:\n  {shown}{more}\n"
            "Dispatch the matching <key>.packet.json files to a judge (or run `helix judge run`), "
            "then aggregate again."
        )


class CodeCheckError(RunError):
    """A code check failed to produce an outcome for one trace (it raised, or returned a non-outcome).

    The caller records the (trace, criterion) unit as unscored, never as a pass or a fail.
    """

    def __init__(self, message: str, *, criterion_id: str, trace_id: str) -> None:
        self.criterion_id = criterion_id
        self.trace_id = trace_id
        super().__init__(f"criterion {criterion_id!r} on trace {trace_id!r}: {message}")


class ModelError(RunError):
    """An LLM provider call failed.

    ``kind`` names the failure in a few words a summary can group by (``connection_refused``,
    ``timeout``, ``rate_limited``, ``overloaded``, ``server_error``, ``refused``, ``bad_response``...;
    see ``helix.models.FailureKind``); None when unknown.
    """

    def __init__(
        self, message: str, *, model: str, attempts: int | None = None, kind: str | None = None
    ) -> None:
        self.model = model
        self.attempts = attempts
        """How many HTTP attempts were made before giving up (None when unknown)."""
        self.kind = kind
        super().__init__(f"{model}: {message}")


class ModelHTTPError(ModelError):
    """An LLM provider answered with an HTTP error status."""

    def __init__(
        self,
        message: str,
        *,
        model: str,
        status_code: int,
        body: str = "",
        attempts: int | None = None,
        kind: str | None = None,
    ) -> None:
        self.status_code = status_code
        self.body = body
        super().__init__(f"HTTP {status_code}: {message}", model=model, attempts=attempts, kind=kind)


class AdmissionRejectedError(RunError):
    """A runtime turned a campaign dispatch away because it is busy; retrying later may succeed.

    Raise it from a dispatch for admission rejections that are not HTTP errors, so
    ``transient_dispatch_failure()`` retries them.
    """


class CampaignAbortedError(RunError):
    """``abort_on_cell_error`` stopped a campaign at a cell whose final attempt failed.

    Carries ``cell`` (the failed cell's durable result) and ``receipt_path``.
    """

    def __init__(self, message: str, *, cell: object, receipt_path: str | Path) -> None:
        self.cell = cell
        self.receipt_path = str(receipt_path)
        super().__init__(message)
