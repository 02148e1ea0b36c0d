"""Document-format intake (tau2-bench, mini-SWE-agent, Who&When) on the real data, against raw ``orjson.loads``.

Run by hand: ``uv run python benchmarks/bench_document_formats.py [--repeats 3]``.

Reads the real folders under ``<repo>/../shared/data`` (skipped with a message when absent). For each
format, times in the same run, on the same warm files (best of ``--repeats``):
- the baseline: ``orjson.loads`` of each whole file (parsing only);
- the reader: ``iter_trace_files`` with the format given (conversion, validation, per-file reports).
Prints MB, traces, MB/s, traces/s and the reader/baseline ratio. These are one-document-per-file formats
with large nested records; the 40% target of the issue is for the line formats (see bench_intake.py).

``--memory-mb N`` also writes an N-MB tau2 results file (the real gym simulations repeated under new ids)
and reads it in a child process twice: record by record (files of 64 MB and more, the default) and whole
(the streaming size raised past the file). It prints time and peak RSS (``VmHWM``) of each.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from _child_read import read_in_child
from helix.traces import iter_trace_files

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
SETS: dict[str, list[str]] = {
    "tau2-bench": ["tau2-bench-gym-results/*.json", "tau2-bench-submission-claude-sonnet-4-5/claude-*.json"],
    "mini-swe-agent": ["swebench-verified-minisweagent-gemini3pro/trajs/*.traj.json"],
    "who-and-when": ["who-and-when/Who&When/*/*.json"],
}


def _best(repeats: int, run: Callable[[], None]) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory-mb", type=float, default=0, help="size of the big tau2 file (0 skips)")
    args = parser.parse_args()
    if args.memory_mb:
        memory(args.memory_mb)
    for fmt, patterns in SETS.items():
        files = sorted(f for pattern in patterns for f in DATA.glob(pattern))
        if not files:
            print(f"{fmt:15s} skipped: no files under {DATA}")
            continue
        size_mb = sum(f.stat().st_size for f in files) / 1e6
        counted = [0]

        def baseline(files: list[Path] = files) -> None:
            for f in files:
                orjson.loads(f.read_bytes())

        def reader(files: list[Path] = files, fmt: str = fmt, counted: list[int] = counted) -> None:
            counted[0] = sum(1 for _ in iter_trace_files(files, format=fmt))

        raw = _best(args.repeats, baseline)
        ours = _best(args.repeats, reader)
        n = counted[0]
        print(
            f"{fmt:15s} {len(files):4d} files {size_mb:6.1f} MB {n:4d} traces | "
            f"reader {size_mb / ours:6.1f} MB/s {n / ours:7.0f} traces/s | "
            f"orjson.loads {size_mb / raw:6.1f} MB/s | ratio {raw / ours:.2f}"
        )


def memory(target_mb: float) -> None:
    source = DATA / "tau2-bench-gym-results" / "gpt-4.1_retail_defautl_gpt-4.1_1trials.json"
    if not source.is_file():
        print(f"memory: skipped, {source} is absent")
        return
    document = orjson.loads(source.read_bytes())
    simulations = document["simulations"]
    one = len(orjson.dumps(simulations)) / len(simulations)
    copies = []
    for i in range(int(target_mb * 1e6 / one) + 1):
        sim = dict(simulations[i % len(simulations)])
        sim["id"] = f"{sim.get('id')}-{i}"
        copies.append(sim)
    document["simulations"] = copies
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big-results.json"
        path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
        size = path.stat().st_size / 1e6
        print(f"\nmemory: a {size:.0f} MB tau2 results file, {len(copies)} simulations")
        for mode in ("default", "whole"):  # default: record by record from 64 MB
            print(read_in_child(path, "tau2-bench", whole=mode == "whole").line(mode, size))


if __name__ == "__main__":
    main()
