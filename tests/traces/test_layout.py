"""The shape of ``helix.traces``: no import cycle, one module per format, no reader reaching into another.

Read from the source with ``ast`` (no import side effects): a format module is one that builds a
``FormatSpec``; the registry imports every one of them and nothing else imports any.
"""

from __future__ import annotations

import ast
from pathlib import Path

from helix.traces import TRACE_FORMATS

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "helix" / "traces"


def _modules() -> dict[str, ast.Module]:
    return {path.stem: ast.parse(path.read_text()) for path in sorted(PACKAGE.glob("*.py"))}


def _imports(tree: ast.Module) -> list[tuple[str, str]]:
    """``(module, name)`` for each ``from .module import name`` of the package (any depth in the file)."""
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            found.extend((node.module, alias.name) for alias in node.names)
    return found


def _format_modules(modules: dict[str, ast.Module]) -> set[str]:
    return {
        name
        for name, tree in modules.items()
        if any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "FormatSpec"
            for node in ast.walk(tree)
        )
    }


def test_the_package_has_no_import_cycle() -> None:
    modules = _modules()
    graph = {
        name: {module for module, _ in _imports(tree) if module in modules} for name, tree in modules.items()
    }
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for dep in sorted(graph[name]):
            assert state.get(dep) != "open", f"import cycle: {' -> '.join([*path, name, dep])}"
            if dep not in state:
                visit(dep, [*path, name])
        state[name] = "done"

    for name in graph:
        if name not in state:
            visit(name, [])


def test_each_format_is_one_module_that_only_the_registry_imports() -> None:
    modules = _modules()
    readers = _format_modules(modules)
    assert len(readers) == len(TRACE_FORMATS)  # one FormatSpec, in its own module, per format name
    for name, tree in modules.items():
        imported = {module for module, _ in _imports(tree)} & readers
        if name == "_registry":
            assert imported == readers
        else:
            assert not imported, f"{name} imports the format module(s) {sorted(imported)}"


def test_no_module_imports_a_private_name_of_another() -> None:
    for name, tree in _modules().items():
        private = [f"{module}.{imported}" for module, imported in _imports(tree) if imported.startswith("_")]
        assert not private, f"{name} imports private helpers {private}"
