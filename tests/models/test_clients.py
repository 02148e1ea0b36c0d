"""The provider clients over real HTTP against ScriptedLLMServer on 127.0.0.1."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest

from helix import ModelError, ModelHTTPError, UsageError
from helix.models import ChatMessage, Model, ModelSpec, open_model, parse_model_spec
from helix.models.testing import RecordedRequest, ScriptedLLMServer, ScriptedReply

OPENAI = "openai/gpt-4o-2024-08-06"
ANTHROPIC = "anthropic/claude-judge-20260101"
T = TypeVar("T")
MESSAGES: list[ChatMessage] = [
    {"role": "system", "content": "You are a judge."},
    {"role": "user", "content": "Is 2+2 four?"},
]


class RecordingSleep:
    """The injected sleep of the retry loop: records each wait and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def no_sleep() -> RecordingSleep:
    return RecordingSleep()


def run(fn: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(fn())


async def _complete(srv: ScriptedLLMServer, ref: str, sleep: RecordingSleep, **kw: Any) -> Any:
    model = open_model(srv.spec(ref), sleep=sleep, rng=random.Random(0), **kw)
    try:
        return await model.complete(MESSAGES)
    finally:
        await model.aclose()


def test_openai_request_carries_pinned_model_and_temperature_zero(no_sleep: RecordingSleep) -> None:
    async def go() -> tuple[Any, list[RecordedRequest]]:
        async with ScriptedLLMServer(script=["yes"]) as srv:
            return await _complete(srv, OPENAI, no_sleep), srv.requests

    completion, requests = run(go)
    assert completion.text == "yes"
    assert completion.served_model == "gpt-4o-2024-08-06"
    assert completion.attempts == 1
    assert completion.usage.input_tokens > 0 and completion.usage.output_tokens > 0
    assert completion.cost_usd is not None and completion.cost_usd > 0
    assert completion.latency_s > 0
    assert completion.request_id == "chatcmpl-scripted-1"
    [req] = requests
    assert req.path == "/v1/chat/completions"
    assert req.body["model"] == "gpt-4o-2024-08-06"
    assert req.body["temperature"] == 0
    assert req.body["messages"] == MESSAGES
    assert req.headers["authorization"] == "Bearer helix-no-key"
    assert req.headers["content-type"] == "application/json"
    assert no_sleep.waits == []


def test_429_and_500_are_retried_then_succeed_honouring_retry_after(no_sleep: RecordingSleep) -> None:
    script: list[ScriptedReply | str] = [
        ScriptedReply(status=429, retry_after=3),
        ScriptedReply(status=500),
        ScriptedReply(status=503, retry_after="0"),
        "ok",
    ]

    async def go() -> tuple[Any, int]:
        async with ScriptedLLMServer(script=script) as srv:
            return await _complete(srv, OPENAI, no_sleep, base_delay_s=0.01), srv.request_count

    completion, count = run(go)
    assert completion.text == "ok"
    assert completion.attempts == 4 and count == 4
    assert len(no_sleep.waits) == 3
    assert no_sleep.waits[0] >= 3.0  # Retry-After is a floor on the wait
    assert all(w <= 3.0 for w in no_sleep.waits[1:])


def test_dropped_connection_and_timeout_are_retried(no_sleep: RecordingSleep) -> None:
    script: list[ScriptedReply | str] = [
        ScriptedReply(drop=True),
        ScriptedReply(delay_s=0.4, text="late"),
        "ok",
    ]

    async def go() -> Any:
        async with ScriptedLLMServer(script=script) as srv:
            return await _complete(srv, OPENAI, no_sleep, timeout_s=0.1)

    completion = run(go)
    assert completion.text == "ok"
    assert completion.attempts == 3


def test_gives_up_after_max_retries_with_model_http_error(no_sleep: RecordingSleep) -> None:
    async def go() -> int:
        async with ScriptedLLMServer(lambda req: ScriptedReply(status=503)) as srv:
            with pytest.raises(ModelHTTPError) as info:
                await _complete(srv, OPENAI, no_sleep, max_retries=2)
            assert info.value.status_code == 503
            assert info.value.attempts == 3
            assert "after 3 attempt" in str(info.value)
            return srv.request_count

    assert run(go) == 3
    assert len(no_sleep.waits) == 2


def test_bad_request_fails_at_once(no_sleep: RecordingSleep) -> None:
    async def go() -> None:
        async with ScriptedLLMServer(script=[ScriptedReply(status=404, text="no such model")]) as srv:
            with pytest.raises(ModelHTTPError, match="no such model") as info:
                await _complete(srv, OPENAI, no_sleep)
            assert info.value.attempts == 1
            assert srv.request_count == 1

    run(go)
    assert no_sleep.waits == []


def test_200_whose_body_is_not_json_is_transient_and_retried(no_sleep: RecordingSleep) -> None:
    proxy_page = ScriptedReply(raw_body=b"<html>502 Bad Gateway</html>")

    async def go() -> tuple[Any, int]:
        async with ScriptedLLMServer(script=[proxy_page, "ok"]) as srv:
            return await _complete(srv, OPENAI, no_sleep), srv.request_count

    completion, count = run(go)
    assert (completion.text, completion.attempts, count) == ("ok", 2, 2)
    assert len(no_sleep.waits) == 1


def test_200_that_never_holds_the_api_gives_up_as_bad_response(no_sleep: RecordingSleep) -> None:
    async def go() -> None:
        async with ScriptedLLMServer(lambda req: ScriptedReply(raw_body=b"<html>hello</html>")) as srv:
            with pytest.raises(ModelError, match="not a /chat/completions response") as info:
                await _complete(srv, OPENAI, no_sleep, max_retries=2)
            assert not isinstance(info.value, ModelHTTPError)
            assert "<html>hello" in str(info.value) and "base_url" in str(info.value)
            assert (info.value.kind, info.value.attempts, srv.request_count) == ("bad_response", 3, 3)

    run(go)


def test_unreachable_server_is_connection_refused_not_a_timeout(no_sleep: RecordingSleep) -> None:
    async def go() -> None:
        async with ScriptedLLMServer() as srv:
            spec = srv.spec(OPENAI)
        model = open_model(spec, sleep=no_sleep, rng=random.Random(0), max_retries=1)
        try:
            with pytest.raises(ModelError, match="connection refused") as info:
                await model.complete(MESSAGES)
            assert not isinstance(info.value, ModelHTTPError)
            assert info.value.kind == "connection_refused"
            assert "timed out" not in str(info.value) and "nothing is listening" in str(info.value)
            assert info.value.attempts == 2
        finally:
            await model.aclose()

    run(go)


def test_a_server_that_never_answers_is_a_timeout(no_sleep: RecordingSleep) -> None:
    async def go() -> None:
        async with ScriptedLLMServer(lambda req: ScriptedReply(delay_s=5.0, text="late")) as srv:
            with pytest.raises(ModelError, match="timed out") as info:
                await _complete(srv, OPENAI, no_sleep, timeout_s=0.05, max_retries=1)
            assert (info.value.kind, info.value.attempts) == ("timeout", 2)

    run(go)


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limited"), (529, "overloaded"), (500, "server_error")]
)
def test_http_failures_name_their_kind(no_sleep: RecordingSleep, status: int, kind: str) -> None:
    async def go() -> None:
        async with ScriptedLLMServer(lambda req: ScriptedReply(status=status, text="busy")) as srv:
            with pytest.raises(ModelHTTPError, match="busy") as info:
                await _complete(srv, ANTHROPIC, no_sleep, max_retries=1)
            assert (info.value.kind, info.value.status_code) == (kind, status)

    run(go)


