"""Span fixtures made at test time by the real writers (no network, no API key).

- OTLP/JSON: the OpenTelemetry SDK (``TracerProvider`` + ``SimpleSpanProcessor``) with the official
  file exporters of ``opentelemetry-exporter-otlp-json-file`` (``FileSpanExporter`` for traces,
  ``FileLogExporter`` for the GenAI message events of the older conventions).
- OpenAI Agents SDK: ``agents.tracing`` spans ended offline, captured with a ``TracingProcessor`` that
  writes ``trace.export()`` / ``span.export()`` as JSONL (what users do to keep traces on disk).
- Phoenix / OpenInference: no Phoenix writer runs here (``arize-phoenix`` is not a dependency), so the
  JSONL spans are built in the shape of Phoenix's REST/JSONL export; the Parquet file is written with
  pyarrow from the same rows, flattened into ``attributes.<key>`` columns like ``TraceDataset.save``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

SYSTEM = "You are a weather bot. Use get_weather."


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def write_otlp(directory: Path, *, runs: int = 2, old_conventions: bool = False) -> tuple[Path, Path]:
    """Agent runs exported by the OTel SDK: ``traces.jsonl`` (one line per span) and ``logs.jsonl``.

    Each run: ``invoke_agent`` root -> ``chat`` (asks for a tool) -> ``execute_tool`` (fails on odd runs)
    -> ``chat`` (answers). New conventions put messages on span attributes; ``old_conventions`` uses
    ``gen_ai.system``, ``prompt_tokens``/``completion_tokens`` and message log records instead.
    """
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import SpanKind, Status, StatusCode

    traces_path, logs_path = directory / "traces.jsonl", directory / "logs.jsonl"
    resource = Resource.create({"service.name": "weather-agent"})
    tracer_provider = TracerProvider(resource=resource)
    span_exporter = FileSpanExporter(traces_path)
    tracer_provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    logger_provider = LoggerProvider(resource=resource)
    log_exporter = FileLogExporter(logs_path)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    tracer = tracer_provider.get_tracer("helix.fixtures", "1.0")
    logger = logger_provider.get_logger("helix.fixtures")
    provider_key = "gen_ai.system" if old_conventions else "gen_ai.provider.name"
    in_key = "gen_ai.usage.prompt_tokens" if old_conventions else "gen_ai.usage.input_tokens"
    out_key = "gen_ai.usage.completion_tokens" if old_conventions else "gen_ai.usage.output_tokens"

    for run in range(runs):
        city = f"City{run}"
        question = f"Weather in {city}?"
        answer = f"It is 21C in {city}." if run % 2 == 0 else "I could not reach the weather service."
        call_id = f"call_{run}"
        user = {"role": "user", "parts": [{"type": "text", "content": question}]}
        ask = {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": call_id, "name": "get_weather", "arguments": {"city": city}}
            ],
            "finish_reason": "tool_calls",
        }
        result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": "21C"}]}
        final = {"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}
        root_attrs: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "WeatherBot",
            "gen_ai.conversation.id": f"conv_{run}",
            provider_key: "openai",
        }
        if not old_conventions:
            root_attrs["gen_ai.input.messages"] = _json([user])
            root_attrs["gen_ai.output.messages"] = _json([final])
        with tracer.start_as_current_span("invoke_agent WeatherBot", attributes=root_attrs) as root:
            for step in range(2):
                attrs: dict[str, Any] = {
                    "gen_ai.operation.name": "chat",
                    provider_key: "openai",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.response.model": "gpt-4o-2024-08-06",
                    in_key: 40 + step,
                    out_key: 10 + step,
                    "gen_ai.response.finish_reasons": ["tool_calls" if step == 0 else "stop"],
                }
                history = [user] if step == 0 else [user, ask, result]
                if not old_conventions:
                    attrs["gen_ai.system_instructions"] = _json([{"type": "text", "content": SYSTEM}])
                    attrs["gen_ai.input.messages"] = _json(history)
                    attrs["gen_ai.output.messages"] = _json([ask if step == 0 else final])
                with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT, attributes=attrs):
                    if old_conventions:
                        logger.emit(event_name="gen_ai.system.message", body={"content": SYSTEM})
                        logger.emit(event_name="gen_ai.user.message", body={"content": question})
                        if step == 1:
                            logger.emit(
                                event_name="gen_ai.assistant.message",
                                body={
                                    "content": None,
                                    "tool_calls": [
                                        {
                                            "id": call_id,
                                            "type": "function",
                                            "function": {
                                                "name": "get_weather",
                                                "arguments": _json({"city": city}),
                                            },
                                        }
                                    ],
                                },
                            )
                            logger.emit(
                                event_name="gen_ai.tool.message", body={"content": "21C", "id": call_id}
                            )
                        choice: dict[str, Any] = {"role": "assistant", "content": answer}
                        if step == 0:
                            choice = {
                                "role": "assistant",
                                "tool_calls": [
                                    {
                                        "id": call_id,
                                        "type": "function",
                                        "function": {
                                            "name": "get_weather",
                                            "arguments": _json({"city": city}),
                                        },
                                    }
                                ],
                            }
                        logger.emit(
                            event_name="gen_ai.choice",
                            body={"index": 0, "finish_reason": "stop", "message": choice},
                        )
                if step == 0:
                    tool_attrs = {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "get_weather",
                        "gen_ai.tool.call.arguments": _json({"city": city}),
                    }
                    if not old_conventions:
                        tool_attrs["gen_ai.tool.call.id"] = call_id
                    with tracer.start_as_current_span(
                        "execute_tool get_weather", attributes=tool_attrs
                    ) as tool:
                        if run % 2 == 1:
                            tool.record_exception(TimeoutError("upstream timed out"))
                            tool.set_status(Status(StatusCode.ERROR, "TimeoutError: upstream timed out"))
                        else:
                            tool.set_attribute("gen_ai.tool.call.result", "21C")
            root.add_event(
                "gen_ai.evaluation.result",
                {
                    "gen_ai.evaluation.name": "resolved",
                    "gen_ai.evaluation.score.value": 1.0 if run % 2 == 0 else 0.0,
                    "gen_ai.evaluation.explanation": "checked by a grader",
                },
            )
    tracer_provider.shutdown()
    logger_provider.shutdown()
    if not old_conventions and logs_path.exists():
        logs_path.unlink()
    return traces_path, logs_path


def write_agents_sdk(path: Path, *, runs: int = 2) -> Path:
    """Agent runs traced by the OpenAI Agents SDK offline, ``export()`` dicts written one per line."""
    from agents.tracing import (
        SpanError,
        TracingProcessor,
        agent_span,
        function_span,
        generation_span,
        handoff_span,
        set_trace_processors,
        trace,
    )

    records: list[dict[str, Any]] = []

    class Capture(TracingProcessor):
        def on_trace_start(self, trace: Any) -> None:
            pass

        def on_trace_end(self, trace: Any) -> None:
            records.append(trace.export())

        def on_span_start(self, span: Any) -> None:
            pass

        def on_span_end(self, span: Any) -> None:
            records.append(span.export())

        def shutdown(self) -> None:
            pass

        def force_flush(self) -> None:
            pass

    set_trace_processors([Capture()])
    for run in range(runs):
        city = f"City{run}"
        user = {"role": "user", "content": f"Weather in {city}?"}
        call = {
            "id": f"call_{run}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": _json({"city": city})},
        }
        with trace("Weather workflow", group_id=f"conv_{run}", metadata={"user": f"u{run}"}):
            with agent_span(name="WeatherBot", tools=["get_weather"]):
                with generation_span(
                    input=[{"role": "system", "content": SYSTEM}, user],
                    output=[{"role": "assistant", "content": None, "tool_calls": [call]}],
                    model="gpt-4o",
                    usage={"input_tokens": 42, "output_tokens": 17},
                ):
                    pass
                with function_span(name="get_weather", input=_json({"city": city})) as tool:
                    if run % 2 == 1:
                        tool.set_error(SpanError(message="Error running tool", data={"error": "timeout"}))
                    else:
                        tool.span_data.output = str({"temp_c": 21, "city": city})
                with generation_span(
                    input=[
                        {"role": "system", "content": SYSTEM},
                        user,
                        {"role": "assistant", "tool_calls": [call]},
                    ],
                    output=[{"role": "assistant", "content": f"Done for {city}."}],
                    model="gpt-4o",
                    usage={"input_tokens": 60, "output_tokens": 9},
                ):
                    pass
                with handoff_span(from_agent="WeatherBot", to_agent="Escalation"):
                    pass
    set_trace_processors([])
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def phoenix_spans(runs: int = 2) -> list[dict[str, Any]]:
    """Phoenix REST/JSONL spans (hand-built in Phoenix's export shape), children listed before parents."""
    spans: list[dict[str, Any]] = []
    for run in range(runs):
        trace_id = f"{run:032x}"
        root, llm, tool = f"{run:014x}a1", f"{run:014x}b2", f"{run:014x}c3"
        question = f"Weather in City{run}?"
        spans.append(
            {
                "name": "ChatCompletion",
                "context": {"trace_id": trace_id, "span_id": llm},
                "span_kind": "LLM",
                "parent_id": root,
                "start_time": "2026-05-04T10:15:02.210000+00:00",
                "end_time": "2026-05-04T10:15:03.400000+00:00",
                "status_code": "OK",
                "status_message": "",
                "attributes": {
                    "openinference.span.kind": "LLM",
                    "llm.system": "openai",
                    "llm.model_name": "gpt-4o-2024-08-06",
                    "llm.input_messages.0.message.role": "system",
                    "llm.input_messages.0.message.content": SYSTEM,
                    "llm.input_messages.1.message.role": "user",
                    "llm.input_messages.1.message.content": question,
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.tool_calls.0.tool_call.id": f"call_{run}",
                    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
                    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": _json(
                        {"city": f"City{run}"}
                    ),
                    "llm.token_count.prompt": 42,
                    "llm.token_count.completion": 17,
                    "llm.token_count.total": 59,
                    "llm.cost.total": 0.000275,
                    "session.id": f"conv_{run}",
                },
                "events": [],
            }
        )
        spans.append(
            {
                "name": "get_weather",
                "context": {"trace_id": trace_id, "span_id": tool},
                "span_kind": "TOOL",
                "parent_id": root,
                "start_time": "2026-05-04T10:15:03.410000+00:00",
                "end_time": "2026-05-04T10:15:04.200000+00:00",
                "status_code": "ERROR" if run % 2 else "OK",
                "status_message": "TimeoutError: upstream timed out" if run % 2 else "",
                "attributes": {
                    "openinference": {"span": {"kind": "TOOL"}},
                    "tool": {"name": "get_weather"},
                    "input": {"value": _json({"city": f"City{run}"}), "mime_type": "application/json"},
                    "output": {"value": "21C", "mime_type": "text/plain"},
                },
                "events": [],
            }
        )
        spans.append(
            {
                "name": "agent",
                "context": {"trace_id": trace_id, "span_id": root},
                "span_kind": "AGENT",
                "parent_id": None,
                "start_time": "2026-05-04T10:15:02.100000+00:00",
                "end_time": "2026-05-04T10:15:04.300000+00:00",
                "status_code": "OK",
                "status_message": "",
                "attributes": {
                    "openinference.span.kind": "AGENT",
                    "input.value": question,
                    "input.mime_type": "text/plain",
                    "output.value": f"It is 21C in City{run}.",
                    "output.mime_type": "text/plain",
                    "session.id": f"conv_{run}",
                    "metadata": _json({"env": "prod"}),
                },
                "events": [],
            }
        )
    return spans


