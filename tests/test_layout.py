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

from pathlib import Path

from import_graph import ROOT, Edge, cycles, graph, unit

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
FLOOR = {name: level for level, names in enumerate(FLOORS) for name in names}


def test_the_cycle_finder_reports_exactly_the_loops() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": {"a"}, "g": set()}
    modules = {m: Path(m) for m in graph}
    edges = [Edge(s, t, 1, ()) for s, targets in graph.items() for t in targets]
    assert cycles(modules, edges) == [["a", "b", "c"], ["d", "e"]]


def test_the_graph_is_read_at_all() -> None:
    modules, edges = graph()
    assert "helix.campaign._run" in modules and "helix" in modules
    targets = {(e.source, e.target) for e in edges}
    # a relative import, a lazy import inside a function and a TYPE_CHECKING import are all seen
    assert ("helix.campaign._run", "helix.campaign._model") in targets
    assert ("helix.cli._campaign", "helix.campaign") in targets
    assert ("helix.examples._demo_run", "helix.campaign") in targets


def test_no_import_cycle_among_modules() -> None:
    modules, edges = graph()
    found = cycles(modules, edges)
    assert not found, "import cycles (each line: modules that import each other in a loop):\n" + "\n".join(
        "  " + " -> ".join(c) for c in found
    )


def test_every_unit_is_on_a_floor() -> None:
    modules, _ = graph()
    unplaced = sorted({unit(m) for m in modules} - set(FLOOR))
    assert not unplaced, f"helix.{unplaced[0]} is on no floor: add it to FLOORS here and to DESIGN.md"


def test_every_package_imports_only_packages_below_it() -> None:
    _, edges = graph()
    wrong = sorted(
        f"{e.where()}: {unit(e.source)} (floor {FLOOR[unit(e.source)]}) may import only floors below, "
        f"{unit(e.target)} is on floor {FLOOR[unit(e.target)]}"
        for e in edges
        if unit(e.source) != unit(e.target)
        and unit(e.source) in FLOOR
        and unit(e.target) in FLOOR
        and FLOOR[unit(e.target)] >= FLOOR[unit(e.source)]
    )
    assert not wrong, "imports against the floors:\n" + "\n".join("  " + w for w in wrong)


def test_no_module_reaches_into_another_packages_privates() -> None:
    _, edges = graph()
    wrong = []
    for e in edges:
        if unit(e.source) == unit(e.target):
            continue
        inner = e.target.split(".")[2:]
        private_module = [p for p in inner if p.startswith("_")]
        private_names = [n for n in e.names if n.startswith("_") and not n.startswith("__")]
        if private_module or private_names:
            wrong.append(f"{e.where()} {', '.join(private_names) or ''}".rstrip())
    assert not wrong, "cross-package imports must go through the package's __init__:\n" + "\n".join(
        "  " + w for w in sorted(wrong)
    )
