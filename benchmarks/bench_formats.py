"""Span-format intake: throughput per format against raw ``orjson.loads``, and peak memory on a big OTLP file.

Run by hand: ``uv run python benchmarks/bench_formats.py [--mb 40] [--gb 1.0] [--repeats 3]``.

Generates seeded agent runs (an agent root, 3-6 LLM calls with growing message histories, a tool call
after each but the last, one span per line, children before parents as the OTel file exporter writes
them) as OTLP/JSON (GenAI conventions), Phoenix/OpenInference JSONL (dotted attributes), OpenAI Agents SDK
JSONL, Langfuse v4 observation rows and LangSmith flat runs, then times in the same run, on the same warm
file:
- the baseline: ``orjson.loads`` of every line (parsing only);
- the reader: ``iter_traces`` with an ``IntakeReport`` (grouping, derivations, validation, report).
Prints MB/s, traces/s and the reader/baseline ratio (target: >= 40%), and the ceiling: the ratio a reader
would reach if converting spans cost nothing, i.e. baseline / (baseline + validating the same traces'
fields into :class:`Trace` models). Validation is part of every read, so no reader of this design can
beat the ceiling. ``no-valid.`` is the ratio with that validation time taken out of the read: an upper
bound for building reader output without validating it (``model_construct`` is not free).

Two workloads (``--workload``): ``synthetic`` seeded runs with small messages (3-6 calls, a ~800-byte
system prompt: per-span overhead dominates), and ``tau-bench``: the 200 real GPT-4o airline runs of
``../shared/data/tau-bench-historical-trajectories`` re-emitted as each format's spans (a 6 KB policy
prompt, ~12 calls per run each resending the conversation), skipped when the data is absent.

Memory: writes a ``--gb`` OTLP file (1 GB by default; ``--gb 0`` skips it) and streams it with
``iter_traces`` in a child process, which reports its peak RSS (``VmHWM``) next to the peak of the same
child after imports only: the difference is what reading cost, to compare with the file size.
``--document-mb N`` writes one OTLP export request holding every resource block (a big single-object
document) and reads it in a child twice: record by record (the default past 64 MB) and whole.
"""

from __future__ import annotations

import argparse
import itertools
import random
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from _child_read import read_in_child
from helix.traces import IntakeReport, Trace, iter_traces

WORDS = (
    "order flight refund booking customer please policy reservation account payment status "
    "seat baggage cancel change confirm date city ticket number help"
).split()
TAU_BENCH = (
    Path(__file__).resolve().parents[1]
    / ".."
    / "shared"
    / "data"
    / "tau-bench-historical-trajectories"
    / "gpt-4o-airline.json"
)
TOOLS = ["get_order_details", "search_flights", "update_reservation", "refund_payment", "lookup_user"]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _run(rng: random.Random, i: int) -> dict[str, Any]:
    """One agent run as plain data: messages per LLM call, the tool calls, the answer."""
    system = _text(rng, 120)
    history: list[dict[str, Any]] = [{"role": "user", "content": _text(rng, 20)}]
    calls = []
    steps = rng.randint(3, 6)
    for step in range(steps):
        inputs = list(history)
        if step < steps - 1:
            call = {
                "id": f"call_{i}_{step}",
                "name": rng.choice(TOOLS),
                "arguments": {"id": f"#W{rng.randint(1, 9999)}"},
            }
            output = {"role": "assistant", "tool_calls": [call]}
            result = _text(rng, 80)
            history += [output, {"role": "tool", "tool_call_id": call["id"], "content": result}]
            calls.append((inputs, output, call, result))
        else:
            calls.append((inputs, {"role": "assistant", "content": _text(rng, 30)}, None, None))
    return {"system": system, "calls": calls, "question": history[0]["content"]}


