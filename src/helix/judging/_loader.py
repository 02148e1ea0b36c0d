"""Read and write criteria files: YAML in, a validated :class:`CriteriaMatrix` out, and back.

Every problem becomes an :class:`~helix.InputFileError` naming the file, the line of the offending
YAML node and the field path (``criteria[2].severity``), with what to change. Lines come from
PyYAML's composed node tree, walked along the pydantic error location. Code checks are resolved at
load time too, so a misspelt check name or a bad argument fails before any run starts.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from .._exceptions import InputFileError
from .._util import Loc, field_path, node_line, parse_yaml_nodes
from ._checks import check_spec_problems
from ._criteria import CRITERIA_FORMAT_VERSION, CriteriaMatrix

__all__ = ["criteria_from_dict", "dump_criteria", "load_criteria"]


def load_criteria(path: str | Path) -> CriteriaMatrix:
    """Read a criteria YAML file into a validated :class:`CriteriaMatrix`.

    Raises :class:`~helix.InputFileError` (with ``path``, ``line`` and ``field``) for unreadable or
    malformed YAML, a schema violation, an unknown code check or check arguments that do not fit.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputFileError(
            f"cannot read the criteria file ({exc.strerror or exc}); check the path", path=source
        ) from exc
    except UnicodeDecodeError as exc:
        raise InputFileError(
            f"the criteria file is not UTF-8 text ({exc.reason}); save it as UTF-8", path=source
        ) from exc
    root, data = parse_yaml_nodes(text, source)
    return _validate(data, source=str(source), root=root)


def criteria_from_dict(data: Any, *, source: str = "<memory>") -> CriteriaMatrix:
    """Validate already-parsed criteria data (errors name ``source`` and the field path, no line)."""
    return _validate(data, source=source, root=None)


class _Dumper(yaml.SafeDumper):
    """Block style, and multi-line strings as ``|`` literals so prompts stay readable."""


_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if _UNSAFE_CHARS.search(value):  # PyYAML mangles some of these in plain/single-quoted style
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    style = (
        "|" if "\n" in value and not value.startswith((" ", "\t")) and value == value.rstrip(" ") else None
    )
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_criteria(matrix: CriteriaMatrix) -> str:
    """The matrix as YAML that :func:`load_criteria` reads back to an equal matrix."""
    data = matrix.model_dump(mode="json", exclude_none=True)
    for criterion in data["criteria"]:
        if not criterion.get("few_shot"):
            criterion.pop("few_shot", None)
        check = criterion.get("check")
        if isinstance(check, dict) and not check.get("args"):
            check.pop("args", None)
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


# ----------------------------------------------------------------------------- validation


def _validate(data: Any, *, source: str, root: yaml.Node | None) -> CriteriaMatrix:
    if data is None:
        raise InputFileError(
            "the criteria file is empty; it needs `version`, `subject` and a list of `criteria`",
            path=source,
            line=1 if root is not None else None,
        )
    if not isinstance(data, Mapping):
        raise InputFileError(
            f"the criteria file must be a mapping with `version`, `subject` and `criteria`, not a "
            f"{type(data).__name__}",
            path=source,
            line=node_line(root, ()),
        )
    version = data.get("version", CRITERIA_FORMAT_VERSION)
    if version != CRITERIA_FORMAT_VERSION:
        raise InputFileError(
            f"unsupported criteria format version {version!r}; this Helix reads version {CRITERIA_FORMAT_VERSION}",
            path=source,
            line=node_line(root, ("version",)),
            field="version",
        )
    try:
        matrix = CriteriaMatrix.model_validate(data)
    except ValidationError as exc:
        errors = sorted(
            exc.errors(),
            key=lambda e: (node_line(root, tuple(e["loc"])) or 0, e["type"] != "extra_forbidden"),
        )
        problems = [(tuple(e["loc"]), _explain(e)) for e in errors]
        raise _file_error(problems, source, root) from exc
    problems = []
    for i, criterion in enumerate(matrix.criteria):
        if criterion.check is not None:
            problems += [
                (("criteria", i, "check", *loc), msg) for loc, msg in check_spec_problems(criterion.check)
            ]
    if problems:
        raise _file_error(problems, source, root)
    return matrix


def _file_error(problems: list[tuple[Loc, str]], source: str, root: yaml.Node | None) -> InputFileError:
    (loc, msg), rest = problems[0], problems[1:]
    if rest:
        others = "\n".join(
            f"  {source}{_colon_line(root, other_loc)}: field {field_path(other_loc)!r}: {other_msg}"
            for other_loc, other_msg in rest[:20]
        )
        more = f"\n  ... and {len(rest) - 20} more" if len(rest) > 20 else ""
        msg = f"{msg}\nalso:\n{others}{more}"
    return InputFileError(msg, path=source, line=node_line(root, loc), field=field_path(loc) or None)


def _colon_line(root: yaml.Node | None, loc: Loc) -> str:
    line = node_line(root, loc)
    return f":{line}" if line is not None else ""


def _model_at(loc: Loc) -> type[BaseModel] | None:
    """The pydantic model that owns the field at ``loc`` (to list its allowed fields)."""
    model: type[BaseModel] = CriteriaMatrix
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            return None
        nested = _find_model(field.annotation)
        if nested is None:
            return None
        model = nested
    return model


def _find_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        for arg in typing.get_args(annotation):
            found = _find_model(arg)
            if found is not None:
                return found
    return None


_ID_HINT = "use letters, digits, '_', '.' or '-' (at most 80, starting with a letter or digit)"


def _explain(err: ErrorDetails) -> str:
    """One pydantic error as a sentence that shows the bad value and says how to fix it."""
    kind, loc, value = err["type"], tuple(err["loc"]), err.get("input")
    name = str(loc[-1]) if loc else "value"
    if kind == "literal_error":
        choices = re.findall(r"'([^']*)'", str((err.get("ctx") or {}).get("expected", "")))
        return f"{value!r} is not one of {', '.join(choices)}; use one of them"
    if kind == "missing":
        return f"required field {name!r} is missing; add it"
    if kind == "extra_forbidden":
        model = _model_at(loc)
        allowed = f"; allowed fields are: {', '.join(model.model_fields)}" if model else ""
        return f"unknown field {name!r}{allowed} (check the spelling)"
    if kind == "string_pattern_mismatch" and name == "id":
        return f"{value!r} is not a valid criterion id; {_ID_HINT}"
    if kind == "string_type" and isinstance(value, bool | int | float):
        return (
            f"expected text but YAML read an unquoted {type(value).__name__} ({value!r}); "
            "put the value in quotes"
        )
    if kind == "value_error":
        return err["msg"].removeprefix("Value error, ")
    return f"{err['msg']} (got {value!r})"
