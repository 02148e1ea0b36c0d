"""YAML with line numbers: parse keeping PyYAML's node tree, then map a pydantic error location
(``("criteria", 2, "severity")``) to the line of the offending node and a readable field path."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from .._exceptions import InputFileError

__all__ = ["Loc", "field_path", "node_at", "node_line", "parse_yaml_nodes"]

Loc = tuple[str | int, ...]


def parse_yaml_nodes(text: str, source: Path) -> tuple[yaml.Node | None, Any]:
    """Parse one YAML document, keeping its node tree for line numbers; duplicate keys are refused."""
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is not None:
            _reject_duplicate_keys(root, source)
        data = loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise InputFileError(
            f"invalid YAML: {problem}; fix the syntax there", path=source, line=line
        ) from exc
    except yaml.YAMLError as exc:
        raise InputFileError(f"invalid YAML: {exc}", path=source) from exc
    finally:
        loader.dispose()
    return root, data


def _reject_duplicate_keys(node: yaml.Node, source: Path) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    raise InputFileError(
                        f"key {key.value!r} appears twice in one mapping (first on line {seen[key.value]}); "
                        "keep one",
                        path=source,
                        line=key.start_mark.line + 1,
                    )
                seen[key.value] = key.start_mark.line + 1
            _reject_duplicate_keys(value, source)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _reject_duplicate_keys(item, source)


def node_at(root: yaml.Node | None, loc: Loc) -> yaml.Node | None:
    """The deepest node along ``loc`` (the parent mapping when the last key is missing)."""
    node = root
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            child = next(
                (v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None
            )
            if child is None:
                return node
            node = child
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
        else:
            return node
    return node


def node_line(root: yaml.Node | None, loc: Loc) -> int | None:
    """The 1-based line of the node at ``loc`` (a pydantic error location)."""
    node = node_at(root, loc)
    return node.start_mark.line + 1 if node is not None else None


def field_path(loc: Sequence[str | int]) -> str:
    """``("criteria", 2, "severity")`` → ``criteria[2].severity``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