def _parts(message: dict[str, Any]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if message.get("content"):
        kind = "tool_call_response" if message["role"] == "tool" else "text"
        parts.append(
            {"type": kind, "id": message["tool_call_id"], "response": message["content"]}
            if kind == "tool_call_response"
            else {"type": "text", "content": message["content"]}
        )
    for call in message.get("tool_calls", []):
        parts.append({"type": "tool_call", **call})
    return {"role": message["role"], "parts": parts}


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def otlp_lines(run: dict[str, Any], i: int) -> Iterator[bytes]:
    trace_id, root = f"{i:032x}", f"{i:08x}ffffffff"
    t0 = 1_795_978_993_700_000_000 + i * 10_000_000_000
    resource = {"attributes": [_attr("service.name", "bench-agent")]}

    def line(span: dict[str, Any]) -> bytes:
        request = {
            "resourceSpans": [
                {"resource": resource, "scopeSpans": [{"scope": {"name": "bench"}, "spans": [span]}]}
            ]
        }
        return orjson.dumps(request)

    for step, (inputs, output, call, result) in enumerate(run["calls"]):
        start = t0 + step * 1_000_000_000
        attrs = [
            _attr("gen_ai.operation.name", "chat"),
            _attr("gen_ai.provider.name", "openai"),
            _attr("gen_ai.request.model", "gpt-4o"),
            _attr("gen_ai.response.model", "gpt-4o-2024-08-06"),
            _attr("gen_ai.usage.input_tokens", 100 + step),
            _attr("gen_ai.usage.output_tokens", 20),
            _attr(
                "gen_ai.system_instructions",
                orjson.dumps([{"type": "text", "content": run["system"]}]).decode(),
            ),
            _attr("gen_ai.input.messages", orjson.dumps([_parts(m) for m in inputs]).decode()),
            _attr("gen_ai.output.messages", orjson.dumps([_parts(output)]).decode()),
        ]
        yield line(
            {
                "traceId": trace_id,
                "spanId": f"{i:08x}{step:04x}0000",
                "parentSpanId": root,
                "name": "chat gpt-4o",
                "kind": 3,
                "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(start + 500_000_000),
                "attributes": attrs,
                "status": {},
            }
        )
        if call is not None:
            tool_attrs = [
                _attr("gen_ai.operation.name", "execute_tool"),
                _attr("gen_ai.tool.name", call["name"]),
                _attr("gen_ai.tool.call.id", call["id"]),
                _attr("gen_ai.tool.call.arguments", orjson.dumps(call["arguments"]).decode()),
                _attr("gen_ai.tool.call.result", result),
            ]
            yield line(
                {
                    "traceId": trace_id,
                    "spanId": f"{i:08x}{step:04x}1111",
                    "parentSpanId": root,
                    "name": f"execute_tool {call['name']}",
                    "kind": 1,
                    "startTimeUnixNano": str(start + 600_000_000),
                    "endTimeUnixNano": str(start + 900_000_000),
                    "attributes": tool_attrs,
                    "status": {},
                }
            )
    yield line(
        {
            "traceId": trace_id,
            "spanId": root,
            "name": "invoke_agent bench",
            "kind": 1,
            "startTimeUnixNano": str(t0),
            "endTimeUnixNano": str(t0 + 9_000_000_000),
            "attributes": [
                _attr("gen_ai.operation.name", "invoke_agent"),
                _attr("gen_ai.conversation.id", f"c{i}"),
            ],
            "status": {"code": 1},
        }
    )


def phoenix_lines(run: dict[str, Any], i: int) -> Iterator[bytes]:
    trace_id, root = f"{i:032x}", f"{i:08x}ffffffff"
    for step, (inputs, output, call, result) in enumerate(run["calls"]):
        attrs: dict[str, Any] = {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o",
            "llm.system": "openai",
            "llm.token_count.prompt": 100,
            "llm.token_count.completion": 20,
        }
        for n, m in enumerate([{"role": "system", "content": run["system"]}, *inputs]):
            attrs[f"llm.input_messages.{n}.message.role"] = m["role"]
            if m.get("content"):
                attrs[f"llm.input_messages.{n}.message.content"] = m["content"]
        if call is not None:
            attrs["llm.output_messages.0.message.role"] = "assistant"
            attrs["llm.output_messages.0.message.tool_calls.0.tool_call.id"] = call["id"]
            attrs["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] = call["name"]
            attrs["llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments"] = orjson.dumps(
                call["arguments"]
            ).decode()
        else:
            attrs["llm.output_messages.0.message.role"] = "assistant"
            attrs["llm.output_messages.0.message.content"] = output["content"]
        yield orjson.dumps(
            {
                "name": "llm",
                "context": {"trace_id": trace_id, "span_id": f"{i:08x}{step:04x}0000"},
                "span_kind": "LLM",
                "parent_id": root,
                "start_time": "2026-05-04T10:15:02+00:00",
                "end_time": "2026-05-04T10:15:03+00:00",
                "status_code": "OK",
                "attributes": attrs,
            }
        )
        if call is not None:
            yield orjson.dumps(
                {
                    "name": call["name"],
                    "context": {"trace_id": trace_id, "span_id": f"{i:08x}{step:04x}1111"},
                    "span_kind": "TOOL",
                    "parent_id": root,
                    "start_time": "2026-05-04T10:15:03+00:00",
                    "end_time": "2026-05-04T10:15:04+00:00",
                    "status_code": "OK",
                    "attributes": {
                        "openinference.span.kind": "TOOL",
                        "tool.name": call["name"],
                        "tool.id": call["id"],
                        "input.value": orjson.dumps(call["arguments"]).decode(),
                        "output.value": result,
                    },
                }
            )
    yield orjson.dumps(
        {
            "name": "agent",
            "context": {"trace_id": trace_id, "span_id": root},
            "span_kind": "AGENT",
            "parent_id": None,
            "start_time": "2026-05-04T10:15:01+00:00",
            "end_time": "2026-05-04T10:15:09+00:00",
            "status_code": "OK",
            "attributes": {"openinference.span.kind": "AGENT", "input.value": run["question"]},
        }
    )


def agents_lines(run: dict[str, Any], i: int) -> Iterator[bytes]:
    trace_id, root = f"trace_{i:032x}", f"span_{i:016x}ffffffff"
    for step, (inputs, output, call, result) in enumerate(run["calls"]):
        openai_out = dict(output)
        if call is not None:
            openai_out = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call["id"],
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": orjson.dumps(call["arguments"]).decode(),
                        },
                    }
                ],
            }
        yield orjson.dumps(
            {
                "object": "trace.span",
                "id": f"span_{i:016x}{step:04x}0000",
                "trace_id": trace_id,
                "parent_id": root,
                "started_at": "2026-05-04T10:15:02.140000+00:00",
                "ended_at": "2026-05-04T10:15:03.330000+00:00",
                "span_data": {
                    "type": "generation",
                    "model": "gpt-4o",
                    "input": [{"role": "system", "content": run["system"]}, *inputs],
                    "output": [openai_out],
                    "usage": {"input_tokens": 100, "output_tokens": 20},
                },
                "error": None,
            }
        )
        if call is not None:
            yield orjson.dumps(
                {
                    "object": "trace.span",
                    "id": f"span_{i:016x}{step:04x}1111",
                    "trace_id": trace_id,
                    "parent_id": root,
                    "started_at": "2026-05-04T10:15:03.340000+00:00",
                    "ended_at": "2026-05-04T10:15:04.200000+00:00",
                    "span_data": {
                        "type": "function",
                        "name": call["name"],
                        "input": orjson.dumps(call["arguments"]).decode(),
                        "output": result,
                    },
                    "error": None,
                }
            )
    yield orjson.dumps(
        {
            "object": "trace.span",
            "id": root,
            "trace_id": trace_id,
            "parent_id": None,
            "started_at": "2026-05-04T10:15:02.130000+00:00",
            "ended_at": "2026-05-04T10:15:09.320000+00:00",
            "span_data": {"type": "agent", "name": "bench", "tools": TOOLS},
            "error": None,
        }
    )
    yield orjson.dumps(
        {"object": "trace", "id": trace_id, "workflow_name": "bench", "group_id": f"c{i}", "metadata": {}}
    )


