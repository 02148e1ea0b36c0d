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
        line, problem = _syntax_error(exc, text)
        raise InputFileError(
            f"invalid YAML: {problem}; fix the syntax there", path=source, line=line
        ) from exc
    except yaml.YAMLError as exc:
        raise InputFileError(f"invalid YAML: {exc}", path=source) from exc
    finally:
        loader.dispose()
    return root, data


def _syntax_error(exc: yaml.MarkedYAMLError, text: str) -> tuple[int | None, str]:
    """The line to point at and a readable message for a PyYAML syntax error.

    PyYAML marks where it noticed the problem (``problem_mark``) and where the construct it was
    reading began (``context_mark``). A problem noticed only at the end of the text (an unclosed
    quote or bracket) is pointed at where the construct began, not past the last line; otherwise
    at the problem, naming the line the construct began on when that is another one.
    """
    problem_mark, context_mark = exc.problem_mark, exc.context_mark
    problem = exc.problem or "not valid YAML"
    if problem_mark is None:
        return (context_mark.line + 1 if context_mark is not None else None), problem
    at_end = problem_mark.index >= len(text.rstrip())
    if context_mark is not None and (at_end or context_mark.line != problem_mark.line):
        context = (exc.context or "construct").removeprefix("while ")
        context = context.removeprefix("parsing ").removeprefix("scanning ").removeprefix("a ")
        if at_end:
            return context_mark.line + 1, f"{problem} (the {context} that starts here is never closed)"
        return (
            problem_mark.line + 1,
            f"{problem} (in the {context} that starts on line {context_mark.line + 1})",
        )
    return problem_mark.line + 1, problem


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


def _walk(root: yaml.Node | None, loc: Loc) -> tuple[yaml.Node | None, yaml.Node | None]:
    """(the deepest node along ``loc``, the key node naming it when it is a mapping value)."""
    node, key_node = root, None
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            pair = next(
                ((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None
            )
            if pair is None:
                return node, key_node
            key_node, node = pair
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node, key_node = node.value[part], None
        else:
            return node, key_node
    return node, key_node


def node_at(root: yaml.Node | None, loc: Loc) -> yaml.Node | None:
    """The deepest node along ``loc`` (the parent mapping when the last key is missing)."""
    return _walk(root, loc)[0]


def node_line(root: yaml.Node | None, loc: Loc) -> int | None:
    """The 1-based line of the field at ``loc`` (a pydantic error location).

    A mapping value is pointed at by its key's line: a block value (a nested mapping or list)
    starts on the line below the key that names it.
    """
    node, key_node = _walk(root, loc)
    anchor = key_node if key_node is not None else node
    return anchor.start_mark.line + 1 if anchor is not None else None


def field_path(loc: Sequence[str | int]) -> str:
    """``("criteria", 2, "severity")`` → ``criteria[2].severity``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
