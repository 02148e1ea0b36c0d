"""Benchmark the model transport against ScriptedLLMServer (run by hand).

    uv run python benchmarks/bench_judge_run.py [--units 4096] [--latency-ms 100] [--servers 2]
                                                [--concurrency 64 256 512] [--profile]

The scripted server runs in separate processes (sharing one port with SO_REUSEPORT), so its CPU
is not counted against the client. For each concurrency it times, on the same prepared run:

* ``bare aiohttp``: a plain asyncio + aiohttp loop posting the same rendered prompts (the floor);
* ``openai client``: ``open_model(...).complete`` on the same prompts, nothing else (the SDK's cost);
* ``transport``: ``judge_packets_with_model``: packet read and check, render, HTTP, parse, verdict
  and receipt writes.

Printed per row: efficiency = (N x latency / concurrency) / wall, units/s, and client CPU ms per
unit (process CPU time of this process). ``--profile`` adds a CPU-time cProfile of the transport at
the highest concurrency.

Findings (2-vCPU VM, 4096 units, 100 ms, 2026-11-29, three runs, noisy shared machine): at
concurrency 512 the client is CPU-bound. bare aiohttp ~0.2-0.3 ms CPU/unit (2,600-3,400 units/s,
server-bound); openai client alone ~0.7-0.9 ms/unit (1,100-1,200 units/s); full transport
~1.8-2.2 ms/unit (500-610 units/s). What moved the transport from ~350 to ~500-610 units/s:
receipts appended to one receipts.jsonl instead of a file per unit, verdict files written on a
background thread (file creation is the costliest syscall here and releases the GIL), a cheaper
temp-file name than mkstemp, and gc.freeze() of the run's long-lived objects for the pass (full
collections re-scanning them cost ~30% of the CPU). The openai SDK's request building (URL and
header models, deep copies) remains the largest single cost; the client posts pre-encoded JSON
through the SDK's ``post`` and reads the raw response (see ``helix/models/_clients.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import io
import multiprocessing as mp
import pstats
import re
import socket
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from multiprocessing.connection import Connection
from pathlib import Path

import aiohttp
import orjson

from helix._util import write_atomic
from helix.judging import (
    CriteriaMatrix,
    Criterion,
    judge_packets_with_model,
    list_packets,
    prep_run,
    render_prompt,
)
from helix.models import RECEIPTS_FILE, ChatMessage, ModelSpec, ReceiptLog, open_model, read_receipt_log
from helix.models.testing import RecordedRequest, ScriptedLLMServer
from helix.traces import Message, Trace

MODEL = "gpt-4o-2024-08-06"
_IDS = re.compile(r"Criterion ids to judge, in this order: (.+)\.\s*$", re.MULTILINE)


# ------------------------------------------------------------------ server processes


def _answer(req: RecordedRequest) -> str:
    last = req.body["messages"][-1]["content"]
    ids = _IDS.findall(last)[0].split(", ")
    verdicts = [
        {
            "criterion_id": c,
            "critique": "The agent answered from the tool result.",
            "result": "pass",
            "confidence": 0.9,
        }
        for c in ids
    ]
    return orjson.dumps({"verdicts": verdicts}).decode()


def _serve(port: int, latency_s: float, conn: Connection) -> None:
    async def main() -> None:
        srv = ScriptedLLMServer(_answer, latency_s=latency_s, record=False, port=port, reuse_port=True)
        await srv.start()
        conn.send(srv.port)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, conn.recv)  # any message means stop
        await srv.stop()

    asyncio.run(main())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------ workload


def make_run(root: Path, units: int) -> Path:
    criteria = tuple(
        Criterion(
            id=cid,
            title=cid,
            kind="llm",
            question=f"Did the agent get {cid} right?",
            pass_definition="it did",
            fail_definition="it did not",
        )
        for cid in ("grounded", "policy", "tone")
    )
    traces = [
        Trace(
            id=f"t{i}",
            input=f"Where is order {i}?",
            output=f"Order {i} has shipped.",
            messages=[
                Message(role="user", content=f"Where is order {i}? " + "Some context. " * 40),
                Message(role="assistant", content=f"Order {i} has shipped and arrives on Tuesday."),
            ],
        )
        for i in range(units)
    ]
    run_dir = root / "run"
    prep_run(traces, CriteriaMatrix(subject="bench", criteria=criteria), run_dir)
    return run_dir


def reset(run_dir: Path) -> None:
    """Set the verdicts and receipts of the last pass aside (deleted with the temp dir at the end).

    Not deleted here: on ext4, creating thousands of files right after deleting thousands makes
    each creation several times dearer (measured: 0.13 vs 0.9 ms of CPU per verdict file), which
    is a property of the benchmark's loop, not of a judging pass.
    """
    trash = run_dir.parent / "trash" / str(time.perf_counter_ns())
    trash.mkdir(parents=True)
    for name in ("verdicts", RECEIPTS_FILE):
        if (run_dir / name).exists():
            (run_dir / name).rename(trash / name)


# ------------------------------------------------------------------ the three clients


async def bare_aiohttp(base_url: str, prompts: list[list[ChatMessage]], concurrency: int) -> None:
    limit = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(messages: list[ChatMessage]) -> None:
            async with limit:
                body = {"model": MODEL, "messages": messages, "temperature": 0}
                async with session.post(base_url + "/chat/completions", json=body) as resp:
                    data = await resp.json()
                    orjson.loads(data["choices"][0]["message"]["content"])

        await asyncio.gather(*(one(m) for m in prompts))


async def openai_sdk(base_url: str, prompts: list[list[ChatMessage]], concurrency: int) -> None:
    """The official SDK's own path (the openai-client baseline): ``chat.completions.create``."""
    import openai

    client = openai.AsyncOpenAI(
        api_key="helix-no-key", base_url=base_url, max_retries=0, http_client=openai.DefaultAioHttpClient()
    )
    limit = asyncio.Semaphore(concurrency)
    try:

        async def one(messages: list[ChatMessage]) -> None:
            async with limit:
                done = await client.chat.completions.create(
                    model=MODEL,
                    messages=[{"role": m["role"], "content": m["content"]} for m in messages],  # type: ignore[misc]
                    temperature=0,
                )
                orjson.loads(done.choices[0].message.content or "")

        await asyncio.gather(*(one(m) for m in prompts))
    finally:
        await client.close()


