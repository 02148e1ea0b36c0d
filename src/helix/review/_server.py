"""The local review server: the review page plus a small JSON API over a :class:`LabelStore`.

```
GET  /                  the review page (``?annotator=NAME`` to label as someone else)
GET  /api/labels        current labels (``?annotator=NAME`` to filter), JSON list
GET  /api/verdict       ?trace_id=&criterion_id= -> the judge's verdict of one item (sent on reveal)
POST /api/labels        {trace_id, criterion_id, label, note, annotator} -> the stored label
POST /api/undo          {trace_id, criterion_id, annotator, created_at?} -> the label now current, or null
GET  /api/health        {"ok": true}
```

Blind review: the page carries no verdict or critique of an item the annotator has not labelled; the
page asks ``/api/verdict`` when one is revealed (or labelled), so it is blind in the data, not only on
screen.

Safety: binds 127.0.0.1 by default; another host is refused unless a strong access token is set
(:func:`check_token`; ``helix review serve`` generates one when none is given), and then every
request must carry it (``X-Helix-Token`` header, ``?token=`` once, after which an HttpOnly
SameSite=Strict cookie carries it). On loopback without a token, requests must name a loopback Host
(DNS-rebinding guard). Writes must be JSON with an ``X-Helix-Review`` header, which a cross-site page
cannot send without a CORS preflight this server never grants.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import os
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .._exceptions import RunError, UsageError
from ._active import active_order
from ._design import parse_design, stratum_of
from ._items import ReviewItem, load_review_set
from ._labels import HumanLabel, LabelValue
from ._page import render_review_page, render_trace_panes, review_csp, verdict_data
from ._store import LabelStore

__all__ = [
    "MIN_TOKEN_LENGTH",
    "TOKEN_ENV",
    "ReviewServer",
    "check_bind",
    "check_token",
    "create_review_app",
    "generate_token",
    "is_loopback",
    "token_from_env",
]

TOKEN_ENV = "HELIX_REVIEW_TOKEN"
_COOKIE = "helix_review_token"
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}
QueueKind = Literal["balanced", "active"]
MIN_TOKEN_LENGTH = 16
_MIN_DISTINCT = 8


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(header: str) -> str:
    """The host part of a Host header (``[::1]:8000`` -> ``[::1]``, ``a:1`` -> ``a``)."""
    if header.startswith("["):
        return header[: header.find("]") + 1]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def generate_token() -> str:
    """A strong random access token (32 URL-safe characters)."""
    return secrets.token_urlsafe(24)


def check_token(token: str | None) -> str:
    """The token if it is strong enough to guard a server others can reach; UsageError otherwise.

    Strong: at least :data:`MIN_TOKEN_LENGTH` characters, no whitespace, at least 8 different
    characters (a one-space or ``aaaa…`` token is refused).
    """
    if token is None or not token.strip():
        raise UsageError(
            f"a server reachable from other machines needs an access token; set --token (or {TOKEN_ENV}) "
            "to a strong one, or leave both unset and `helix review serve` generates one"
        )
    if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() for c in token) or len(set(token)) < _MIN_DISTINCT:
        raise UsageError(
            f"the access token is too weak ({len(token)} characters, {len(set(token))} different): use at least "
            f"{MIN_TOKEN_LENGTH} characters without spaces and at least {_MIN_DISTINCT} different ones, e.g. "
            "python3 -c 'import secrets; print(secrets.token_urlsafe(24))', or unset it to have one generated"
        )
    return token


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve labels beyond this machine without a strong access token."""
    if is_loopback(host):
        return
    if not token:
        raise UsageError(
            f"refusing to bind the review server to {host!r} without an access token: anyone who can reach "
            f"it could read traces and write labels. Set --token (or {TOKEN_ENV}), or bind 127.0.0.1"
        )
    check_token(token)


class _LabelIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    trace_id: str = Field(min_length=1)
    criterion_id: str = Field(min_length=1)
    label: LabelValue
    note: str = ""
    annotator: str | None = None


class _UndoIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    trace_id: str = Field(min_length=1)
    criterion_id: str = Field(min_length=1)
    annotator: str | None = None
    created_at: AwareDatetime | None = None
    """The label to take back (default: the current one)."""


