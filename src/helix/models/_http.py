"""A thin aiohttp path for provider calls: pre-encoded JSON bodies in, status, headers and bytes out.

The official SDKs build each request through layers of option models, header merging and deep
copies; at hundreds of requests per second that, not the network, is what a judging pass spends its
CPU on (``benchmarks/bench_judge_run.py`` measures both). A chat call is one POST of a JSON body we
already hold as bytes, so the clients send it on one shared aiohttp session with the headers fixed at
open time, and map what can go wrong into a :class:`~helix.models._retry.Failure` whose ``kind``
says what happened (a refused connection is not a timeout). The SDKs stay in charge of what they do
well and what is not hot: file uploads and batch jobs (``_batch.py``).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from ._retry import Failure

__all__ = ["HttpSession", "RawResponse", "transport_failure"]


@dataclass(frozen=True, slots=True)
class RawResponse:
    """An HTTP answer as received."""

    status: int
    headers: Mapping[str, str]
    body: bytes


class HttpSession:
    """One aiohttp session (opened on first use, inside the running event loop) for one client."""

    def __init__(self, *, headers: Mapping[str, str], timeout_s: float) -> None:
        self._headers = dict(headers)
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        # No connection cap here: the caller's limiter decides how many requests are in flight.
        connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, enable_cleanup_closed=True)
        self._session = aiohttp.ClientSession(
            connector=connector, headers=self._headers, timeout=self._timeout, raise_for_status=False
        )
        return self._session

    async def post(self, url: str, body: bytes) -> RawResponse:
        """POST ``body`` (already JSON-encoded) to ``url``; raises aiohttp/OS errors as they come."""
        session = self._session or self._open()
        async with session.post(url, data=body) as resp:
            data = await resp.read()
            return RawResponse(status=resp.status, headers=resp.headers, body=data)

    async def aclose(self) -> None:
        """Close the session and its connections."""
        if self._session is not None:
            await self._session.close()
            self._session = None


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def transport_failure(exc: BaseException, url: str) -> Failure | None:
    """What a failed request means, or None when ``exc`` is not a transport failure (a bug: re-raise)."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        os_error: Any = exc.os_error
        if isinstance(os_error, ConnectionRefusedError):
            return Failure(
                kind="connection_refused",
                retryable=True,
                message=f"connection refused at {url} (nothing is listening there)",
            )
        if isinstance(os_error, socket.gaierror):
            return Failure(
                kind="connection_failed",
                retryable=True,
                message=f"cannot resolve the host of {url} ({_describe(os_error)})",
            )
        if isinstance(os_error, TimeoutError):
            return Failure(kind="timeout", retryable=True, message=f"connecting to {url} timed out")
        return Failure(
            kind="connection_failed", retryable=True, message=f"cannot connect to {url}: {_describe(exc)}"
        )
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return Failure(
            kind="timeout", retryable=True, message=f"no answer from {url} in time (request timed out)"
        )
    if isinstance(exc, aiohttp.ClientError | ConnectionError):
        return Failure(
            kind="connection_failed",
            retryable=True,
            message=f"the connection to {url} dropped mid-request ({_describe(exc)})",
        )
    return None