def test_refused_request_is_kind_refused(no_sleep: RecordingSleep) -> None:
    async def go() -> None:
        async with ScriptedLLMServer(script=[ScriptedReply(status=401, text="bad key")]) as srv:
            with pytest.raises(ModelHTTPError, match="bad key") as info:
                await _complete(srv, OPENAI, no_sleep)
            assert (info.value.kind, info.value.attempts) == ("refused", 1)

    run(go)


def test_anthropic_round_trip(no_sleep: RecordingSleep) -> None:
    script = [ScriptedReply(status=529, retry_after=1), ScriptedReply(text="fine", served_model="claude-x")]

    async def go() -> tuple[Any, list[RecordedRequest]]:
        async with ScriptedLLMServer(script=script) as srv:
            return await _complete(srv, ANTHROPIC, no_sleep), srv.requests

    completion, requests = run(go)
    assert completion.text == "fine"
    assert completion.served_model == "claude-x"
    assert completion.cost_usd is None  # served model not in the price table: unknown, not zero
    assert completion.attempts == 2
    assert no_sleep.waits[0] >= 1.0
    req = requests[-1]
    assert req.path == "/v1/messages"
    assert req.body["model"] == "claude-judge-20260101"
    assert req.body["temperature"] == 0
    assert req.body["system"] == "You are a judge."
    assert req.body["messages"] == [{"role": "user", "content": "Is 2+2 four?"}]
    assert req.body["max_tokens"] > 0
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert req.headers["content-type"] == "application/json"