def _openai_output(output: dict[str, Any], call: dict[str, Any] | None) -> dict[str, Any]:
    """The LLM's answer as an OpenAI chat message (tool call arguments as a JSON string)."""
    if call is None:
        return dict(output)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": orjson.dumps(call["arguments"]).decode()},
            }
        ],
    }


def langfuse_lines(run: dict[str, Any], i: int) -> Iterator[bytes]:
    """Langfuse v4 blob-export observation rows (snake_case; I/O as JSON strings), children first."""
    trace_id, root = f"lf-{i:08d}", f"lf-{i:08d}-root"

    def row(oid: str, parent: str, kind: str, second: int, **extra: Any) -> bytes:
        return orjson.dumps(
            {
                "id": oid,
                "trace_id": trace_id,
                "parent_observation_id": parent,
                "type": kind,
                "name": extra.pop("name", kind.lower()),
                "start_time": f"2026-05-04 10:15:{second:02d}.250000",
                "end_time": f"2026-05-04 10:15:{second:02d}.900000",
                "level": "DEFAULT",
                "status_message": "",
                "session_id": f"s-{i}",
                "trace_name": "bench",
                "tags": [],
                **extra,
            }
        )

    for step, (inputs, output, call, result) in enumerate(run["calls"]):
        messages = [{"role": "system", "content": run["system"]}, *inputs]
        yield row(
            f"{root}-gen{step}",
            root,
            "GENERATION",
            2 * step + 1,
            name="chat",
            provided_model_name="gpt-4o",
            input=orjson.dumps(messages).decode(),
            output=orjson.dumps(_openai_output(output, call)).decode(),
            usage_details={"input": 100, "output": 20},
        )
        if call is not None:
            yield row(
                f"{root}-tool{step}",
                root,
                "TOOL",
                2 * step + 2,
                name=call["name"],
                input=orjson.dumps(call["arguments"]).decode(),
                output=orjson.dumps(result).decode(),
            )
    yield row(
        root,
        "",
        "AGENT",
        0,
        name="bench",
        input=orjson.dumps(run["question"]).decode(),
        output=orjson.dumps(run["calls"][-1][1]["content"]).decode(),
    )


