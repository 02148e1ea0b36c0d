"""Discovery saturation by simulation: the stop rule against the peer heuristic, and interval coverage.

Failure modes are drawn from known category distributions (a Zipf tail of rare modes, a few dominant
modes, a uniform set). Each simulated discovery pass reads traces one by one (a fraction fail, each
failure falls in one category) and stops by a rule:

- peer: stop after K traces without a new category (the common "nothing new lately" heuristic);
- helix: the same, and Good–Turing coverage at least 0.95 (``helix.discovery.saturation``).

Printed per distribution, over many passes, in the same run: traces read at stop, the TRUE unseen
failure mass at stop (the chance the next failure is of a mode not yet seen), and the ratio of the
two rules. Then the measured coverage of the 95% intervals of Good–Turing coverage and Chao1
richness at a fixed sample size. Run by hand: ``./run python benchmarks/bench_saturation.py``.
"""

from __future__ import annotations

import random
import statistics

from helix.discovery import chao1, good_turing_coverage, saturation

K = 20
TARGET = 0.95
FAIL_RATE = 0.5
MAX_TRACES = 3000
PASSES = 300

DISTRIBUTIONS = {
    "zipf-60": [1 / (k + 1) for k in range(60)],
    "dominant-5+tail-30": [20.0] * 5 + [1.0] * 30,
    "uniform-25": [1.0] * 25,
}


def one_pass(weights: list[float], rng: random.Random) -> tuple[tuple[int, float], tuple[int, float]]:
    total = sum(weights)
    probs = [w / total for w in weights]
    labels: list[str | None] = []
    seen: set[int] = set()
    peer: tuple[int, float] | None = None
    last_new = 0
    for t in range(1, MAX_TRACES + 1):
        if rng.random() < FAIL_RATE:
            c = rng.choices(range(len(weights)), weights=weights)[0]
            if c not in seen:
                last_new = t
            seen.add(c)
            labels.append(f"c{c}")
        else:
            labels.append(None)
        unseen = 1.0 - sum(probs[i] for i in seen)
        if peer is None and t - last_new >= K and seen:
            peer = (t, unseen)
        if peer is not None and t >= K and t % 5 == 0 and saturation(labels, last_k=K, target=TARGET).stopped:
            return peer, (t, unseen)
    unseen = 1.0 - sum(probs[i] for i in seen)
    return peer or (MAX_TRACES, unseen), (MAX_TRACES, unseen)


def interval_coverage(weights: list[float], n: int, rng: random.Random) -> tuple[float, float]:
    total = sum(weights)
    probs = [w / total for w in weights]
    cov_in = chao_in = 0
    for _ in range(PASSES):
        draws = rng.choices(range(len(weights)), weights=weights, k=n)
        counts = [draws.count(c) for c in set(draws)]
        true_cov = sum(probs[c] for c in set(draws))
        _, (lo, hi) = good_turing_coverage(counts)  # type: ignore[misc]
        cov_in += lo - 1e-9 <= true_cov <= hi + 1e-9  # float sums of probabilities
        _, (clo, chi) = chao1(counts)  # type: ignore[misc]
        chao_in += clo <= len(weights) <= chi
    return cov_in / PASSES, chao_in / PASSES


def main() -> None:
    rng = random.Random(2026)
    print(f"stop rules, {PASSES} passes each, K={K}, target coverage {TARGET}, failure rate {FAIL_RATE}")
    print(
        f"{'distribution':<20} {'rule':<6} {'traces p50':>10} {'unseen mass p50':>16} {'p90':>7} {'>5% unseen':>11}"
    )
    for name, weights in DISTRIBUTIONS.items():
        peers, ours = zip(*(one_pass(weights, rng) for _ in range(PASSES)), strict=True)
        for rule, rows in (("peer", peers), ("helix", ours)):
            traces = [r[0] for r in rows]
            unseen = sorted(r[1] for r in rows)
            over = sum(u > 0.05 for u in unseen) / len(unseen)
            print(
                f"{name:<20} {rule:<6} {statistics.median(traces):>10.0f} {statistics.median(unseen):>16.3f} "
                f"{unseen[int(0.9 * len(unseen))]:>7.3f} {over:>11.1%}"
            )
        ratio = statistics.median(r[1] for r in ours) / max(statistics.median(r[1] for r in peers), 1e-9)
        cost = statistics.median(r[0] for r in ours) / statistics.median(r[0] for r in peers)
        print(f"{'':<20} helix/peer: unseen mass x{ratio:.2f}, traces read x{cost:.2f}")
    print(f"\n95% interval coverage measured over {PASSES} samples (n notes):")
    for name, weights in DISTRIBUTIONS.items():
        for n in (60, 200):
            cov, ch = interval_coverage(weights, n, rng)
            print(f"  {name:<20} n={n:<4} Good–Turing coverage CI {cov:.1%}   Chao1 CI {ch:.1%}")


if __name__ == "__main__":
    main()