def phoenix_rows(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same spans as DataFrame rows: ``context.*`` and one ``attributes.<key>`` column per attribute."""
    from helix.traces._span_content import flatten

    rows: list[dict[str, Any]] = []
    for span in spans:
        row = {k: v for k, v in span.items() if k not in ("context", "attributes", "events")}
        row["context.trace_id"] = span["context"]["trace_id"]
        row["context.span_id"] = span["context"]["span_id"]
        for key, value in flatten(span["attributes"]).items():
            row[f"attributes.{key}"] = value if isinstance(value, str) else json.dumps(value)
        rows.append(row)
    return rows


def openinference_otel_spans(runs: int = 2) -> list[Any]:
    """Agent runs as real OpenTelemetry SDK spans carrying OpenInference attributes, the way the
    ``openinference-instrumentation-*`` packages (smolagents, openai, ...) record them; ended spans,
    children before parents."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("openinference.instrumentation.smolagents")
    for run in range(runs):
        question = f"Weather in City{run}?"
        with tracer.start_as_current_span("CodeAgent.run") as agent:
            agent.set_attributes(
                {
                    "openinference.span.kind": "AGENT",
                    "input.value": _json({"task": question, "stream": False}),
                    "input.mime_type": "application/json",
                    "session.id": f"conv_{run}",
                    "tag.tags": ["prod", "weather"],
                    "smolagents.max_steps": 20,
                }
            )
            with tracer.start_as_current_span("Step 1") as step:
                step.set_attributes({"openinference.span.kind": "CHAIN", "input.value": "step 1"})
                with tracer.start_as_current_span("LiteLLMModel.generate") as llm:
                    llm.set_attributes(
                        {
                            "openinference.span.kind": "LLM",
                            "llm.model_name": "gpt-4o",
                            "llm.provider": "openai",
                            "llm.input_messages.0.message.role": "system",
                            "llm.input_messages.0.message.content": SYSTEM,
                            "llm.input_messages.1.message.role": "user",
                            "llm.input_messages.1.message.content": question,
                            "llm.output_messages.0.message.role": "assistant",
                            "llm.output_messages.0.message.tool_calls.0.tool_call.id": f"call_{run}",
                            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
                            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": _json(
                                {"city": f"City{run}"}
                            ),
                            "llm.token_count.prompt": 42,
                            "llm.token_count.completion": 17,
                            "llm.token_count.total": 59,
                        }
                    )
                with tracer.start_as_current_span("get_weather") as tool:
                    tool.set_attributes(
                        {
                            "openinference.span.kind": "TOOL",
                            "tool.name": "get_weather",
                            "input.value": _json({"args": [], "kwargs": {"city": f"City{run}"}}),
                            "input.mime_type": "application/json",
                            "output.value": "21C" if run % 2 == 0 else "",
                        }
                    )
                    if run % 2:
                        tool.record_exception(TimeoutError("upstream timed out"))
                        tool.set_status(Status(StatusCode.ERROR, "TimeoutError: upstream timed out"))
            agent.set_attribute("output.value", f"It is 21C in City{run}.")
            agent.set_status(Status(StatusCode.OK))
    return list(exporter.get_finished_spans())