async def openai_sdk_post(base_url: str, prompts: list[list[ChatMessage]], concurrency: int) -> None:
    """The SDK's low-level ``post`` with pre-encoded bytes (how Helix's client called it before)."""
    import httpx2
    import openai

    client = openai.AsyncOpenAI(
        api_key="helix-no-key", base_url=base_url, max_retries=0, http_client=openai.DefaultAioHttpClient()
    )
    limit = asyncio.Semaphore(concurrency)
    try:

        async def one(messages: list[ChatMessage]) -> None:
            async with limit:
                body = orjson.dumps(
                    {
                        "model": MODEL,
                        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
                        "temperature": 0,
                    }
                )
                resp = await client.post("/chat/completions", content=body, cast_to=httpx2.Response)
                data = orjson.loads(resp.content)
                orjson.loads(data["choices"][0]["message"]["content"])

        await asyncio.gather(*(one(m) for m in prompts))
    finally:
        await client.close()


async def helix_client(spec: ModelSpec, prompts: list[list[ChatMessage]], concurrency: int) -> None:
    """Helix's client alone (``open_model(...).complete``, thin aiohttp path), nothing else."""
    model = open_model(spec)
    limit = asyncio.Semaphore(concurrency)
    try:

        async def one(messages: list[ChatMessage]) -> None:
            async with limit:
                await model.complete(messages)

        await asyncio.gather(*(one(m) for m in prompts))
    finally:
        await model.aclose()


async def transport(spec: ModelSpec, run_dir: Path, concurrency: int) -> None:
    model = open_model(spec)
    try:
        summary = await judge_packets_with_model(run_dir, model, concurrency=concurrency)
    finally:
        await model.aclose()
    if summary.judged != summary.pending or summary.unscored:
        raise SystemExit(f"benchmark run went wrong: {summary.describe()}")


def check_receipts(run_dir: Path) -> None:
    """After a timed pass (not timed): one receipt per unit, one call and one attempt each."""
    log = read_receipt_log(run_dir)
    calls = sum(r.calls for r in log.receipts)
    attempts = sum(r.attempts for r in log.receipts)
    if calls != len(log.receipts) or attempts != calls or len(log.attempts) != attempts:
        print(
            f"  note: {calls} calls, {attempts} HTTP attempts, {len(log.attempts)} attempt lines "
            f"for {len(log.receipts)} units"
        )


async def file_writes(run_dir: Path, n: int) -> None:
    """The filesystem floor: n atomic verdict-sized files and n receipt lines, nothing else."""
    target = run_dir / "verdicts"
    target.mkdir(exist_ok=True)
    data = b"x" * 900
    log = ReceiptLog(run_dir)
    try:
        for i in range(n):
            log.append_raw(b"{}\n")
            write_atomic(target / f"floor{i:06d}.verdict.json", data, fsync=False)
    finally:
        log.close()


