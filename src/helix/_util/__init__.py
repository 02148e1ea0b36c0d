"""Small shared helpers (private): atomic file writes, canonical JSON and hashing, YAML with lines,
the git commit of a checkout."""

from ._files import read_json, write_atomic, write_json_atomic
from ._git import git_commit
from ._hashing import canonical_json, content_hash
from ._yaml import Loc, field_path, node_at, node_line, parse_yaml_nodes

__all__ = [
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
