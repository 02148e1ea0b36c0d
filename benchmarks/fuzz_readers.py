"""Fuzz every trace reader with mutated inputs in children limited to 512 MB of address space.

Run by hand: ``uv run python benchmarks/fuzz_readers.py [--records 100000] [--workers 2] [--seed 7]``.

Valid seed records of every format (synthetic span runs from ``bench_formats``, hand-made records of the
document formats, and the real data under ``../shared/data`` when present) are mutated: a value replaced
by an odd one (null, booleans, huge numbers, lone surrogates, emoji, 100 KB strings, nesting of a depth
drawn log-uniformly from 1 to 100,000), keys deleted or renamed, containers wrapped; then bytes are cut,
invalid UTF-8 inserted, text re-encoded (UTF-16, Latin-1), a BOM or CRLF line ends added. The mutated
records are written in files of every layout (JSONL, a JSON array, one pretty document, gzip, truncated
gzip) and each file is read with ``iter_traces`` three ways: auto-detected, as its seed's format and as
a random other format; each shard's files are then converted together as a folder. Gzip bombs are read
too: 10 million blank lines, 200,000 garbage and bad-record lines, a 300 MB line and a 300 MB document.

A *traceback* is any exception but an unknown-format ``UsageError``, or a skip saying Helix stopped on an
internal error, or a trace that cannot be written and read back. The run prints, per format, the files,
records and reads, the skips by reason, the tracebacks (with their first examples), and each worker's
peak RSS (``VmHWM``). Target: 0 tracebacks and peak memory <= 512 MB.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

LIMIT_MB = 512
DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
MAX_DEPTH = 100_000
_DEEP = re.compile(rb'"__DEEP_(\d+)_(L|D)__"')


# -- seeds ---------------------------------------------------------------------------------------------------


def _chat(i: int) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": f"Where is order #{i}?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"c{i}",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": '{"id": 1}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": f"c{i}", "content": "Error: not found"},
        {"role": "assistant", "content": "I could not find it."},
    ]


def _document_seeds(i: int) -> dict[str, list[Any]]:
    chat = _chat(i)
    trace = {
        "version": 1,
        "id": f"t{i}",
        "name": "agent",
        "input": "hi",
        "events": [
            {"id": "e1", "kind": "user", "name": "user", "input": "hi"},
            {"id": "e2", "kind": "llm", "name": "chat", "model": "gpt-4o", "usage": {"input_tokens": 5}},
        ],
        "messages": [{"role": "user", "content": "hi"}],
        "scores": [{"name": "ok", "value": True}],
    }
    simulation = {
        "id": f"sim{i}",
        "task_id": str(i),
        "trial": 0,
        "termination_reason": "user_stop",
        "reward_info": {"reward": 1.0, "reward_breakdown": {"DB": 1.0}},
        "messages": [
            {**m, "turn_idx": k, "timestamp": "2026-05-04T10:15:02"} for k, m in enumerate(chat[1:])
        ],
    }
    sample = {
        "id": i,
        "epoch": 1,
        "input": "What is 2+2?",
        "target": "4",
        "messages": chat[1:3],
        "output": {"completion": "4", "model": "mockllm/model"},
        "scores": {"match": {"value": "C", "explanation": "right"}},
        "events": [
            {"event": "model", "model": "mockllm/model", "input": chat[1:2], "output": {"choices": []}},
            {"event": "tool", "id": f"c{i}", "function": "get_order", "arguments": {"id": 1}, "result": "x"},
        ],
    }
    return {
        "helix": [trace],
        "openai-messages": [{"id": f"conv{i}", "messages": chat}, chat],
        "tau-bench": [{"task_id": i, "trial": 0, "reward": 1.0, "info": {"task": {}}, "traj": chat}],
        "tau2-bench": [
            simulation,
            {"info": {"agent_info": {"llm": "gpt-4o"}}, "tasks": [], "simulations": [simulation]},
        ],
        "mini-swe-agent": [
            {
                "trajectory_format": "mini-swe-agent-1",
                "instance_id": f"repo__issue-{i}",
                "info": {"exit_status": "Submitted", "submission": "diff"},
                "messages": [
                    {"role": "system", "content": "You are a coder."},
                    {"role": "user", "content": "<pr_description>Fix it</pr_description>"},
                    {"role": "assistant", "content": "Look.\n```bash\nls\n```"},
                    {"role": "user", "content": "<returncode>0</returncode><output>a.py</output>"},
                ],
            }
        ],
        "who-and-when": [
            {
                "question": "How far is it?",
                "question_ID": f"q{i}",
                "mistake_agent": "WebSurfer",
                "mistake_step": "1",
                "history": [
                    {"role": "human", "content": "How far is it?"},
                    {"role": "Orchestrator (-> WebSurfer)", "content": "Search it."},
                    {"role": "WebSurfer", "content": "It is far."},
                ],
            }
        ],
        "inspect": [
            {"version": 2, "status": "success", "eval": {"task": "math", "eval_id": "e"}, "samples": [sample]}
        ],
    }


def _span_seeds(runs: int) -> dict[str, list[Any]]:
    """Synthetic agent runs of ``bench_formats`` as each span format's records."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_formats as bf

    writers = {
        "otlp": bf.otlp_lines,
        "openinference": bf.phoenix_lines,
        "openai-agents": bf.agents_lines,
        "langfuse": bf.langfuse_lines,
        "langsmith": bf.langsmith_lines,
    }
    found: dict[str, list[Any]] = {}
    for i, run in zip(range(runs), bf.synthetic_runs(), strict=False):
        for fmt, lines in writers.items():
            found.setdefault(fmt, []).extend(json.loads(line) for line in lines(run, i))
    return found


