"""The import graph of ``src/helix``: no cycles, every package on its floor, no reaching into privates.

Read from the source with ``ast`` (nothing is imported): every ``import`` and ``from ... import``
counts, at module level, inside functions (lazy imports) and under ``if TYPE_CHECKING:`` alike,
relative or absolute. A *unit* is a top-level entry of ``helix``: a subpackage (``traces``), a
module (``_exceptions``, ``_pipeline``) or the root package ``helix/__init__.py`` itself.

The floors are DESIGN.md's, with the placements it leaves open:

- ``_exceptions`` is the basement, under the ground floor of ``_util``, ``_version`` and ``stats``:
  every module may raise a Helix error, ``_util`` and ``stats`` included.
- ``_version`` sits on the ground floor with ``_util`` and ``stats``.
- ``_pipeline`` (``evaluate`` and ``aggregate_run``: PREP, judge, AGGREGATE over one run
  directory) folds the last ``helix validate`` result into the scorecard, so it sits on its own
  floor just above ``calibration``; ``examples`` and ``cli`` call it.
- The root package ``helix`` is the facade on the top floor: it re-exports errors, ``evaluate``
  and ``__version__``, and no module of the library imports it (``__version__`` comes from
  ``_version``).

Packages of DESIGN.md that do not exist yet are listed, so the rule holds the day they appear; a
unit on no floor fails the test until it is given one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "helix"

FLOORS: tuple[tuple[str, ...], ...] = (
    ("_exceptions",),
    ("_util", "_version", "stats"),
    ("traces", "models"),
    ("judging",),
    ("scoring",),
    ("report",),
    ("review",),
    ("calibration",),
    ("_pipeline",),
    ("discovery", "datasets", "flow"),
    ("audit",),
    ("campaign",),
    ("matrix",),
    ("optimize",),
    ("view",),
    ("examples",),
    ("cli",),
    (ROOT,),
)
FLOOR = {unit: level for level, units in enumerate(FLOORS) for unit in units}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    names: tuple[str, ...]

    def where(self) -> str:
        return f"{self.source} (line {self.line}) imports {self.target}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((SRC / ROOT).rglob("*.py"))}


def _package_of(module: str, path: Path) -> str:
    """The package a module's relative imports start from."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _edges(modules: dict[str, Path]) -> Iterator[Edge]:
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == ROOT or alias.name.startswith(ROOT + "."):
                        yield Edge(module, _deepest(alias.name, modules), node.lineno, ())
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = _package_of(module, path).split(".")
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                if target != ROOT and not target.startswith(ROOT + "."):
                    continue
                plain: list[str] = []
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in modules:  # `from . import _units` imports a module
                        yield Edge(module, sub, node.lineno, ())
                    else:
                        plain.append(alias.name)
                if plain or not node.names:
                    yield Edge(module, _deepest(target, modules), node.lineno, tuple(plain))


def _deepest(name: str, modules: dict[str, Path]) -> str:
    while name not in modules and "." in name:
        name = name.rpartition(".")[0]
    return name


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def _graph() -> tuple[dict[str, Path], list[Edge]]:
    modules = _modules()
    return modules, [e for e in _edges(modules) if e.source != e.target]


def _cycles(modules: dict[str, Path], edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    succ: dict[str, set[str]] = {m: set() for m in modules}
    for e in edges:
        succ[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in modules:
        if start in index:
            continue
        work = [(start, iter(sorted(succ[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(succ[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_cycle_finder_reports_exactly_the_loops() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": {"a"}, "g": set()}
    modules = {m: Path(m) for m in graph}
    edges = [Edge(s, t, 1, ()) for s, targets in graph.items() for t in targets]
    assert _cycles(modules, edges) == [["a", "b", "c"], ["d", "e"]]


def test_the_graph_is_read_at_all() -> None:
    modules, edges = _graph()
    assert "helix.campaign._run" in modules and "helix" in modules
    targets = {(e.source, e.target) for e in edges}
    # a relative import, a lazy import inside a function and a TYPE_CHECKING import are all seen
    assert ("helix.campaign._run", "helix.campaign._model") in targets
    assert ("helix.cli._campaign", "helix.campaign") in targets
    assert ("helix.examples._demo_run", "helix.campaign") in targets


def test_no_import_cycle_among_modules() -> None:
    modules, edges = _graph()
    cycles = _cycles(modules, edges)
    assert not cycles, "import cycles (each line: modules that import each other in a loop):\n" + "\n".join(
        "  " + " -> ".join(c) for c in cycles
    )


def test_every_unit_is_on_a_floor() -> None:
    modules, _ = _graph()
    unplaced = sorted({_unit(m) for m in modules} - set(FLOOR))
    assert not unplaced, f"helix.{unplaced[0]} is on no floor: add it to FLOORS here and to DESIGN.md"


def test_every_package_imports_only_packages_below_it() -> None:
    _, edges = _graph()
    wrong = sorted(
        f"{e.where()}: {_unit(e.source)} (floor {FLOOR[_unit(e.source)]}) may import only floors below, "
        f"{_unit(e.target)} is on floor {FLOOR[_unit(e.target)]}"
        for e in edges
        if _unit(e.source) != _unit(e.target)
        and _unit(e.source) in FLOOR
        and _unit(e.target) in FLOOR
        and FLOOR[_unit(e.target)] >= FLOOR[_unit(e.source)]
    )
    assert not wrong, "imports against the floors:\n" + "\n".join("  " + w for w in wrong)


def test_no_module_reaches_into_another_packages_privates() -> None:
    _, edges = _graph()
    wrong = []
    for e in edges:
        if _unit(e.source) == _unit(e.target):
            continue
        inner = e.target.split(".")[2:]
        private_module = [p for p in inner if p.startswith("_")]
        private_names = [n for n in e.names if n.startswith("_") and not n.startswith("__")]
        if private_module or private_names:
            wrong.append(f"{e.where()} {', '.join(private_names) or ''}".rstrip())
    assert not wrong, "cross-package imports must go through the package's __init__:\n" + "\n".join(
        "  " + w for w in sorted(wrong)
    )
