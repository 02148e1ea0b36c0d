"""Intake throughput: ``iter_traces`` against raw ``orjson.loads`` of every line of the same file.

Run by hand: ``uv run python benchmarks/bench_intake.py [--mb 100] [--repeats 3]``.

Generates realistic multi-turn agent traces with tool calls (seeded) as Helix JSONL and as OpenAI
chat-message JSONL in a temporary directory, then times, in the same run and on the same warm file:
- the baseline: ``orjson.loads`` of every line (parsing only, no model, no report);
- the reader: ``iter_traces`` with an ``IntakeReport`` (validation into ``Trace`` plus the report).
Prints MB/s, traces/s and the reader/baseline ratio (target: >= 40% for the helix reader).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from helix.traces import IntakeReport, Trace, iter_traces, read_traces, write_traces_jsonl

REAL = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "tau-bench-historical-trajectories"

TOOLS = ["get_order_details", "search_flights", "update_reservation", "refund_payment", "lookup_user"]
WORDS = (
    "order flight refund booking customer please policy reservation account payment status "
    "seat baggage cancel change confirm date city ticket number help"
).split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


# Message sizes per shape. "tau" is calibrated on tau-bench's gpt-4o airline trajectories (system prompt
# ~6.1 KB, user ~100 chars, assistant ~170, tool results ~650, ~24 messages); "dense" has short texts and
# many small events, the worst case for a validating reader (most of the work is building models).
SHAPES: dict[str, dict[str, tuple[int, int]]] = {
    "tau": {
        "system": (850, 900),
        "user": (10, 25),
        "assistant": (15, 40),
        "tool_items": (6, 14),
        "turns": (4, 10),
    },
    "dense": {
        "system": (50, 70),
        "user": (8, 30),
        "assistant": (15, 50),
        "tool_items": (2, 4),
        "turns": (2, 6),
    },
}


def _conversation(rng: random.Random, i: int, shape: str) -> list[dict[str, Any]]:
    """An OpenAI-style multi-turn conversation with tool calls (about 10% of results are errors)."""
    size = SHAPES[shape]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": _sentence(rng, rng.randint(*size["system"]))}
    ]
    for turn in range(rng.randint(*size["turns"])):
        messages.append({"role": "user", "content": _sentence(rng, rng.randint(*size["user"]))})
        for k in range(rng.randint(0, 2)):
            call_id = f"call_{i}_{turn}_{k}"
            tool = rng.choice(TOOLS)
            args = {"id": f"#W{rng.randint(1000, 9999)}", "reason": _sentence(rng, 4)}
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": tool, "arguments": orjson.dumps(args).decode()},
                        }
                    ],
                }
            )
            items = rng.randint(*size["tool_items"])
            result: Any = (
                "Error: not found"
                if rng.random() < 0.1
                else {"status": rng.choice(WORDS), "items": [_sentence(rng, 6) for _ in range(items)]}
            )
            content = result if isinstance(result, str) else orjson.dumps(result).decode()
            messages.append({"role": "tool", "tool_call_id": call_id, "name": tool, "content": content})
        messages.append({"role": "assistant", "content": _sentence(rng, rng.randint(*size["assistant"]))})
    return messages


def _helix_trace(rng: random.Random, i: int, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The same run as a Helix trace dict: events with ids, usage, models, linked tool results."""
    events: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    out_messages: list[dict[str, Any]] = []
    for j, m in enumerate(messages):
        role = m["role"]
        tool_calls = [
            {
                "id": c["id"],
                "name": c["function"]["name"],
                "arguments": orjson.loads(c["function"]["arguments"]),
            }
            for c in m.get("tool_calls", [])
        ]
        out_messages.append(
            {
                "role": role,
                "content": m.get("content"),
                "tool_calls": tool_calls,
                "tool_call_id": m.get("tool_call_id"),
            }
        )
        event: dict[str, Any] = {"id": f"e{j}", "parent_id": "e0" if j else None, "name": role}
        if role == "assistant":
            for c in tool_calls:
                calls[c["id"]] = c
            event |= {
                "kind": "llm",
                "model": "gpt-4o-2024-08-06",
                "provider": "openai",
                "output": [out_messages[-1]],
                "usage": {"input_tokens": rng.randint(500, 4000), "output_tokens": rng.randint(10, 300)},
                "status": "ok",
            }
        elif role == "tool":
            call = calls[m["tool_call_id"]]
            error = m["content"].startswith("Error")
            event |= {
                "kind": "tool",
                "name": call["name"],
                "input": call["arguments"],
                "output": m["content"],
                "tool_call_id": m["tool_call_id"],
                "status": "error" if error else "ok",
            }
        else:
            event |= {"kind": "user" if role == "user" else "other", "input": m["content"]}
        events.append(event)
    return {
        "version": 1,
        "id": f"run-{i:07d}",
        "name": "support-agent",
        "input": messages[1]["content"],
        "output": messages[-1]["content"],
        "start": "2026-05-04T10:15:02.100000Z",
        "end": "2026-05-04T10:15:31.900000Z",
        "status": "ok",
        "metadata": {"user_id": f"u{rng.randint(1, 500)}", "tags": ["bench"], "environment": "prod"},
        "events": events,
        "messages": out_messages,
        "scores": [{"name": "reward", "value": float(rng.random() < 0.4), "source": "bench"}],
    }