def _real_seeds() -> dict[str, list[Any]]:
    """A few records of each real data set (when ../shared/data is present)."""
    found: dict[str, list[Any]] = {}
    tau = DATA / "tau-bench-historical-trajectories" / "gpt-4o-airline.json"
    if tau.exists():
        found["tau-bench"] = json.loads(tau.read_bytes())[:4]
    for path in sorted((DATA / "tau2-bench-gym-results").glob("*.json"))[:1]:
        found["tau2-bench"] = json.loads(path.read_bytes())["simulations"][:3]
    found["mini-swe-agent"] = [
        json.loads(p.read_bytes())
        for p in sorted((DATA / "swebench-verified-minisweagent-gemini3pro" / "trajs").glob("*.traj.json"))[
            :3
        ]
    ]
    found["who-and-when"] = [
        json.loads(p.read_bytes()) for p in sorted((DATA / "who-and-when").rglob("*.json"))[:3]
    ]
    return {fmt: records for fmt, records in found.items() if records}


def seeds() -> dict[str, list[Any]]:
    pool: dict[str, list[Any]] = {}
    for source in (*(_document_seeds(i) for i in range(3)), _span_seeds(3)):
        for fmt, records in source.items():
            pool.setdefault(fmt, []).extend(records)
    for fmt, records in _real_seeds().items():
        pool.setdefault(fmt, []).extend(records)
    return pool


# -- mutation --------------------------------------------------------------------------------------------------


def _depth(rng: random.Random) -> int:
    return max(1, min(MAX_DEPTH, int(math.exp(rng.uniform(0, math.log(MAX_DEPTH))))))


def _odd(rng: random.Random) -> Any:
    choice = rng.randrange(14)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, -1, 2**70, -(2**63), 1e308, -0.0, 3.5])
    if choice == 3:
        return ""
    if choice == 4:
        return "x" * rng.choice([1000, 100_000])
    if choice == 5:
        return "\ud800 lone surrogate"
    if choice == 6:
        return "emoji \U0001f600 and ümlaut"
    if choice == 7:
        return f"__DEEP_{_depth(rng)}_{rng.choice('LD')}__"
    if choice == 8:
        return []
    if choice == 9:
        return {}
    if choice == 10:
        return [None, 1, "a", {"role": 5}]
    if choice == 11:
        return {"role": "robot", "content": {"nested": True}}
    if choice == 12:
        return "2026-13-45T99:99:99"
    return "Error: something broke"