def test_model_satisfies_the_protocol_and_exposes_its_spec() -> None:
    async def go() -> None:
        spec = ModelSpec(provider="openai", model="m-2025-01-01", base_url="http://127.0.0.1:9/v1")
        model = open_model(spec)
        try:
            assert isinstance(model, Model)
            assert model.spec is spec
        finally:
            await model.aclose()

    run(go)


def test_api_key_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="OPENAI_API_KEY"):
        open_model(parse_model_spec(OPENAI))
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY"):
        open_model(parse_model_spec(ANTHROPIC))
    with pytest.raises(UsageError, match="MY_JUDGE_KEY"):
        open_model(parse_model_spec(OPENAI, base_url="http://127.0.0.1:9/v1", api_key_env="MY_JUDGE_KEY"))

    monkeypatch.setenv("MY_JUDGE_KEY", "sk-test")

    async def go() -> None:
        async with ScriptedLLMServer(script=["k"]) as srv:
            spec = parse_model_spec(OPENAI, base_url=srv.base_url, api_key_env="MY_JUDGE_KEY")
            model = open_model(spec)
            try:
                await model.complete(MESSAGES)
            finally:
                await model.aclose()
            assert srv.requests[0].headers["authorization"] == "Bearer sk-test"

    run(go)


def test_invalid_open_arguments() -> None:
    spec = ModelSpec(provider="openai", model="m-2025-01-01", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(UsageError, match="max_retries"):
        open_model(spec, max_retries=-1)
    with pytest.raises(UsageError, match="timeout_s"):
        open_model(spec, timeout_s=0)


def test_openai_cached_prompt_tokens_are_read_into_usage_and_priced(no_sleep: RecordingSleep) -> None:
    long_system: list[ChatMessage] = [
        {"role": "system", "content": "You are a careful judge. " * 400},
        {"role": "user", "content": "Is 2+2 four?"},
    ]

    async def go() -> list[Any]:
        async with ScriptedLLMServer(lambda req: "yes", prompt_cache=True) as srv:
            model = open_model(srv.spec(OPENAI), sleep=no_sleep, rng=random.Random(0))
            try:
                return [await model.complete(long_system) for _ in range(2)]
            finally:
                await model.aclose()

    first, second = run(go)
    assert first.usage.cached_input_tokens == 0
    assert second.usage.cached_input_tokens >= 1024 and second.usage.cached_input_tokens % 128 == 0
    assert second.usage.input_tokens == first.usage.input_tokens
    assert second.cost_usd is not None and first.cost_usd is not None and second.cost_usd < first.cost_usd
