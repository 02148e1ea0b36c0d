"""ScriptedLLMServer itself: responders, queue, recording, thread mode."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from helix.models.testing import RecordedRequest, ScriptedLLMServer, ScriptedReply


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read()), dict(resp.headers)
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.loads(err.read()), dict(err.headers)


def test_thread_mode_serves_sync_code_from_queue_then_responder() -> None:
    def responder(req: RecordedRequest) -> str:
        return "echo:" + str(req.body["messages"][-1]["content"])

    body = {"model": "m-2025-01-01", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}
    with ScriptedLLMServer.running_in_thread(
        responder, script=[ScriptedReply(status=429, retry_after=2)]
    ) as srv:
        assert srv.base_url.startswith("http://127.0.0.1:") and srv.base_url.endswith("/v1")
        status, payload, headers = _post(srv.base_url + "/chat/completions", body)
        assert status == 429 and headers["Retry-After"] == "2"
        assert "error" in payload
        status, payload, _ = _post(srv.base_url + "/chat/completions", body)
        assert status == 200
        assert payload["choices"][0]["message"]["content"] == "echo:hi"
        assert payload["model"] == "m-2025-01-01"
        assert payload["usage"]["total_tokens"] == (
            payload["usage"]["prompt_tokens"] + payload["usage"]["completion_tokens"]
        )
        status, payload, _ = _post(srv.anthropic_base_url + "/v1/messages", {**body, "system": "s"})
        assert status == 200 and payload["content"][0]["text"] == "echo:hi"
        assert [r.api for r in srv.requests] == ["openai", "openai", "anthropic"]
        assert srv.requests[2].prompt_text == "s\nhi"


def test_no_script_and_no_responder_answers_500() -> None:
    with ScriptedLLMServer.running_in_thread() as srv:
        status, payload, _ = _post(srv.base_url + "/chat/completions", {"model": "m", "messages": []})
    assert status == 500
    assert "script exhausted" in payload["error"]["message"]


def test_async_responder_latency_and_concurrency() -> None:
    async def responder(req: RecordedRequest) -> ScriptedReply:
        await asyncio.sleep(0)
        return ScriptedReply(text="ok")

    async def go() -> float:
        import aiohttp

        async with ScriptedLLMServer(responder, latency_s=0.2, record=False) as srv:
            async with aiohttp.ClientSession() as session:

                async def one() -> int:
                    async with session.post(srv.base_url + "/chat/completions", json={"messages": []}) as r:
                        await r.read()
                        return r.status

                loop = asyncio.get_running_loop()
                t0 = loop.time()
                statuses = await asyncio.gather(*(one() for _ in range(50)))
                elapsed = loop.time() - t0
            assert statuses == [200] * 50
            assert srv.requests == [] and srv.request_count == 50
            return elapsed

    elapsed = asyncio.run(go())
    assert 0.2 <= elapsed < 1.5  # 50 requests of 200 ms each overlap


def test_dropped_connection_is_seen_by_the_client() -> None:
    with ScriptedLLMServer.running_in_thread(script=[ScriptedReply(drop=True)]) as srv:
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            _post(srv.base_url + "/chat/completions", {"messages": []})
