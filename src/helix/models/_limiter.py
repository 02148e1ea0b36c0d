"""Adaptive concurrency for provider calls: additive increase, multiplicative decrease (AIMD).

A user passes a high ``--concurrency`` (the ceiling) and the limiter converges to what the provider
accepts. Every HTTP attempt takes a slot and reports back how it went:

* **slow start**: the window starts small (``initial``, 16) and grows by one per success, so it
  doubles each round trip until the ceiling or the first overload signal;
* **overload** (HTTP 429, 503, 529): the window shrinks to ``beta`` (0.7) of itself, or to what the
  provider has been answering (answers per second over the last second, times the shortest round
  trip: TCP Westwood's estimate) when that is smaller, at most once per window of requests (signals
  from requests sent before the last decrease are the same congestion, not new evidence); from then
  on sends are paced at ``window / min_rtt`` so a window reopening after a pause does not go out as
  one burst;
* **Retry-After**: no attempt is sent before the time the server asked for (capped at 60 s);
* **additive increase** after the first overload: ``min(1/window, (1 - beta) * window /
  probe_requests)`` per success, i.e. one more slot per round trip for large windows, and for small
  windows slowly enough that climbing back takes ``probe_requests`` (40) successes, so each probe
  past the limit costs about one 429 in 40 requests;
* a window below one slot sends one request at a time, spaced ``min_rtt / window`` apart.

:class:`AimdWindow` holds the rules as plain arithmetic over an explicit clock value, so tests check
them deterministically. :class:`AdaptiveLimiter` puts them on the event loop (waiters in arrival
order, one timer for paced sends). ``adaptive=False`` keeps the window at the ceiling (a plain
semaphore that still honours Retry-After). The tuning was chosen by simulating a token-bucket
server over rates, bucket sizes and latencies; ``benchmarks/bench_rate_limit.py`` measures it
against a real one.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from dataclasses import dataclass
from typing import Literal, Protocol

from .._exceptions import UsageError

__all__ = ["AdaptiveLimiter", "AimdWindow", "Limiter", "LimiterStats", "Outcome", "is_overload_status"]

Outcome = Literal["ok", "overload", "other"]
"""How an attempt went: answered, turned away for load (429/503/529), or failed otherwise."""

OVERLOAD_STATUSES = frozenset({429, 503, 529})
MAX_PAUSE_S = 60.0


def is_overload_status(status: int) -> bool:
    """HTTP statuses that mean "too much load": 429 (rate limit), 503 and 529 (overloaded)."""
    return status in OVERLOAD_STATUSES


class Limiter(Protocol):
    """What a client needs to gate its HTTP attempts."""

    async def acquire(self) -> int:
        """Wait for a slot; returns a ticket to hand back to :meth:`release`."""
        ...

    def release(
        self, ticket: int, outcome: Outcome, *, rtt: float = 0.0, retry_after: float | None = None
    ) -> None:
        """Give the slot back, saying how the attempt went (``rtt`` for an ``ok`` one)."""
        ...


@dataclass(frozen=True, kw_only=True)
class LimiterStats:
    """What the limiter did over its life."""

    window: float
    min_window: float
    max_window: float
    overload_signals: int
    decreases: int
    successes: int


class AimdWindow:
    """The AIMD rules over an explicit clock (``now`` in seconds), with no waiting of their own."""

    def __init__(
        self,
        max_concurrency: int,
        *,
        initial: int = 16,
        beta: float = 0.7,
        probe_requests: int = 80,
        slow_start_step: float = 0.5,
        min_window: float = 1 / 16,
        adaptive: bool = True,
    ) -> None:
        if max_concurrency < 1:
            raise UsageError(f"concurrency must be >= 1, got {max_concurrency!r}")
        if not 0.0 < beta < 1.0:
            raise UsageError(f"beta must be between 0 and 1, got {beta!r}")
        self.max = float(max_concurrency)
        self.adaptive = adaptive
        self.window = float(min(initial, max_concurrency)) if adaptive else self.max
        self.beta = beta
        self.probe_requests = probe_requests
        self.slow_start_step = slow_start_step
        self.min_window = min_window
        self.ssthresh = self.max
        self.in_flight = 0
        self.pause_until = -math.inf
        self.min_rtt: float | None = None
        self.paced = False
        self._last_send = -math.inf
        self._delivered: deque[float] = deque()
        self._issued = 0
        self._recover = 0
        self._seen_min = self.window
        self._seen_max = self.window
        self.overload_signals = 0
        self.decreases = 0
        self.successes = 0

    @property
    def slots(self) -> int:
        """How many attempts may be in flight now."""
        return max(1, int(self.window))

    def send_at(self, now: float) -> float | None:
        """When the next attempt may go: ``now`` or later, or None while every slot is taken."""
        if self.in_flight >= self.slots:
            return None
        at = max(now, self.pause_until)
        if self.paced and self.min_rtt is not None and self.window < self.max:
            at = max(at, self._last_send + self.min_rtt / self.window)
        return at

    def on_send(self, now: float) -> int:
        """Take a slot for an attempt sent at ``now``; returns its ticket."""
        self.in_flight += 1
        self._issued += 1
        self._last_send = now
        return self._issued

    def on_success(self, ticket: int, rtt: float, now: float) -> None:
        """The attempt ``ticket`` was answered at ``now``, ``rtt`` seconds after it was sent."""
        self.in_flight -= 1
        self.successes += 1
        if rtt > 0.0 and (self.min_rtt is None or rtt < self.min_rtt):
            self.min_rtt = rtt
        if not self.adaptive:
            return
        delivered = self._delivered
        delivered.append(now)
        horizon = now - self._horizon()
        while delivered[0] < horizon:
            delivered.popleft()
        if self.window < self.ssthresh:
            self.window = min(self.max, self.window + self.slow_start_step)
        else:
            step = min(1.0 / self.window, (1.0 - self.beta) * self.window / self.probe_requests)
            self.window = min(self.max, self.window + step)
        self._seen_max = max(self._seen_max, self.window)

    def _horizon(self) -> float:
        """How far back the delivery rate looks: two round trips (at least 0.1 s).

        Short enough that a burst the provider allowed at the start (a full token bucket) has left
        the estimate by the second decrease; long enough to hold a round trip's answers.
        """
        return max(0.1, 2.0 * (self.min_rtt or 0.0))

    def delivery_rate(self, now: float) -> float | None:
        """Answers per second over the recent horizon (None before two answers)."""
        delivered = self._delivered
        horizon = now - self._horizon()
        while delivered and delivered[0] < horizon:
            delivered.popleft()
        if len(delivered) < 2:
            return None
        span = max(now - delivered[0], self.min_rtt or 0.0, 1e-6)
        return len(delivered) / span

    def on_overload(self, ticket: int, now: float, retry_after: float | None) -> None:
        """The attempt ``ticket`` was turned away for load (429/503/529) at ``now``."""
        self.in_flight -= 1
        self.overload_signals += 1
        if retry_after is not None and retry_after > 0.0:
            self.pause_until = max(self.pause_until, now + min(retry_after, MAX_PAUSE_S))
        if not self.adaptive or ticket <= self._recover:
            return  # sent before the last decrease: the same congestion, already acted on
        target = self.window * self.beta
        rate = self.delivery_rate(now)
        if rate is not None and self.min_rtt is not None:
            # What the provider has been answering, times the round trip, is the window it sustains
            # (TCP Westwood's estimate): after a burst hid the limit, one step lands near it.
            target = min(target, rate * self.min_rtt)
        self.window = max(self.min_window, target)
        self.ssthresh = self.window
        self._recover = self._issued
        self.paced = True
        self.decreases += 1
        self._seen_min = min(self._seen_min, self.window)

    def on_other(self, ticket: int) -> None:
        """The attempt ``ticket`` failed for a reason that says nothing about load."""
        self.in_flight -= 1

    def stats(self) -> LimiterStats:
        """A snapshot of what the window did."""
        return LimiterStats(
            window=self.window,
            min_window=self._seen_min,
            max_window=self._seen_max,
            overload_signals=self.overload_signals,
            decreases=self.decreases,
            successes=self.successes,
        )


class AdaptiveLimiter:
    """:class:`AimdWindow` on the asyncio event loop (its clock): attempts wait their turn in order."""

    def __init__(
        self,
        max_concurrency: int,
        *,
        adaptive: bool = True,
        initial: int = 16,
        beta: float = 0.7,
        probe_requests: int = 80,
        slow_start_step: float = 0.5,
    ) -> None:
        self.rules = AimdWindow(
            max_concurrency,
            initial=initial,
            beta=beta,
            probe_requests=probe_requests,
            slow_start_step=slow_start_step,
            adaptive=adaptive,
        )
        self._waiters: deque[asyncio.Future[int]] = deque()
        self._timer: asyncio.TimerHandle | None = None

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    @property
    def window(self) -> float:
        """The current window (slots), fractional below one."""
        return self.rules.window

    async def acquire(self) -> int:
        rules = self.rules
        if not self._waiters:
            now = self._now()
            at = rules.send_at(now)
            if at is not None and at <= now:
                return rules.on_send(now)
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        self._dispatch()
        try:
            return await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                rules.on_other(fut.result())  # granted just as we were cancelled: hand it back
                self._dispatch()
            else:
                try:
                    self._waiters.remove(fut)
                except ValueError:
                    pass
            raise

    def release(
        self, ticket: int, outcome: Outcome, *, rtt: float = 0.0, retry_after: float | None = None
    ) -> None:
        if outcome == "ok":
            self.rules.on_success(ticket, rtt, self._now())
        elif outcome == "overload":
            self.rules.on_overload(ticket, self._now(), retry_after)
        else:
            self.rules.on_other(ticket)
        if self._waiters:
            self._dispatch()

    def _dispatch(self) -> None:
        rules = self.rules
        while self._waiters:
            if self._waiters[0].done():  # cancelled while waiting
                self._waiters.popleft()
                continue
            now = self._now()
            at = rules.send_at(now)
            if at is None:
                return  # a release will call again
            if at > now:
                self._arm(at)
                return
            self._waiters.popleft().set_result(rules.on_send(now))

    def _arm(self, at: float) -> None:
        if self._timer is not None and not self._timer.cancelled():
            if self._timer.when() <= at:
                return
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_at(at, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._dispatch()
