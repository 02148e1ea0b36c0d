"""Reading many trace files at once (directories included) and converting them to Helix JSONL or Parquet.

Parquet output has one row per trace: flat columns a query engine filters on (``id``, ``session_id``,
``name``, ``status``, ``source_format``, ``n_events``, ``n_tool_events``, ``n_tool_errors``, one
``score_<name>`` column per score name) and the whole canonical trace as JSON text in ``trace_json``,
so DuckDB (``read_parquet`` + ``json_extract``) and Polars (``read_parquet`` + ``str.json_decode``) query
it directly. Parquet needs pyarrow (``pip install 'helix-evals[parquet]'``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .._exceptions import UsageError
from .._util import write_atomic
from ._intake import stream_file, write_traces_jsonl
from ._model import Trace
from ._registry import UnknownTraceFormat
from ._report import IntakeReport, IntakeSummary

__all__ = [
    "TRACE_FILE_SUFFIXES",
    "convert_traces",
    "expand_trace_paths",
    "iter_trace_files",
    "write_traces_parquet",
]

# What a directory walk picks up (a file named explicitly is always read, whatever its name).
TRACE_FILE_SUFFIXES: tuple[str, ...] = (
    ".json",
    ".jsonl",
    ".ndjson",
    ".json.gz",
    ".jsonl.gz",
    ".ndjson.gz",
    ".eval",
    ".parquet",
)
_JSONL_OUTPUTS = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")


def _is_trace_file(path: Path) -> bool:
    name = path.name.lower()
    return not name.startswith(".") and name.endswith(TRACE_FILE_SUFFIXES)


def _walk(folder: Path, seen: set[Path]) -> Iterator[Path]:
    """Trace files under ``folder`` in sorted order; a tau2 dir-layout run counts as its results.json."""
    real = folder.resolve()
    if real in seen:  # a symlink loop, or a folder reached twice
        return
    seen.add(real)
    entries = sorted(folder.iterdir())
    names = {entry.name for entry in entries}
    tau2_dir_layout = "results.json" in names and (folder / "simulations").is_dir()
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            if tau2_dir_layout and entry.name == "simulations":
                continue  # read through results.json
            yield from _walk(entry, seen)
        elif entry.is_file() and _is_trace_file(entry):
            yield entry


def expand_trace_paths(paths: Iterable[str | Path]) -> list[Path]:
    """The trace files named by ``paths``: files as given, directories walked recursively in sorted order.

    A directory walk takes files ending in one of :data:`TRACE_FILE_SUFFIXES`, skips hidden entries, and
    reads a tau2-bench dir-layout run (``results.json`` beside ``simulations/``) through its results.json.
    A path that does not exist raises :class:`UsageError`.
    """
    files: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = list(_walk(path, set()))
        elif path.exists():
            found = [path]
        else:
            raise UsageError(f"Trace path {str(path)!r} does not exist; check the path.")
        for file in found:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                files.append(file)
    return files


def iter_trace_files(
    paths: Iterable[str | Path],
    *,
    format: str = "auto",
    summary: IntakeSummary | None = None,
    on_file: Callable[[Path, int, int], None] | None = None,
) -> Iterator[Trace]:
    """Stream the traces of every file under ``paths`` (see :func:`expand_trace_paths`), file by file.

    Each file gets its own :class:`IntakeReport` in ``summary.files`` and counts toward
    ``summary.by_format``. A file no reader recognises, or that cannot be read at all, is listed once in
    ``summary.unread`` with what it looked like and a ``kind`` to group by, unless it is the only file,
    which raises :class:`UsageError` as :func:`iter_traces` does. ``on_file(path, index, total)`` is called before
    each file is read (for progress bars).
    """
    files = expand_trace_paths(paths)
    target = summary if summary is not None else IntakeSummary()
    if not files:
        raise UsageError("No trace files found; give trace files or folders holding .json/.jsonl files.")
    for index, file in enumerate(files):
        if on_file is not None:
            on_file(file, index, len(files))
        report = IntakeReport()
        try:
            stream = stream_file(file, format=format, report=report, companions=tuple(files))
        except UnknownTraceFormat as exc:
            if len(files) == 1:
                raise
            target.add_unread(str(file), exc.sniffed, exc.kind)
            continue
        except UsageError as exc:
            if len(files) == 1:
                raise
            target.add_unread(str(file), str(exc))
            continue
        unread = False
        try:
            yield from stream
        except UsageError as exc:  # found while reading (an extra the file needs is missing, ...)
            if len(files) == 1:
                raise
            target.add_unread(str(file), str(exc))
            unread = True
        finally:
            if not unread:
                target.add(report)


def _score_columns(traces: Sequence[Trace]) -> dict[str, tuple[str, list[Any]]]:
    """One column per score name (the first score of that name on each trace), with its type.

    The type is ``bool`` when every value is a bool, ``float`` when every value is a number (bools
    count as 0/1), ``string`` otherwise.
    """
    kinds: dict[str, set[str]] = {}
    for trace in traces:
        for score in trace.scores:
            value = score.value
            kind = "bool" if isinstance(value, bool) else "float" if isinstance(value, float) else "string"
            kinds.setdefault(score.name, set()).add(kind)
    columns: dict[str, tuple[str, list[Any]]] = {}
    for name, seen in sorted(kinds.items()):
        kind = "string" if "string" in seen else "float" if "float" in seen else "bool"
        convert: Callable[[Any], Any] = {"bool": bool, "float": float, "string": str}[kind]
        column: list[Any] = []
        for trace in traces:
            found = next((s.value for s in trace.scores if s.name == name), None)
            column.append(None if found is None else convert(found))
        columns[f"score_{name}"] = (kind, column)
    return columns


def write_traces_parquet(traces: Iterable[Trace], path: str | Path) -> Path:
    """Write traces as Parquet (one row per trace, see the module docs), atomically.

    Raises :class:`UsageError` naming the ``parquet`` extra when pyarrow is not installed.
    """
    try:
        pa = importlib.import_module("pyarrow")
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise UsageError(
            "Writing Parquet needs pyarrow: pip install 'helix-evals[parquet]' (or write .jsonl instead)."
        ) from None
    rows = list(traces)
    columns: dict[str, Any] = {
        "id": pa.array([t.id for t in rows], pa.string()),
        "session_id": pa.array([t.session_id for t in rows], pa.string()),
        "name": pa.array([t.name for t in rows], pa.string()),
        "status": pa.array([t.status for t in rows], pa.string()),
        "source_format": pa.array(
            [str(t.metadata["source_format"]) if "source_format" in t.metadata else None for t in rows],
            pa.string(),
        ),
        "n_events": pa.array([len(t.events) for t in rows], pa.int64()),
        "n_tool_events": pa.array([sum(e.kind == "tool" for e in t.events) for t in rows], pa.int64()),
        "n_tool_errors": pa.array(
            [sum(e.kind == "tool" and e.status == "error" for e in t.events) for t in rows], pa.int64()
        ),
    }
    arrow_types = {"bool": pa.bool_(), "float": pa.float64(), "string": pa.string()}
    for name, (kind, values) in _score_columns(rows).items():
        columns[name] = pa.array(values, arrow_types[kind])
    columns["trace_json"] = pa.array([t.model_dump_json() for t in rows], pa.string())
    table = pa.table(columns)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return write_atomic(Path(path), sink.getvalue().to_pybytes())


def convert_traces(
    inputs: Iterable[str | Path],
    output: str | Path,
    *,
    format: str = "auto",
    on_file: Callable[[Path, int, int], None] | None = None,
) -> IntakeSummary:
    """Read every trace under ``inputs`` and write them to ``output`` in canonical form.

    ``output`` ending in ``.jsonl`` (or ``.jsonl.gz``) gets Helix JSONL (one trace per line, readable
    with ``read_traces``); ending in ``.parquet`` gets Parquet (see :func:`write_traces_parquet`).
    Returns what was read, skipped and left unread, per file and per format.
    """
    target = Path(output)
    name = target.name.lower()
    if not name.endswith((*_JSONL_OUTPUTS, ".parquet")):
        raise UsageError(
            f"Cannot tell what to write from {str(target)!r}; end the output name with .jsonl, .jsonl.gz "
            "or .parquet."
        )
    summary = IntakeSummary()
    # An earlier output inside an input folder is not read back in.
    files = [f for f in expand_trace_paths(inputs) if f.resolve() != target.resolve()]
    traces = iter_trace_files(files, format=format, summary=summary, on_file=on_file)
    if name.endswith(".parquet"):
        write_traces_parquet(traces, target)
    else:
        write_traces_jsonl(traces, target)
    return summary
