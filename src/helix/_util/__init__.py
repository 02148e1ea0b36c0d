"""Small shared helpers (private): atomic file writes, canonical JSON and hashing, YAML with lines,
the git commit of a checkout, and the one append-only writer of living suites."""

from typing import TYPE_CHECKING, Any

from ._files import read_json, write_atomic, write_json_atomic
from ._git import git_commit
from ._hashing import canonical_json, content_hash
from ._yaml import Loc, field_path, node_at, node_line, parse_yaml_nodes

__all__ = [
    "SUITE_HISTORY_DIR",
    "SUITE_HISTORY_SUFFIX",
    "SUITE_REVISION_FORMAT_VERSION",
    "Shrink",
    "SuiteMerge",
    "SuiteRevision",
    "SuiteShrankError",
    "append_revision",
    "assert_monotonic_growth",
    "first_shrink",
    "history_path",
    "read_suite_history",
    "upsert_by_id",
    "Loc",
    "canonical_json",
    "content_hash",
    "field_path",
    "git_commit",
    "node_at",
    "node_line",
    "parse_yaml_nodes",
    "read_json",
    "write_atomic",
    "write_json_atomic",
]

_LIVING = frozenset(
    {
        "SUITE_HISTORY_DIR",
        "SUITE_HISTORY_SUFFIX",
        "SUITE_REVISION_FORMAT_VERSION",
        "Shrink",
        "SuiteMerge",
        "SuiteRevision",
        "SuiteShrankError",
        "append_revision",
        "assert_monotonic_growth",
        "first_shrink",
        "history_path",
        "read_suite_history",
        "upsert_by_id",
    }
)


def __getattr__(name: str) -> Any:
    # The living-suite writer needs pydantic; load it on first use so `import helix` (and so
    # `helix --help`) does not pay for pydantic.
    if name in _LIVING:
        from . import _living

        return getattr(_living, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    from ._living import (
        SUITE_HISTORY_DIR,
        SUITE_HISTORY_SUFFIX,
        SUITE_REVISION_FORMAT_VERSION,
        Shrink,
        SuiteMerge,
        SuiteRevision,
        SuiteShrankError,
        append_revision,
        assert_monotonic_growth,
        first_shrink,
        history_path,
        read_suite_history,
        upsert_by_id,
    )