def _iso(nanos: int | None) -> str | None:
    if nanos is None:
        return None
    from datetime import UTC, datetime

    return datetime.fromtimestamp(nanos / 1e9, UTC).isoformat()


def phoenix_rest_spans(spans: list[Any]) -> list[dict[str, Any]]:
    """SDK spans as ``GET /v1/projects/{project}/spans`` returns them (Phoenix's ``span_search`` router):
    a GlobalID ``id``, ``context``, the kind only in ``span_kind`` (popped from the flat dotted
    attributes), ISO times, ``status_code`` names; newest span first, as the endpoint sorts by id."""
    import base64

    out: list[dict[str, Any]] = []
    for rowid, span in enumerate(spans, 1):
        attributes = {k: list(v) if isinstance(v, tuple) else v for k, v in span.attributes.items()}
        kind = attributes.pop("openinference.span.kind", "UNKNOWN")
        out.append(
            {
                "id": base64.b64encode(f"Span:{rowid}".encode()).decode(),
                "name": span.name,
                "context": {
                    "trace_id": f"{span.context.trace_id:032x}",
                    "span_id": f"{span.context.span_id:016x}",
                },
                "span_kind": kind,
                "parent_id": f"{span.parent.span_id:016x}" if span.parent is not None else None,
                "start_time": _iso(span.start_time),
                "end_time": _iso(span.end_time),
                "status_code": span.status.status_code.name,
                "status_message": span.status.description or "",
                "attributes": attributes,
                "events": [
                    {"name": e.name, "timestamp": _iso(e.timestamp), "attributes": dict(e.attributes or {})}
                    for e in span.events
                ],
            }
        )
    return out[::-1]