def langsmith_lines(run: dict[str, Any], i: int) -> Iterator[bytes]:
    """LangSmith flat runs (one per line, ``parent_run_id``; OpenAI messages), children first."""
    root = f"00000000-0000-4000-8000-{i:012d}"

    def one(rid: str, run_type: str, second: int, **extra: Any) -> bytes:
        return orjson.dumps(
            {
                "id": rid,
                "trace_id": root,
                "run_type": run_type,
                "status": "success",
                "start_time": f"2026-05-04T10:15:{second:02d}.250000",
                "end_time": f"2026-05-04T10:15:{second:02d}.900000",
                **extra,
            }
        )

    for step, (inputs, output, call, result) in enumerate(run["calls"]):
        messages = [{"role": "system", "content": run["system"]}, *inputs]
        yield one(
            f"00000000-0000-4000-9{step:02d}1-{i:012d}",
            "llm",
            2 * step + 1,
            parent_run_id=root,
            name="ChatOpenAI",
            inputs={"messages": messages, "model": "gpt-4o"},
            outputs={
                "choices": [{"message": _openai_output(output, call), "finish_reason": "stop"}],
                "usage_metadata": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120},
            },
        )
        if call is not None:
            yield one(
                f"00000000-0000-4000-9{step:02d}2-{i:012d}",
                "tool",
                2 * step + 2,
                parent_run_id=root,
                name=call["name"],
                inputs={"input": orjson.dumps(call["arguments"]).decode()},
                outputs={"output": result},
            )
    yield one(
        root,
        "chain",
        0,
        name="Agent",
        is_root=True,
        thread_id=f"thread-{i}",
        inputs={"input": run["question"]},
        outputs={"output": run["calls"][-1][1]["content"]},
    )