def _nodes(value: Any, out: list[tuple[Any, Any]], depth: int = 0) -> None:
    """``(container, key)`` of every slot in ``value`` (bounded walk)."""
    if depth > 12 or len(out) > 4000:
        return
    if isinstance(value, dict):
        for key in list(value):
            out.append((value, key))
            _nodes(value[key], out, depth + 1)
    elif isinstance(value, list):
        for index in range(len(value)):
            out.append((value, index))
            _nodes(value[index], out, depth + 1)


def mutate(record: Any, rng: random.Random) -> Any:
    value = json.loads(json.dumps(record))
    for _ in range(rng.randint(1, 3)):
        slots: list[tuple[Any, Any]] = []
        _nodes(value, slots)
        if not slots:
            return _odd(rng)
        container, key = rng.choice(slots)
        action = rng.randrange(5)
        if action == 0 and isinstance(container, dict):
            del container[key]
        elif action == 1 and isinstance(container, dict):
            container[f"{key}_renamed"] = container.pop(key)
        elif action == 2:
            container[key] = [container[key]]
        else:
            container[key] = _odd(rng)
    return value


def _text(value: Any, rng: random.Random) -> bytes:
    raw = json.dumps(value, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")

    def deep(match: re.Match[bytes]) -> bytes:
        n = int(match.group(1))
        if match.group(2) == b"L":
            return b"[" * n + b"]" * n
        return b'{"a":' * n + b"1" + b"}" * n

    return _DEEP.sub(deep, raw)


def _corrupt(line: bytes, rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.05 and line:
        return line[: rng.randrange(len(line))]
    if roll < 0.08:
        at = rng.randrange(len(line) + 1)
        return line[:at] + rng.choice([b"\xff", b"\xed\xa0\x80", b"\xc3", b"\x00"]) + line[at:]
    if roll < 0.09:
        return line.decode("utf-8", "replace").encode("latin-1", "replace")
    return line


def build_file(
    directory: Path, index: int, fmt: str, records: list[Any], rng: random.Random
) -> tuple[Path, int]:
    """One file of mutated records of ``fmt`` in a random layout; returns its path and record count."""
    n = rng.randint(1, 12)
    values = [
        mutate(rng.choice(records), rng) if rng.random() < 0.9 else rng.choice(records) for _ in range(n)
    ]
    layout = rng.choices(["jsonl", "array", "pretty", "one"], weights=[6, 2, 1, 1])[0]
    if layout == "jsonl":
        body = b"".join(_corrupt(_text(v, rng), rng) + rng.choice([b"\n", b"\r\n", b"\n\n"]) for v in values)
    elif layout == "array":
        body = b"[" + b",\n".join(_text(v, rng) for v in values) + b"]"
        body = _corrupt(body, rng)
    elif layout == "pretty":
        values = values[:1]
        body = _text(values[0], rng)
        try:
            body = json.dumps(json.loads(body), indent=2).encode("utf-8", "surrogatepass")
        except (ValueError, RecursionError):
            pass  # too deep or not JSON any more: kept on one line
    else:
        values = values[:1]
        body = _corrupt(_text(values[0], rng), rng)
    if rng.random() < 0.03:
        body = b"\xef\xbb\xbf" + body
    if rng.random() < 0.02:
        body = body.decode("utf-8", "replace").encode("utf-16")
    suffix = ".json" if layout != "jsonl" else ".jsonl"
    path = directory / f"f{index:06d}-{fmt}{suffix}"
    if rng.random() < 0.1:
        packed = gzip.compress(body, mtime=0)
        if rng.random() < 0.3:
            packed = packed[: rng.randrange(10, len(packed))]
        path = path.with_name(path.name + ".gz")
        path.write_bytes(packed)
    else:
        path.write_bytes(body)
    return path, len(values)


# -- the worker ---------------------------------------------------------------------------------------------


def _peak_mb() -> float:
    with open("/proc/self/status") as status:
        for row in status:
            if row.startswith("VmHWM:"):
                return int(row.split()[1]) / 1024
    return 0.0


def _read(path: Path, fmt: str, tally: dict[str, Any]) -> None:
    from helix.traces import IntakeReport, UnknownTraceFormat, iter_traces

    report = IntakeReport()
    tally["reads"] += 1
    try:
        for trace in iter_traces(path, format=fmt, report=report):
            tally["traces"] += 1
            trace.model_dump_json()
    except UnknownTraceFormat:
        tally["unknown"] += 1
        return
    except Exception as exc:  # what this run looks for
        _traceback(tally, f"{type(exc).__name__}: {str(exc)[:160]}", path, fmt)
        return
    for reason, count in report.skipped_by_reason.items():
        tally["skips"][reason] += count
    for skip in report.skipped:
        if "internal error" in skip.detail:
            _traceback(tally, skip.detail[:200], path, fmt)


def _traceback(tally: dict[str, Any], what: str, path: Path, fmt: str) -> None:
    tally["tracebacks"] += 1
    if len(tally["examples"]) < 10:
        tally["examples"].append({"error": what, "file": path.name, "format": fmt})


def worker(shard: int, workers: int, records: int, seed: int, directory: Path) -> dict[str, Any]:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_MB * 2**20, LIMIT_MB * 2**20))
    from helix.traces import TRACE_FORMATS, convert_traces

    pool = seeds()
    formats = sorted(pool)
    rng = random.Random(seed * 1000 + shard)
    folder = directory / f"shard{shard}"
    folder.mkdir()
    per_format: dict[str, dict[str, Any]] = {}
    made = index = 0
    target = records // workers
    while made < target:
        fmt = formats[index % len(formats)]
        path, count = build_file(folder, index, fmt, pool[fmt], rng)
        tally = per_format.setdefault(
            fmt,
            {
                "files": 0,
                "records": 0,
                "reads": 0,
                "traces": 0,
                "unknown": 0,
                "tracebacks": 0,
                "skips": Counter(),
                "examples": [],
            },
        )
        tally["files"] += 1
        tally["records"] += count
        for read_as in ("auto", fmt, rng.choice([f for f in TRACE_FORMATS if f != fmt])):
            _read(path, read_as, tally)
        if index % 50:  # every 50th file is kept for the folder read
            path.unlink()
        made += count
        index += 1
    folder_tally = per_format.setdefault(
        "(folder)",
        {
            "files": 0,
            "records": 0,
            "reads": 1,
            "traces": 0,
            "unknown": 0,
            "tracebacks": 0,
            "skips": Counter(),
            "examples": [],
        },
    )
    try:
        summary = convert_traces([folder], directory / f"shard{shard}.jsonl")
        folder_tally["traces"] = summary.traces_read
        folder_tally["files"] = len(summary.files) + len(summary.unread)
    except Exception as exc:
        _traceback(folder_tally, f"{type(exc).__name__}: {str(exc)[:160]}", folder, "convert")
    for tally in per_format.values():
        tally["skips"] = dict(tally["skips"])
    return {"per_format": per_format, "peak_mb": _peak_mb()}


