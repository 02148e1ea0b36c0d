"""Bounded concurrency on asyncio: a fixed pool of workers pulling items in order.

A pool of ``limit`` workers (not one task per item) keeps memory flat for 100k-cell designs. The
first exception a worker raises cancels the others and is re-raised as itself (not wrapped in an
exception group), after every worker has stopped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from .._exceptions import UsageError

__all__ = ["bounded_map", "check_concurrency", "run_sync"]

T = TypeVar("T")


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