@dataclass
class Row:
    name: str
    concurrency: int
    wall_s: float
    cpu_s: float


async def _as_coroutine(fn: Callable[[], Awaitable[None]]) -> None:
    await fn()


def measure(name: str, concurrency: int, fn: Callable[[], Awaitable[None]]) -> Row:
    cpu0, t0 = time.process_time(), time.perf_counter()
    asyncio.run(_as_coroutine(fn))
    return Row(name, concurrency, time.perf_counter() - t0, time.process_time() - cpu0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=4096)
    ap.add_argument("--latency-ms", type=float, default=100.0)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[64, 256, 512])
    ap.add_argument("--servers", type=int, default=2, help="server processes sharing the port")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--repeat", type=int, default=2, help="runs per row; the least CPU is reported")
    ap.add_argument(
        "--run-base",
        action="append",
        help="where to put a run directory (repeatable); default: the temp dir and /dev/shm (tmpfs)",
    )
    args = ap.parse_args()
    latency = args.latency_ms / 1000.0

    ctx = mp.get_context("spawn")
    port = _free_port()
    pipes, procs = [], []
    for _ in range(args.servers):
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(port, latency, child), daemon=True)
        proc.start()
        parent.recv()
        pipes.append(parent)
        procs.append(proc)
    base_url = f"http://127.0.0.1:{port}/v1"
    spec = ModelSpec(provider="openai", model=MODEL, base_url=base_url)

    bases = args.run_base or [None, *(["/dev/shm"] if Path("/dev/shm").is_dir() else [])]
    with contextlib.ExitStack() as stack:
        runs: list[tuple[str, Path]] = []
        prep_s = 0.0
        for base in bases:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(dir=base))
            t0 = time.perf_counter()
            runs.append((base or tempfile.gettempdir(), make_run(Path(tmp), args.units)))
            prep_s = time.perf_counter() - t0
        run_dir = runs[0][1]
        prompts = [render_prompt(p) for p in list_packets(run_dir)]
        n = len(prompts)
        print(
            f"{n} units, {len(prompts[0][1]['content']) + len(prompts[0][0]['content'])} prompt chars each, "
            f"server latency {args.latency_ms:.0f} ms, {args.servers} server process(es); prep {prep_s:.1f}s; "
            f"python {sys.version.split()[0]}; best CPU of {args.repeat} run(s) per row"
        )
        print(f"{'client':<30}{'conc':>6}{'wall s':>9}{'eff':>7}{'units/s':>10}{'cpu ms/unit':>13}")

        def best(
            name: str, c: int, fn: Callable[[], Awaitable[None]], before: Callable[[], None] = lambda: None
        ) -> Row:
            rows = []
            for _ in range(args.repeat):
                before()
                gc.collect()
                rows.append(measure(name, c, fn))
            return min(rows, key=lambda r: r.cpu_s)

        for c in args.concurrency:
            rows = [
                best("bare aiohttp", c, partial(bare_aiohttp, base_url, prompts, c)),
                best("openai SDK create", c, partial(openai_sdk, base_url, prompts, c)),
                best("openai SDK post (old client)", c, partial(openai_sdk_post, base_url, prompts, c)),
                best("helix client", c, partial(helix_client, spec, prompts, c)),
            ]
            for base, rd in runs:
                rows.append(
                    best(f"file writes alone [{base}]", c, partial(file_writes, rd, n), partial(reset, rd))
                )
                rows.append(
                    best(f"transport [{base}]", c, partial(transport, spec, rd, c), partial(reset, rd))
                )
                check_receipts(rd)
            for r in rows:
                ideal = n * latency / c
                print(
                    f"{r.name:<30}{r.concurrency:>6}{r.wall_s:>9.2f}{ideal / r.wall_s:>7.2f}"
                    f"{n / r.wall_s:>10.0f}{1000 * r.cpu_s / n:>13.2f}"
                )
        if args.profile:
            c = max(args.concurrency)
            reset(run_dir)
            prof = cProfile.Profile(time.thread_time)  # the event loop's thread (the writer thread apart)
            prof.enable()
            asyncio.run(transport(spec, run_dir, c))
            prof.disable()
            out = io.StringIO()
            st = pstats.Stats(prof, stream=out)
            st.sort_stats("tottime").print_stats(30)
            st.sort_stats("cumulative").print_stats(r"helix|aiohttp/client.py", 30)
            print(f"\nCPU profile of the transport's event-loop thread at concurrency {c}:")
            print(out.getvalue())

    for pipe in pipes:
        pipe.send("stop")
    for proc in procs:
        proc.join(timeout=5)


if __name__ == "__main__":
    main()