FORMATS: dict[str, Callable[[random.Random, int], Iterator[bytes]]] = {
    "otlp": otlp_lines,
    "openinference": phoenix_lines,
    "openai-agents": agents_lines,
    "langfuse": langfuse_lines,
    "langsmith": langsmith_lines,
}


def synthetic_runs() -> Iterator[dict[str, Any]]:
    """Seeded synthetic runs, without end (small messages: the per-span overhead dominates)."""
    rng = random.Random(7)
    i = 0
    while True:
        yield _run(rng, i)
        i += 1


def tau_bench_runs() -> list[dict[str, Any]] | None:
    """The 200 real GPT-4o airline runs of tau-bench as runs (``None`` when the data is absent).

    Each assistant turn becomes one LLM call whose input is the conversation so far (as a chat agent
    resends it) and whose output is that turn; a turn with tool calls keeps its first call and that call's
    result (further calls of the same turn and their results are dropped, to fit the generators' shape).
    """
    from helix.traces import read_traces

    if not TAU_BENCH.is_file():
        return None
    runs = []
    for trace in read_traces(TAU_BENCH, format="tau-bench").traces:
        messages = trace.messages or []
        system = next((m.content or "" for m in messages if m.role == "system"), "")
        results = {m.tool_call_id: m.content or "" for m in messages if m.role == "tool"}
        history: list[dict[str, Any]] = []
        calls = []
        for message in messages:
            if message.role in ("user", "system"):
                if message.role == "user":
                    history.append({"role": "user", "content": message.content or ""})
                continue
            if message.role != "assistant":
                continue
            inputs = list(history)
            tool_call = message.tool_calls[0] if message.tool_calls else None
            if tool_call is not None and tool_call.id in results:
                args = tool_call.arguments if isinstance(tool_call.arguments, dict) else {}
                call = {"id": tool_call.id, "name": tool_call.name, "arguments": args}
                output = {"role": "assistant", "tool_calls": [call]}
                result = results[tool_call.id]
                history += [output, {"role": "tool", "tool_call_id": call["id"], "content": result}]
                calls.append((inputs, output, call, result))
            else:
                output = {"role": "assistant", "content": message.content or ""}
                history.append(output)
                calls.append((inputs, output, None, None))
        while calls and calls[-1][2] is not None:
            calls.pop()  # end on the agent's answer, as the generators expect
        if calls and history and history[0]["role"] == "user":
            runs.append({"system": system, "calls": calls, "question": history[0]["content"]})
    return runs


def write(
    path: Path,
    lines: Callable[[dict[str, Any], int], Iterator[bytes]],
    target_bytes: int,
    runs: Iterable[dict[str, Any]],
) -> int:
    size = count = 0
    with path.open("wb") as fh:
        for run in runs:
            if size >= target_bytes:
                break
            chunk = b"".join(line + b"\n" for line in lines(run, count))
            fh.write(chunk)
            size += len(chunk)
            count += 1
    return count


