"""Every error Helix raises descends from :class:`HelixError`.

```
HelixError
├── UsageError                  the caller misused Helix (bad argument, bad config): fix the call
│   └── InputFileError          a file the user gave is malformed (carries path, line, field)
│       └── VerdictFileError    a verdict file breaks the verdict contract
└── RunError                    a run failed at runtime
    ├── MissingVerdictsError    AGGREGATE found judging units without a verdict file (carries keys)
    ├── CodeCheckError          a code check raised or returned nonsense (carries criterion_id, trace_id)
    └── ModelError              an LLM provider call failed (carries model)
        └── ModelHTTPError      ... with an HTTP status (carries status_code, body)
```

Messages show the offending value with ``!r`` and end with how to fix it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "CodeCheckError",
    "HelixError",
    "InputFileError",
    "MissingVerdictsError",
    "ModelError",
    "ModelHTTPError",
    "RunError",
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
    """An LLM provider call failed."""

    def __init__(self, message: str, *, model: str, attempts: int | None = None) -> None:
        self.model = model
        self.attempts = attempts
        """How many HTTP attempts were made before giving up (None when unknown)."""
        super().__init__(f"{model}: {message}")


class ModelHTTPError(ModelError):
    """An LLM provider answered with an HTTP error status."""

    def __init__(
        self, message: str, *, model: str, status_code: int, body: str = "", attempts: int | None = None
    ) -> None:
        self.status_code = status_code
        self.body = body
        super().__init__(f"HTTP {status_code}: {message}", model=model, attempts=attempts)