def generate(directory: Path, target_mb: float, shape: str = "tau", seed: int = 7) -> tuple[Path, Path, int]:
    """Write ``helix.jsonl`` (about ``target_mb``) and the same runs as ``openai.jsonl``; returns paths, count."""
    rng = random.Random(seed)
    helix_path, openai_path = directory / f"{shape}-helix.jsonl", directory / f"{shape}-openai.jsonl"
    target = int(target_mb * 1024 * 1024)
    written = count = 0
    with helix_path.open("wb") as hx, openai_path.open("wb") as oa:
        while written < target:
            messages = _conversation(rng, count, shape)
            line = orjson.dumps(_helix_trace(rng, count, messages)) + b"\n"
            hx.write(line)
            oa.write(orjson.dumps({"id": f"conv-{count:07d}", "messages": messages}) + b"\n")
            written += len(line)
            count += 1
    return helix_path, openai_path, count


def real_tau(directory: Path, target_mb: float) -> tuple[Path, Path, int] | None:
    """tau-bench gpt-4o airline runs converted to Helix JSONL, repeated to about ``target_mb``."""
    source = REAL / "gpt-4o-airline.json"
    if not source.exists():
        return None
    traces = read_traces(source).traces
    helix_path = write_traces_jsonl(traces, directory / "real-once.jsonl")
    repeat = max(1, round(target_mb * 1024 * 1024 / helix_path.stat().st_size))
    copies = [t.model_copy(update={"id": f"{t.id}#{r}"}) for r in range(repeat) for t in traces]
    write_traces_jsonl(copies, helix_path)
    rows = orjson.loads(source.read_bytes())
    openai_path = directory / "real-openai.jsonl"
    with openai_path.open("wb") as fh:
        for r in range(repeat):
            for row in rows:
                fh.write(
                    orjson.dumps({"id": f"{row['task_id']}:{row['trial']}#{r}", "messages": row["traj"]})
                    + b"\n"
                )
    return helix_path, openai_path, len(copies)


def _raw(path: Path) -> int:
    n = 0
    loads = orjson.loads
    with path.open("rb", buffering=1 << 20) as fh:  # the same read buffer the readers use
        for line in fh:
            loads(line)
            n += 1
    return n


def _validate_only(path: Path) -> int:
    """``Trace.model_validate_json`` per line and nothing else: the ceiling for the helix reader."""
    n = 0
    validate = Trace.model_validate_json
    with path.open("rb", buffering=1 << 20) as fh:
        for line in fh:
            validate(line)
            n += 1
    return n


def _reader(fmt: str) -> Callable[[Path], int]:
    def run(path: Path) -> int:
        report = IntakeReport()
        n = sum(1 for _ in iter_traces(path, format=fmt, report=report))
        assert report.records_skipped == 0, report.skipped[:3]
        assert n == report.traces_read
        return n

    return run


def _measure(
    fns: dict[str, Callable[[Path], int]], path: Path, repeats: int
) -> dict[str, tuple[float, float, int]]:
    """Best (CPU seconds, wall seconds, traces) per function, runs interleaved so load hits all alike.

    CPU time (``time.process_time``) is the figure of merit: on a shared machine other processes
    stretch wall time unevenly between runs, but not the CPU time this process spends.
    """
    best: dict[str, tuple[float, float, int]] = {}
    for _ in range(repeats):
        for name, fn in fns.items():
            cpu0, wall0 = time.process_time(), time.perf_counter()
            n = fn(path)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            old = best.get(name)
            best[name] = (min(cpu, old[0]) if old else cpu, min(wall, old[1]) if old else wall, n)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mb", type=float, default=100.0, help="size of each generated helix file (MB)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per measurement (best is kept)")
    parser.add_argument(
        "--shape", choices=[*SHAPES, "real", "all"], default="all", help="trace shape(s) to measure"
    )
    args = parser.parse_args()
    shapes = [*SHAPES, "real"] if args.shape == "all" else [args.shape]
    for shape in shapes:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            if shape == "real":
                made = real_tau(Path(tmp), args.mb)
                if made is None:
                    print(f"\n=== shape 'real': skipped, {REAL} is absent")
                    continue
                helix_path, openai_path, count = made
            else:
                helix_path, openai_path, count = generate(Path(tmp), args.mb, shape)
            print(f"\n=== shape {shape!r}: generated {count} traces in {time.perf_counter() - t0:.1f}s")
            for label, path in (("helix", helix_path), ("openai-messages", openai_path)):
                size_mb = path.stat().st_size / 1e6
                _raw(path)  # warm the page cache so every run reads from memory
                runs = {"orjson": _raw, "reader": _reader(label), "auto": _reader("auto")}
                if label == "helix":
                    runs["validate"] = _validate_only
                best = _measure(runs, path, args.repeats)
                assert best["orjson"][2] == best["reader"][2] == count
                print(f"{label}: {size_mb:.1f} MB, {count} traces (best of {args.repeats}, CPU time; [wall])")
                for name, shown in (
                    ("orjson", "orjson.loads per line"),
                    ("validate", "Trace.model_validate_json per line"),
                    ("reader", f"iter_traces({label!r})"),
                    ("auto", "iter_traces('auto')"),
                ):
                    if name not in best:
                        continue
                    cpu, wall, n = best[name]
                    print(
                        f"  {shown:36s} {size_mb / cpu:7.1f} MB/s {n / cpu:9.0f} traces/s"
                        f"   [{size_mb / wall:7.1f} MB/s]"
                    )
                ratio_cpu = best["orjson"][0] / best["reader"][0]
                ratio_wall = best["orjson"][1] / best["reader"][1]
                print(
                    f"  ratio reader/orjson              {ratio_cpu:7.1%} (wall {ratio_wall:.1%}; target >= 40%)"
                )


if __name__ == "__main__":
    main()