def _best(fn: Callable[[], Any], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _validation_time(path: Path, fmt: str) -> float:
    """Seconds spent validating each trace's fields into a :class:`Trace`, one trace at a time as a
    reader does (holding them all would add garbage-collection work the reader does not have)."""
    total = 0.0
    for trace in iter_traces(path, format=fmt):
        fields = trace.model_dump()
        start = time.perf_counter()
        Trace.model_validate(fields)
        total += time.perf_counter() - start
    return total


def throughput(directory: Path, mb: float, repeats: int, workloads: list[str]) -> None:
    print(
        f"{'workload':<11}{'format':<15}{'MB':>7}{'traces':>8}{'orjson MB/s':>13}{'reader MB/s':>13}"
        f"{'traces/s':>10}{'ratio':>8}{'ceiling':>9}{'no-valid.':>11}"
    )
    for workload in workloads:
        if workload == "tau-bench":
            real = tau_bench_runs()
            if real is None:
                print(f"{workload:<11}skipped: {TAU_BENCH} is absent")
                continue
        for name, lines in FORMATS.items():
            path = directory / f"{workload}-{name}.jsonl"
            source = synthetic_runs() if workload == "synthetic" else itertools.cycle(real)
            runs = write(path, lines, int(mb * 1e6), source)
            size = path.stat().st_size / 1e6

            def baseline(p: Path = path) -> None:
                with p.open("rb") as fh:
                    for line in fh:
                        orjson.loads(line)

            def reader(p: Path = path, fmt: str = name, expected: int = runs) -> None:
                report = IntakeReport()
                count = sum(1 for _ in iter_traces(p, format=fmt, report=report))
                assert count == expected and not report.skipped, (count, expected, report.skipped[:2])

            base, read = _best(baseline, repeats), _best(reader, repeats)
            validation = min(_validation_time(path, name) for _ in range(repeats))
            ceiling = base / (base + validation)
            unvalidated = base / max(read - validation, 1e-9)
            print(
                f"{workload:<11}{name:<15}{size:>7.1f}{runs:>8}{size / base:>13.1f}{size / read:>13.1f}"
                f"{runs / read:>10.0f}{base / read:>8.0%}{ceiling:>9.0%}{unvalidated:>11.0%}"
            )
            path.unlink()


def memory(directory: Path, gb: float) -> None:
    path = directory / "big.otlp.jsonl"
    start = time.perf_counter()
    runs = write(path, otlp_lines, int(gb * 1e9), synthetic_runs())
    size = path.stat().st_size / 1e6
    print(f"\nwrote {size / 1e3:.2f} GB OTLP ({runs} traces) in {time.perf_counter() - start:.0f}s")
    read = read_in_child(path, "otlp")
    print(read.line("default", size) + f" = {(read.peak_mb - read.imports_mb) / size:.1%} of the file")
    path.unlink()


def document_memory(directory: Path, mb: float) -> None:
    """One OTLP export request holding every resource block, pretty-printed, read streamed and whole."""
    blocks = []
    size = 0
    for i, run in enumerate(synthetic_runs()):
        for line in otlp_lines(run, i):
            block = orjson.loads(line)["resourceSpans"][0]
            blocks.append(block)
            size += len(line)
        if size >= mb * 1e6:
            break
    path = directory / "one-request.json"
    path.write_bytes(orjson.dumps({"resourceSpans": blocks}, option=orjson.OPT_INDENT_2))
    del blocks
    size = path.stat().st_size / 1e6
    print(f"\none OTLP request document of {size:.0f} MB ({i + 1} traces)")
    for mode in ("default", "whole"):  # default: record by record from 64 MB
        print(read_in_child(path, "otlp", whole=mode == "whole").line(mode, size))
    path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=40.0, help="size of each throughput file (MB)")
    parser.add_argument(
        "--gb", type=float, default=1.0, help="size of the memory-test OTLP file (GB); 0 skips"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--document-mb",
        type=float,
        default=0,
        help="size of one big OTLP request document read streamed and whole (0 skips)",
    )
    parser.add_argument(
        "--workload",
        choices=["synthetic", "tau-bench", "both"],
        default="both",
        help="synthetic runs (small messages) and/or tau-bench's real airline runs re-emitted as spans",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        throughput(
            Path(tmp),
            args.mb,
            args.repeats,
            ["synthetic", "tau-bench"] if args.workload == "both" else [args.workload],
        )
        if args.gb > 0:
            memory(Path(tmp), args.gb)
        if args.document_mb > 0:
            document_memory(Path(tmp), args.document_mb)


if __name__ == "__main__":
    main()