def _bombs(directory: Path) -> list[tuple[str, Path, str]]:
    blank = directory / "blank.jsonl.gz"
    with gzip.open(blank, "wb", 9) as fh:
        for _ in range(10):
            fh.write(b"\n" * 10**6)
    garbage = directory / "garbage.jsonl.gz"
    with gzip.open(garbage, "wb") as fh:
        fh.write(b"not json \xff{{{\n" * 200_000)
    bad = directory / "bad.jsonl.gz"
    with gzip.open(bad, "wb") as fh:
        fh.write(b'{"messages": 5, "id": "x"}\n' * 200_000)
    line = directory / "line.json.gz"
    with gzip.open(line, "wb", 1) as fh:
        for _ in range(300):
            fh.write(b"x" * 2**20)
    document = directory / "document.json.gz"
    with gzip.open(document, "wb", 1) as fh:
        fh.write(b'{"messages": "')
        for _ in range(300):
            fh.write(b"x" * 2**20)
        fh.write(b'"}')
    return [
        ("10 M blank lines", blank, "auto"),
        ("200,000 garbage lines", garbage, "helix"),
        ("200,000 bad records", bad, "openai-messages"),
        ("a 300 MB line", line, "openai-messages"),
        ("a 300 MB document", document, "openai-messages"),
    ]


