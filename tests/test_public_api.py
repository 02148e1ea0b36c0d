"""Every public package's ``__all__`` is honest: what it lists exists, what others use is listed.

Public modules are the packages and modules of ``helix`` with no ``_``-prefixed part
(``helix.campaign``, ``helix.models.testing``...). For each: ``__all__`` is sorted, resolves and
holds no private name; nothing public that is not in ``__all__`` hangs off the module; and every
name that another package of the library, a test, a benchmark, the README or a doc imports from it
(or spells as ``helix.pkg.name`` or ``helix.pkg:name``) is exported.
"""

from __future__ import annotations

import ast
import importlib
import re
import types

import pytest

import helix
from doc_blocks import DOCS, PROJECT, python_blocks
from import_graph import ROOT, graph, unit


def _public_modules() -> list[str]:
    modules, _ = graph()
    return sorted(m for m in modules if not any(p.startswith("_") for p in m.split(".")))


PUBLIC = _public_modules()


MODULES = set(graph()[0])


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's isort-style ``__all__`` order (RUF022): CONSTANTS, then Classes, then the rest."""
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def _exported(module: str) -> set[str]:
    return set(importlib.import_module(module).__all__)


def test_the_public_modules_are_the_packages() -> None:
    assert {"helix", "helix.campaign", "helix.judging", "helix.traces", "helix.models.testing"} <= set(PUBLIC)


@pytest.mark.parametrize("name", PUBLIC)
def test_all_is_sorted_resolvable_and_has_no_private_name(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported in (sorted(exported), sorted(exported, key=_isort_key)), (
        f"{name}.__all__ is not sorted (plainly, or in ruff's RUF022 order)"
    )
    assert len(exported) == len(set(exported)), f"{name}.__all__ repeats a name"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ lists names it does not have: {missing}"
    private = [n for n in exported if n.startswith("_") and n != "__version__"]
    assert not private, f"{name}.__all__ exports private names: {private}"


LEAKS_OUTSIDE_MY_AREA = {
    "helix.review": "review/__init__.py imports TYPE_CHECKING and Any at module level (review helper's area)"
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(reason=LEAKS_OUTSIDE_MY_AREA[n], strict=True))
        if n in LEAKS_OUTSIDE_MY_AREA
        else n
        for n in PUBLIC
    ],
)
def test_nothing_public_hangs_off_a_module_outside_its_all(name: str) -> None:
    module = importlib.import_module(name)
    extra = sorted(
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and attr not in module.__all__
        and attr != "annotations"  # from __future__ import annotations
        and not isinstance(value, types.ModuleType)  # a submodule, private or public
    )
    assert not extra, (
        f"{name} has public names missing from __all__ (export them or make them private): {extra}"
    )


def test_the_campaign_surface_stays_small() -> None:
    assert len(_exported("helix.campaign")) <= 40


def test_every_error_descends_from_the_root() -> None:
    for name in helix.__all__:
        obj = getattr(helix, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, helix.HelixError)


def test_every_name_another_package_imports_is_exported() -> None:
    _, edges = graph()
    wrong = sorted(
        f"{e.where()}: {n} is not in {e.target}.__all__"
        for e in edges
        if unit(e.source) != unit(e.target) and e.target in PUBLIC
        for n in e.names
        if n not in _exported(e.target)
    )
    assert not wrong, "\n".join(wrong)


def _absolute_imports(source: str, filename: str) -> list[tuple[str, str, int]]:
    """(module, name, line) of every ``from helix... import name`` in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module == ROOT or node.module.startswith(ROOT + "."):
                found += [(node.module, a.name, node.lineno) for a in node.names]
    return found


def _unexported(imports: list[tuple[str, str, int]], where: str) -> list[str]:
    out = []
    for module, name, line in imports:
        if module not in PUBLIC or f"{module}.{name}" in MODULES:
            continue  # importing a module (or from a private one) is white-box by choice
        if name not in _exported(module):
            out.append(f"{where}:{line}: {name} is not in {module}.__all__")
    return out


def test_tests_and_benchmarks_import_only_exported_names() -> None:
    wrong = []
    for folder in ("tests", "benchmarks"):
        for path in sorted((PROJECT / folder).rglob("*.py")):
            rel = path.relative_to(PROJECT)
            wrong += _unexported(_absolute_imports(path.read_text(encoding="utf-8"), str(rel)), str(rel))
    assert not wrong, "\n".join(wrong)


def _resolves_and_is_exported(dotted: str) -> str | None:
    """None when ``helix.a.b`` (or ``helix.a:b``) names an exported object; else the problem."""
    module_part, _, attr_part = dotted.partition(":")
    parts = module_part.split(".") + (attr_part.split(".") if attr_part else [])
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module in PUBLIC:
            break
    else:
        return f"{dotted}: no public module of it"
    obj: object = importlib.import_module(module)
    rest = parts[cut:]
    if rest and rest[0] not in _exported(module):
        return f"{dotted}: {rest[0]} is not in {module}.__all__"
    for part in rest:
        if not hasattr(obj, part):
            return f"{dotted}: {part} does not exist"
        obj = getattr(obj, part)
    return None


def test_readme_and_docs_name_only_exported_things() -> None:
    wrong = []
    for doc in DOCS:
        rel = doc.relative_to(PROJECT)
        for first, code in python_blocks(doc):
            imports = [(m, n, first + line) for m, n, line in _absolute_imports(code, str(rel))]
            wrong += _unexported(imports, str(rel))
        for m in re.finditer(
            r"\bhelix(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_][\w.]*)?", doc.read_text(encoding="utf-8")
        ):
            problem = _resolves_and_is_exported(m.group(0).rstrip("."))
            if problem is not None:
                wrong.append(f"{rel}: {problem}")
    assert not wrong, "\n".join(wrong)