def nested_trace_documents(spans: list[Any]) -> list[dict[str, Any]]:
    """SDK spans as one JSON document per trace with nested ``child_spans``, the shape smolagents runs
    instrumented with OpenInference are published in (the TRAIL benchmark's traces): OTel-collector
    column names (``span_id``, ``parent_span_id``, ``span_name``, ``span_kind``, ``span_attributes``,
    ``timestamp``, ``duration`` in nanoseconds, ``status_code``), children nested under their parent."""
    by_trace: dict[str, list[Any]] = {}
    for span in spans:
        by_trace.setdefault(f"{span.context.trace_id:032x}", []).append(span)
    documents = []
    for trace_id, members in by_trace.items():
        nodes: dict[str, dict[str, Any]] = {}
        for span in members:
            nodes[f"{span.context.span_id:016x}"] = {
                "timestamp": _iso(span.start_time),
                "trace_id": trace_id,
                "span_id": f"{span.context.span_id:016x}",
                "parent_span_id": f"{span.parent.span_id:016x}" if span.parent is not None else "",
                "trace_state": "",
                "span_name": span.name,
                "span_kind": "Internal",
                "service_name": "smolagents",
                "resource_attributes": {"service.name": "smolagents"},
                "scope_name": "openinference.instrumentation.smolagents",
                "scope_version": "0.1.16",
                "span_attributes": {
                    k: list(v) if isinstance(v, tuple) else v for k, v in span.attributes.items()
                },
                "duration": span.end_time - span.start_time,
                "status_code": {"OK": "Ok", "ERROR": "Error", "UNSET": "Unset"}[span.status.status_code.name],
                "status_message": span.status.description or "",
                "events": [
                    {"Timestamp": _iso(e.timestamp), "Name": e.name, "Attributes": dict(e.attributes or {})}
                    for e in span.events
                ],
                "links": [],
                "logs": [],
                "child_spans": [],
            }
        roots = []
        for span in sorted(members, key=lambda s: s.start_time):
            node = nodes[f"{span.context.span_id:016x}"]
            parent = nodes.get(node["parent_span_id"])
            (parent["child_spans"] if parent is not None else roots).append(node)
        documents.append({"trace_id": trace_id, "spans": roots})
    return documents