def bomb_worker(path: Path, fmt: str) -> dict[str, Any]:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_MB * 2**20, LIMIT_MB * 2**20))
    tally: dict[str, Any] = {
        "reads": 0,
        "traces": 0,
        "unknown": 0,
        "tracebacks": 0,
        "skips": Counter(),
        "examples": [],
    }
    start = time.perf_counter()
    _read(path, fmt, tally)
    tally["skips"] = dict(tally["skips"])
    return {**tally, "seconds": time.perf_counter() - start, "peak_mb": _peak_mb()}


# -- the parent ---------------------------------------------------------------------------------------------


def _child(args: list[str]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    if done.returncode != 0:
        return {"crashed": done.stderr[-1500:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000, help="mutated records in all")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-bombs", action="store_true")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--bomb", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        shard, workers, directory = int(args.worker[0]), int(args.worker[1]), Path(args.worker[2])
        print(json.dumps(worker(shard, workers, args.records, args.seed, directory)))
        return
    if args.bomb:
        print(json.dumps(bomb_worker(Path(args.bomb[0]), args.bomb[1])))
        return
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        common = ["--records", str(args.records), "--seed", str(args.seed)]
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, *common, "--worker", str(shard), str(args.workers), tmp],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for shard in range(args.workers)
        ]
        results = []
        for proc in procs:
            out, err = proc.communicate()
            results.append(
                json.loads(out.strip().splitlines()[-1]) if proc.returncode == 0 else {"crashed": err[-1500:]}
            )
        bombs = (
            []
            if args.no_bombs
            else [(label, _child(["--bomb", str(p), fmt])) for label, p, fmt in _bombs(directory)]
        )
    _print(results, bombs, time.perf_counter() - start)


def _print(results: list[dict[str, Any]], bombs: list[tuple[str, dict[str, Any]]], seconds: float) -> None:
    totals: dict[str, dict[str, Any]] = {}
    examples: list[Any] = []
    for result in results:
        if "crashed" in result:
            print("a worker died:", result["crashed"])
            continue
        for fmt, tally in result["per_format"].items():
            into = totals.setdefault(
                fmt,
                {
                    "files": 0,
                    "records": 0,
                    "reads": 0,
                    "traces": 0,
                    "unknown": 0,
                    "tracebacks": 0,
                    "skips": Counter(),
                },
            )
            for key in ("files", "records", "reads", "traces", "unknown", "tracebacks"):
                into[key] += tally[key]
            into["skips"].update(tally["skips"])
            examples += tally["examples"]
    print(
        f"{'format':16}{'files':>8}{'records':>9}{'reads':>8}{'traces':>8}{'unknown':>9}{'tracebacks':>11}  skips"
    )
    for fmt, t in sorted(totals.items()):
        skips = ", ".join(f"{k} {v}" for k, v in sorted(t["skips"].items()))
        print(
            f"{fmt:16}{t['files']:8d}{t['records']:9d}{t['reads']:8d}{t['traces']:8d}{t['unknown']:9d}{t['tracebacks']:11d}  {skips}"
        )
    records = sum(t["records"] for t in totals.values())
    reads = sum(t["reads"] for t in totals.values())
    tracebacks = sum(t["tracebacks"] for t in totals.values())
    peaks = [r["peak_mb"] for r in results if "peak_mb" in r]
    print(
        f"\n{records} mutated records in {sum(t['files'] for t in totals.values())} files, {reads} reads: "
        f"{tracebacks} traceback(s); worker peak RSS {max(peaks, default=0):.0f} MB (limit {LIMIT_MB} MB)"
    )
    for example in examples[:10]:
        print("  traceback:", example)
    for label, bomb in bombs:
        if "crashed" in bomb:
            print(f"bomb {label}: the child died: {bomb['crashed'][-300:]}")
            tracebacks += 1
            continue
        tracebacks += bomb["tracebacks"]
        print(
            f"bomb {label:24} {bomb['seconds']:6.1f}s peak RSS {bomb['peak_mb']:4.0f} MB skips {bomb['skips']}"
            f"{' TRACEBACK ' + str(bomb['examples']) if bomb['tracebacks'] else ''}"
        )
    print(f"\ntotal: {tracebacks} traceback(s) in {seconds:.0f}s")


if __name__ == "__main__":
    main()
