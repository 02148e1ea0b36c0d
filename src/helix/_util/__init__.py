"""Small shared helpers (private): atomic file writes, canonical JSON and content hashing."""

from ._files import read_json, write_atomic, write_json_atomic
from ._hashing import canonical_json, content_hash

__all__ = ["canonical_json", "content_hash", "read_json", "write_atomic", "write_json_atomic"]
