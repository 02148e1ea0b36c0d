"""The AIMD rules of the adaptive limiter, checked on an explicit clock (no timing), and its queue."""

from __future__ import annotations

import asyncio

import pytest

from helix import UsageError
from helix.models import AdaptiveLimiter, AimdWindow, is_overload_status


def fill(w: AimdWindow, now: float) -> list[int]:
    """Send as many attempts as the window allows at ``now``."""
    tickets = []
    while (at := w.send_at(now)) is not None and at <= now:
        tickets.append(w.on_send(now))
    return tickets


def test_slow_start_grows_the_window_by_half_each_round_trip_up_to_the_ceiling() -> None:
    w = AimdWindow(100, initial=16)
    assert w.window == 16 and w.slots == 16
    for expected in (24, 36, 54, 81, 100):
        tickets = fill(w, 0.0)
        for t in tickets:
            w.on_success(t, rtt=0.1, now=1.0)
        assert w.window == expected
    assert len(fill(w, 0.0)) == 100  # never past the ceiling


def test_overload_shrinks_the_window_once_per_window_of_requests() -> None:
    w = AimdWindow(512, initial=40, beta=0.5)
    tickets = fill(w, 0.0)
    assert len(tickets) == 40
    for t in tickets[:10]:  # ten 429s from the same burst: one congestion event
        w.on_overload(t, now=0.01, retry_after=None)
    assert w.window == 20 and w.decreases == 1 and w.overload_signals == 10
    later = fill(w, 0.02)  # 20 slots, 30 still out: nothing can go
    assert later == []
    for t in tickets[10:]:
        w.on_success(t, rtt=0.1, now=1.0)
    fresh = fill(w, 1.0)
    w.on_overload(fresh[0], now=1.01, retry_after=None)  # sent after the decrease: new evidence
    assert w.decreases == 2 and w.window == pytest.approx(w.ssthresh)


def test_retry_after_holds_every_send_until_the_time_the_server_asked_for() -> None:
    w = AimdWindow(8, initial=8)
    t, *rest = fill(w, 0.0)
    for other in rest:
        w.on_success(other, rtt=0.1, now=1.0)
    w.on_overload(t, now=1.0, retry_after=2.5)
    assert w.send_at(1.0) == pytest.approx(3.5)
    w.on_overload(w.on_send(3.6), now=3.6, retry_after=1000.0)
    assert w.send_at(3.6) == pytest.approx(3.6 + 60.0)  # capped at a minute


def test_after_an_overload_sends_are_paced_by_the_measured_round_trip() -> None:
    w = AimdWindow(64, initial=10, beta=0.5, slow_start_step=1.0)
    first = fill(w, 0.0)
    for t in first[1:]:
        w.on_success(t, rtt=0.2, now=0.2)
    w.on_overload(first[0], now=1.0, retry_after=None)  # answers are too old to estimate a rate
    assert w.paced and w.window == pytest.approx(9.5)  # 19 after slow start, halved
    t = w.on_send(1.0)
    # the next send waits min_rtt / window, so a reopened window does not leave as one burst
    assert w.send_at(1.0) == pytest.approx(1.0 + 0.2 / 9.5)
    w.on_success(t, rtt=0.2, now=1.0)


def test_additive_increase_climbs_slowly_for_small_windows_and_one_slot_per_window_for_large() -> None:
    small = AimdWindow(512, initial=4, beta=0.7, probe_requests=40)
    small.ssthresh = 4.0  # in congestion avoidance
    small.on_success(small.on_send(0.0), rtt=0.1, now=0.1)
    assert small.window == pytest.approx(4.0 + 0.3 * 4.0 / 40)  # 40 successes to regain 30%
    large = AimdWindow(512, initial=400, beta=0.7, probe_requests=40)
    large.ssthresh = 400.0
    large.on_success(large.on_send(0.0), rtt=0.1, now=0.1)
    assert large.window == pytest.approx(400.0 + 1 / 400)  # one slot per window of successes


def test_after_a_burst_hid_the_limit_the_window_drops_to_what_the_provider_answers() -> None:
    w = AimdWindow(512, initial=200, beta=0.7)
    tickets = fill(w, 0.0)
    # 10 answers in the last round trip (0.1 s): the provider sustains about 100/s x 0.1 s = 10 slots
    for i, t in enumerate(tickets[:10]):
        w.on_success(t, rtt=0.1, now=0.1 + i * 0.01)
    w.on_overload(tickets[10], now=0.2, retry_after=None)
    assert w.window == pytest.approx(10 / 0.1 * 0.1, rel=0.2) and w.window < 200 * 0.7


def test_a_window_below_one_sends_one_at_a_time_spaced_out() -> None:
    w = AimdWindow(16, initial=1, beta=0.5)
    t = w.on_send(0.0)
    w.on_success(t, rtt=0.4, now=1.0)
    w.window = w.ssthresh = 0.25  # after repeated overloads (floor: 1/16)
    w.paced = True
    t = w.on_send(10.0)
    assert w.slots == 1 and w.send_at(10.0) is None
    w.on_success(t, rtt=0.4, now=1.0)
    assert w.send_at(10.0) == pytest.approx(10.0 + 0.4 / w.window)


def test_fixed_mode_keeps_the_window_but_honours_retry_after() -> None:
    w = AimdWindow(8, adaptive=False)
    tickets = fill(w, 0.0)
    assert len(tickets) == 8
    w.on_overload(tickets[0], now=0.0, retry_after=1.0)
    assert w.window == 8 and w.decreases == 0 and w.send_at(0.0) == pytest.approx(1.0)


def test_overload_statuses_and_bad_arguments() -> None:
    assert [s for s in (200, 408, 429, 500, 503, 529) if is_overload_status(s)] == [429, 503, 529]
    with pytest.raises(UsageError, match="concurrency"):
        AimdWindow(0)
    with pytest.raises(UsageError, match="beta"):
        AimdWindow(4, beta=1.5)


def test_waiters_are_served_in_arrival_order_and_a_cancelled_one_is_skipped() -> None:
    async def go() -> list[str]:
        limiter = AdaptiveLimiter(1, initial=1)
        first = await limiter.acquire()
        order: list[str] = []

        async def wait(name: str) -> None:
            ticket = await limiter.acquire()
            order.append(name)
            limiter.release(ticket, "ok", rtt=0.01)

        tasks = {n: asyncio.create_task(wait(n)) for n in ("a", "b", "c")}
        await asyncio.sleep(0)  # all three queued
        tasks["b"].cancel()
        await asyncio.sleep(0)
        limiter.release(first, "ok", rtt=0.01)
        await asyncio.gather(tasks["a"], tasks["c"])
        assert limiter.rules.in_flight == 0
        return order

    assert asyncio.run(go()) == ["a", "c"]