def write_agents_runner(path: Path, base_url: str, question: str) -> Path:
    """One ``Runner.run`` of an OpenAI Agents SDK agent on the Chat Completions model, against an
    OpenAI-compatible server at ``base_url``, its spans (task, agent, turn, generation) captured with a
    ``TracingProcessor`` as ``export()`` JSONL."""
    from agents import Agent, OpenAIChatCompletionsModel, Runner
    from agents.tracing import TracingProcessor, set_trace_processors
    from openai import AsyncOpenAI

    records: list[dict[str, Any]] = []

    class Capture(TracingProcessor):
        def on_trace_start(self, trace: Any) -> None:
            pass

        def on_trace_end(self, trace: Any) -> None:
            records.append(trace.export())

        def on_span_start(self, span: Any) -> None:
            pass

        def on_span_end(self, span: Any) -> None:
            records.append(span.export())

        def shutdown(self) -> None:
            pass

        def force_flush(self) -> None:
            pass

    set_trace_processors([Capture()])

    async def run() -> None:
        async with AsyncOpenAI(base_url=base_url, api_key="not-used", max_retries=0) as client:
            agent = Agent(
                name="WeatherBot",
                instructions=SYSTEM,
                model=OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client),
            )
            await Runner.run(agent, question)

    asyncio.run(run())
    path.write_bytes(b"".join(json.dumps(r, default=str).encode() + b"\n" for r in records if r))
    return path
