"""Inspect AI eval logs: a real ``.eval`` written offline by inspect_ai's ``mockllm/model``, its ``.json``
twin, storage indirections, the missing-extra message, damaged archives and fuzzed samples."""

from __future__ import annotations

import copy
import os
import random
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_values import expand_deep, odd_values, read_every_skip
from helix._exceptions import UsageError
from helix.traces import Trace, detect_format, read_traces, write_traces_jsonl

pytestmark = [
    # inspect_ai leaves anyio streams to the garbage collector after an eval; not ours to fix.
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


def _run_eval(log_dir: Path) -> Path:
    """Two samples x two epochs of a weather task with one tool, run offline against mockllm/model."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import ToolError, tool

    @tool
    def get_weather():  # type: ignore[no-untyped-def]
        async def execute(city: str) -> str:
            """Look up the weather in a city.

            Args:
                city: The city.
            """
            if city == "Atlantis":
                raise ToolError("no such city")
            return f"rainy in {city}"

        return execute

    def counted(output: ModelOutput) -> ModelOutput:
        # Explicit usage: otherwise mockllm counts tokens with tiktoken, which downloads its encoding.
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return output

    outputs = 2 * [
        counted(
            ModelOutput.for_tool_call("mockllm/model", "get_weather", {"city": "Paris"}, tool_call_id="c1")
        ),
        counted(ModelOutput.from_content("mockllm/model", "It is rainy in Paris.")),
        counted(
            ModelOutput.for_tool_call("mockllm/model", "get_weather", {"city": "Atlantis"}, tool_call_id="c2")
        ),
        counted(ModelOutput.from_content("mockllm/model", "I do not know.")),
    ]
    task = Task(
        dataset=[
            Sample(id="paris", input="Weather in Paris?", target="rainy"),
            Sample(id="atlantis", input="Weather in Atlantis?", target="sunny"),
        ],
        solver=[use_tools(get_weather()), generate()],
        scorer=includes(),
        epochs=2,
    )
    model = get_model("mockllm/model", custom_outputs=outputs)
    with warnings.catch_warnings():  # pytest turns warnings into errors; inspect_ai's own are not ours
        warnings.simplefilter("ignore")
        logs = inspect_eval(task, model=model, log_dir=str(log_dir), display="none", max_samples=1)
    assert logs[0].status == "success", logs[0].error
    return Path(logs[0].location)


@pytest.fixture(scope="module")
def eval_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run_eval(tmp_path_factory.mktemp("inspect-logs"))


@pytest.fixture(scope="module")
def json_log(eval_log: Path) -> Path:
    from inspect_ai.log import read_eval_log, write_eval_log

    target = eval_log.with_suffix(".json")
    write_eval_log(read_eval_log(str(eval_log)), str(target), format="json")
    return target


def _tool_linked(trace: Trace) -> None:
    """Every tool event carries the id of an assistant tool call of the same name."""
    calls = {
        call["id"]: call["name"]
        for event in trace.events
        if event.kind == "llm" and isinstance(event.output, list)
        for message in event.output
        for call in message.get("tool_calls", [])
    }
    tools = trace.tool_events()
    assert tools, trace.id
    for event in tools:
        assert event.tool_call_id is not None
        assert calls.get(event.tool_call_id) == event.name


def _lean(log: dict[str, Any], *, small: bool = False) -> dict[str, Any]:
    """The log without the raw provider calls (large, not read by Helix); ``small`` also keeps only the
    model and tool events and drops tool schemas: ten thousand samples then read in seconds."""
    for sample in log["samples"]:
        for event in sample["events"]:
            event.pop("call", None)
            if small:
                event.pop("tools", None)
                event.pop("config", None)
        if small:
            sample["events"] = [e for e in sample["events"] if e["event"] in ("model", "tool")]
            for event in sample["events"]:
                if event["event"] == "model":
                    event["input"] = event["input"][-1:]
    return log


def test_eval_archive_from_the_real_writer(eval_log: Path) -> None:
    assert detect_format(eval_log).format == "inspect"
    intake = read_traces(eval_log)
    report = intake.report
    assert report.format == "inspect" and report.records_skipped == 0
    traces = intake.traces
    assert len(traces) == 4
    assert sorted((t.metadata["sample_id"], t.metadata["epoch"]) for t in traces) == [
        ("atlantis", 1),
        ("atlantis", 2),
        ("paris", 1),
        ("paris", 2),
    ]
    assert len({t.id for t in traces}) == 4
    assert len({t.session_id for t in traces}) == 1 and traces[0].session_id
    for trace in traces:
        assert trace.name == "task" and trace.status == "ok"
        assert trace.input == (
            "Weather in Paris?" if trace.metadata["sample_id"] == "paris" else "Weather in Atlantis?"
        )
        assert trace.output in ("It is rainy in Paris.", "I do not know.")
        assert trace.metadata["_target"] in ("rainy", "sunny")
        assert [s.name for s in trace.scores] == ["includes"]
        assert trace.scores[0].value in ("C", "I") and trace.scores[0].source == "inspect"
        llm = [e for e in trace.events if e.kind == "llm"]
        assert len(llm) == 2
        assert all(e.usage is not None and e.usage.total_tokens == 15 for e in llm)
        assert llm[0].input[0]["role"] == "user"
        _tool_linked(trace)
        ids = {e.id for e in trace.events}
        assert all(e.parent_id is None or e.parent_id in ids for e in trace.events)
        assert trace.messages is not None and [m.role for m in trace.messages] == [
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        assert trace.messages[1].tool_calls[0].name == "get_weather"
    errors = [e for t in traces for e in t.tool_events() if e.status == "error"]
    assert len(errors) == 2 and {e.error for e in errors} == {"no such city"}
    assert report.tools == {"get_weather": 4} and report.error_tool_results == 2
    scores = sorted((t.output, t.scores[0].value) for t in traces)
    assert scores[0][1] == "I" and scores[-1][1] == "C"


def test_json_log_reads_like_the_archive_and_round_trips(
    json_log: Path, eval_log: Path, tmp_path: Path
) -> None:
    assert detect_format(json_log).format == "inspect"
    from_json = read_traces(json_log)
    from_eval = read_traces(eval_log)
    assert from_json.report.records_skipped == 0
    key = lambda t: t.id  # noqa: E731
    assert [t.model_dump() for t in sorted(from_json.traces, key=key)] == [
        t.model_dump() for t in sorted(from_eval.traces, key=key)
    ]
    out = write_traces_jsonl(from_json.traces, tmp_path / "canonical.jsonl")
    again = read_traces(out)
    assert again.report.format == "helix"
    assert [t.model_dump() for t in again.traces] == [t.model_dump() for t in from_json.traces]


def test_a_big_json_log_is_read_sample_by_sample_with_the_same_result(
    json_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the streaming size (lowered to 0 here) samples are parsed one at a time, header from ``eval``."""
    from helix.traces import _stream

    whole = read_traces(json_log)
    monkeypatch.setattr(_stream, "STREAM_DOCUMENT_BYTES", 0)
    streamed = read_traces(json_log)
    assert [t.model_dump() for t in streamed.traces] == [t.model_dump() for t in whole.traces]
    assert streamed.traces and streamed.report.skipped == whole.report.skipped == []


def test_pooled_inputs_and_attachments_are_resolved(json_log: Path, tmp_path: Path) -> None:
    log = orjson.loads(json_log.read_bytes())
    sample = log["samples"][0]
    model_event = next(e for e in sample["events"] if e["event"] == "model")
    pooled = list(model_event["input"])
    model_event["input"] = []
    model_event["input_refs"] = [[0, len(pooled)]]
    sample["events_data"] = {"messages": pooled, "calls": []}
    sample["attachments"] = {"abc123": "a long system prompt kept as an attachment"}
    sample["messages"].insert(0, {"role": "system", "content": "attachment://abc123"})
    path = tmp_path / "pooled.json"
    path.write_bytes(orjson.dumps(log))
    trace = read_traces(path).traces[0]
    llm = next(e for e in trace.events if e.kind == "llm")
    assert [m["content"] for m in llm.input] == [m["content"] for m in pooled]
    assert trace.messages is not None
    assert trace.messages[0].content == "a long system prompt kept as an attachment"


def test_without_inspect_ai_the_error_names_the_extra(eval_log: Path) -> None:
    script = (
        "import sys; sys.modules['inspect_ai'] = None\n"
        "from helix.traces import read_traces\n"
        "from helix._exceptions import UsageError\n"
        "try:\n"
        f"    read_traces({str(eval_log)!r})\n"
        "except UsageError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'helix-evals[inspect]'" in done.stdout
    assert str(eval_log) in done.stdout


def test_damaged_archives_are_reported_not_raised(eval_log: Path, tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(eval_log.read_bytes()[:2000])
    with pytest.raises(UsageError, match="damaged ZIP archive"):
        read_traces(truncated)
    intake = read_traces(truncated, format="inspect")
    assert intake.traces == []
    assert intake.report.skipped_by_reason == {"unreadable": 1}
    assert intake.report.skipped[0].path == str(truncated)


def test_a_log_without_samples_reads_as_zero_traces(json_log: Path, tmp_path: Path) -> None:
    log = orjson.loads(json_log.read_bytes())
    log.pop("samples")
    log["status"] = "started"
    path = tmp_path / "header-only.json"
    path.write_bytes(orjson.dumps(log))
    intake = read_traces(path)
    assert intake.report.format == "inspect" and intake.traces == []
    assert any("no samples" in note for note in intake.report.notes)


# -- fuzzing -------------------------------------------------------------------------------------------------


def _dump(log: dict[str, Any]) -> bytes:
    """JSON of ``log`` with each ``"__DEEP_n__"`` placeholder replaced by n nested lists (orjson writes
    at most 255 levels, but reads up to 1024: deeper values reach the reader only as text)."""
    raw = orjson.dumps(log, option=orjson.OPT_NON_STR_KEYS)
    return expand_deep(raw)


_SAMPLE_KEYS = (
    "id",
    "epoch",
    "input",
    "messages",
    "output",
    "scores",
    "events",
    "metadata",
    "error",
    "target",
)
_EVENT_KEYS = ("event", "input", "output", "span_id", "id", "arguments", "error", "timestamp", "function")


def _mutate(sample: dict[str, Any], rng: random.Random, odd: Any) -> None:
    where = rng.random()
    if where < 0.4:
        sample[rng.choice(_SAMPLE_KEYS)] = odd
    elif where < 0.8 and sample.get("events"):
        event = rng.choice(sample["events"])
        event[rng.choice(_EVENT_KEYS)] = odd
    elif sample.get("messages"):
        message = rng.choice(sample["messages"])
        message[rng.choice(("role", "content", "tool_calls", "tool_call_id"))] = odd


def _check_every_sample_accounted(path: Path, n_samples: int) -> None:
    intake = read_every_skip(path, "inspect")
    skipped = {s.record for s in intake.report.skipped}
    assert len(skipped) == intake.report.records_skipped  # one skip per bad sample, never two
    assert intake.report.traces_read + len(skipped) == n_samples
    for trace in intake.traces:
        trace.model_dump_json()  # every trace read is writable


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), odd=st.lists(odd_values(max_depth=1000), min_size=1, max_size=8))
def test_fuzzed_samples_never_crash_and_are_all_counted(
    json_log: Path, tmp_path: Path, seed: int, odd: list[Any]
) -> None:
    log = _lean(orjson.loads(json_log.read_bytes()))
    rng = random.Random(seed)
    samples = []
    for value in odd:
        sample = copy.deepcopy(rng.choice(log["samples"]))
        _mutate(sample, rng, value)
        samples.append(sample)
    log["samples"] = samples + [7, "not a sample", None]
    path = tmp_path / f"fuzz-{seed}.json"
    path.write_bytes(_dump(log))
    _check_every_sample_accounted(path, len(log["samples"]))


# The bar is 10,000 fuzzed records per reader: run with HELIX_FUZZ_RECORDS=10000 (the default
# keeps the suite fast on a shared machine).
FUZZ_RECORDS = int(os.environ.get("HELIX_FUZZ_RECORDS", "1500"))


def test_bulk_fuzzed_samples(json_log: Path, tmp_path: Path) -> None:
    log = _lean(orjson.loads(json_log.read_bytes()), small=True)
    rng = random.Random(20261129)
    deep = "__DEEP_900__"
    oddities: list[Any] = [None, True, 3, -1.5, "", "?", [1], {"a": 1}, "x" * 5_000, deep]
    samples = []
    bases = [orjson.dumps(sample) for sample in log["samples"]]
    for _ in range(FUZZ_RECORDS):
        sample = orjson.loads(rng.choice(bases))  # a fresh copy, faster than deepcopy
        if rng.random() < 0.8:
            _mutate(sample, rng, rng.choice(oddities))
        samples.append(sample)
    log["samples"] = samples
    path = tmp_path / "fuzz-bulk.json"
    path.write_bytes(_dump(log))
    _check_every_sample_accounted(path, FUZZ_RECORDS)


def test_truncated_and_invalid_utf8_json_logs(json_log: Path, tmp_path: Path) -> None:
    raw = json_log.read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(raw[: len(raw) // 2])
    intake = read_traces(cut, format="inspect")
    assert intake.traces == [] and intake.report.skipped_by_reason == {"invalid-json": 1}
    bad = tmp_path / "bad-utf8.json"
    bad.write_bytes(raw.replace(b"Weather in Paris?", b"Weather in \xff\xfe?", 1))
    intake = read_traces(bad, format="inspect")
    assert intake.traces == [] and intake.report.records_skipped == 1