_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def create_review_app(
    run_dir: str | Path,
    store: LabelStore,
    *,
    annotator: str = "annotator",
    token: str | None = None,
    loopback_only: bool = True,
    criterion_ids: Sequence[str] | None = None,
    seed: int = 0,
    blind: bool = True,
    queue: QueueKind = "balanced",
) -> Starlette:
    """The Starlette app serving a run's review page and writing labels to ``store``.

    ``token`` (when set) is required on every request. ``loopback_only`` rejects requests whose
    Host header is not a loopback name (pass False when serving on another interface, with a strong
    token). ``blind`` (default) keeps verdicts out of the page until revealed or labelled.
    ``queue``: ``balanced`` (interleaved by verdict; labels record the ``by-verdict`` design) or
    ``active`` (:func:`~helix.review.active_order`; labels record ``active`` and their stratum).
    """
    if queue not in ("balanced", "active"):
        raise UsageError(f"queue must be balanced or active, got {queue!r}")
    if not loopback_only:
        check_token(token)
    review = load_review_set(run_dir, criterion_ids=criterion_ids)
    panes = render_trace_panes(review)
    by_key = {(i.trace_id, i.criterion_id): i for i in review.items}
    known = set(by_key)
    design = "active" if queue == "active" else "by-verdict"

    def stratum(item: ReviewItem) -> str | None:
        if item.judge_result not in ("pass", "fail"):
            return None
        return stratum_of(parse_design(design), item.judge_result, confidence=item.confidence)

    def ordered(current: Sequence[HumanLabel]) -> list[ReviewItem] | None:
        if queue != "active":
            return None
        return [q.item for q in active_order(review.items, current, seed=seed)]

    csp = review_csp("server") + "; frame-ancestors 'none'"

    def who(value: str | None) -> str:
        name = (value or annotator).strip()
        if not name or len(name) > 200:
            raise UsageError(f"annotator name {value!r} must be 1–200 characters")
        return name

    async def page(request: Request) -> Response:
        name = who(request.query_params.get("annotator"))
        current = await run_in_threadpool(store.latest, annotator=name)
        html = render_review_page(
            review,
            mode="server",
            annotator=name,
            labels=current,
            seed=seed,
            panes_html=panes,
            blind=blind,
            queue=ordered(current),
        )
        response = HTMLResponse(html, headers={"Content-Security-Policy": csp})
        supplied = request.query_params.get("token")
        if token and supplied:
            response.set_cookie(_COOKIE, supplied, httponly=True, samesite="strict", path="/")
        return response

    async def list_labels(request: Request) -> Response:
        name = request.query_params.get("annotator")
        current = await run_in_threadpool(store.latest, annotator=name)
        return JSONResponse([x.model_dump(mode="json") for x in current])

    async def _body(request: Request, model: type[BaseModel]) -> Any:
        if request.headers.get("x-helix-review") != "1" or "application/json" not in request.headers.get(
            "content-type", ""
        ):
            raise UsageError("writes must be JSON with the header X-Helix-Review: 1")
        try:
            return model.model_validate_json(await request.body())
        except ValidationError as exc:
            err = exc.errors()[0]
            raise UsageError(f"field {'.'.join(str(x) for x in err['loc'])!r}: {err['msg']}") from exc

    async def add_label(request: Request) -> Response:
        body: _LabelIn = await _body(request, _LabelIn)
        if (body.trace_id, body.criterion_id) not in known:
            raise UsageError(f"({body.trace_id!r}, {body.criterion_id!r}) is not an item of this run")
        stored = await run_in_threadpool(
            functools.partial(
                store.record,
                trace_id=body.trace_id,
                criterion_id=body.criterion_id,
                label=body.label,
                note=body.note,
                annotator=who(body.annotator),
                design=design,
                stratum=stratum(by_key[(body.trace_id, body.criterion_id)]),
            )
        )
        return JSONResponse(stored.model_dump(mode="json"))

    async def undo(request: Request) -> Response:
        body: _UndoIn = await _body(request, _UndoIn)
        now = await run_in_threadpool(
            functools.partial(
                store.undo,
                trace_id=body.trace_id,
                criterion_id=body.criterion_id,
                annotator=who(body.annotator),
            )
        )
        return JSONResponse(now.model_dump(mode="json") if now else None)

    async def verdict(request: Request) -> Response:
        key = (request.query_params.get("trace_id", ""), request.query_params.get("criterion_id", ""))
        item = by_key.get(key)
        if item is None:
            raise UsageError(f"({key[0]!r}, {key[1]!r}) is not an item of this run")
        return JSONResponse(verdict_data(item))

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if loopback_only and not is_loopback(_host_name(request.headers.get("host") or "")):
            return PlainTextResponse("forbidden: not a loopback Host", status_code=403)
        if token:
            offered = (
                request.headers.get("x-helix-token")
                or request.query_params.get("token")
                or request.cookies.get(_COOKIE)
                or ""
            )
            if not hmac.compare_digest(offered.encode(), token.encode()):
                return PlainTextResponse(
                    "unauthorized: open the URL with ?token=<the access token>", status_code=401
                )
        response = await call_next(request)
        for name, value in _SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/api/labels", list_labels, methods=["GET"]),
        Route("/api/labels", add_label, methods=["POST"]),
        Route("/api/undo", undo, methods=["POST"]),
        Route("/api/verdict", verdict, methods=["GET"]),
        Route("/api/health", health, methods=["GET"]),
    ]

    async def usage_error(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": str(exc)}, status_code=400)

    return Starlette(
        routes=routes,
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=guard)],
        exception_handlers={UsageError: usage_error},
    )


class ReviewServer:
    """Run a review app on uvicorn: blocking (:meth:`run`) or on a thread (:meth:`start`/:meth:`stop`).

    ``port=0`` picks a free port; :attr:`url` is known as soon as the socket is bound.
    """

    def __init__(
        self, app: Starlette, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None
    ) -> None:
        import uvicorn

        check_bind(host, token)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind((host.strip("[]"), port))
        except OSError as exc:
            self._sock.close()
            raise UsageError(
                f"cannot bind the review server to {host}:{port} ({exc}); pick another --port"
            ) from exc
        self.host = host
        self.port = int(self._sock.getsockname()[1])
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            ws="none",
            http="h11",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL (``http://host:port/``)."""
        host = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def run(self) -> None:
        """Serve until interrupted (Ctrl-C)."""
        try:
            self._server.run(sockets=[self._sock])
        finally:
            self._sock.close()

    def start(self, *, timeout: float = 10.0) -> ReviewServer:
        """Serve on a background thread; returns once the server accepts connections."""
        self._thread = threading.Thread(target=self.run, name="helix-review-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RunError(f"the review server did not start within {timeout:g} s")
            time.sleep(0.01)
        return self

    def stop(self, *, timeout: float = 10.0) -> None:
        """Stop the background server and wait for its thread."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self._sock.close()

    def __enter__(self) -> ReviewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def token_from_env() -> str | None:
    """The access token from ``HELIX_REVIEW_TOKEN`` (None when unset or empty)."""
    return os.environ.get(TOKEN_ENV) or None
