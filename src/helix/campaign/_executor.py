"""Bounded concurrency on asyncio: a fixed pool of workers pulling items in order.

A pool of ``limit`` workers (not one task per item) keeps memory flat for 100k-cell designs. The
first exception a worker raises cancels the others and is re-raised as itself (not wrapped in an
exception group), after every worker has stopped.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, ParamSpec, TypeVar

from .._exceptions import UsageError

__all__ = ["bounded_map", "check_concurrency", "run_sync", "sync_version"]

T = TypeVar("T")
P = ParamSpec("P")


def check_concurrency(value: int, name: str = "max_concurrency") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name} must be an integer >= 1, got {value!r}; e.g. {name}=8")
    return value


async def bounded_map(items: Sequence[T], fn: Callable[[int, T], Awaitable[None]], *, limit: int) -> None:
    """Call ``fn(index, item)`` for every item with at most ``limit`` calls in flight.

    Items start in order; they may finish in any order (``fn`` stores results by index).
    """
    check_concurrency(limit)
    if not items:
        return
    iterator = iter(enumerate(items))

    async def worker() -> None:
        for index, item in iterator:  # one shared iterator: each item is taken by exactly one worker
            await fn(index, item)

    tasks = [asyncio.ensure_future(worker()) for _ in range(min(limit, len(items)))]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except BaseException:  # we were cancelled: stop the workers too
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    for t in tasks:
        if t.done() and not t.cancelled() and t.exception() is not None:
            exc = t.exception()
            assert exc is not None
            raise exc


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on a new event loop and return its value.

    The value is handed out through a box rather than as the main task's result: on Python 3.11
    ``asyncio.run`` restores the SIGINT handler in a way that builds the repr of the main task,
    result included, which for a 100k-cell campaign costs seconds.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await coro)

    asyncio.run(main())
    return box[0]


def sync_version(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The blocking twin of the coroutine function ``fn`` for scripts, with ``fn``'s own signature.

    The twin runs ``fn`` on a new event loop (so it cannot be called from inside a running loop:
    await ``fn`` there). Typed through ``ParamSpec``, so a type checker checks every call against
    ``fn``'s parameters.
    """

    @functools.wraps(fn)
    def blocking(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(fn(*args, **kwargs))

    blocking.__name__ = blocking.__qualname__ = f"{fn.__name__}_sync"
    blocking.__doc__ = (
        f"``{fn.__name__}`` for scripts: runs it on its own event loop and returns its result; the "
        f"same arguments.\n\n{fn.__doc__ or ''}"
    )
    return blocking
