"""Calibration: (a) the real coverage of the corrected-rate interval; (b) its speed against judgy.

Run by hand (not a CI test; the simulation takes a few minutes):

    uv run python benchmarks/bench_calibration.py coverage [--reps 1000] [--write-docs]
    uv run python benchmarks/bench_calibration.py timing [--judgy-iterations 20000]

(a) For every regime of the grid (labels per class × TPR × TNR × prevalence × judged n) it draws
``reps`` seeded data sets from the regime: the human-pass labels see the judge say pass with
probability TPR, the human-fail labels say fail with probability TNR, and the judged set says pass
with probability p_obs = θ·TPR + (1 − θ)(1 − TNR) where θ is the prevalence. It computes Helix's 95%
interval for each (vectorised over the reps, the same code as ``helix validate``) and counts how
often it contains θ. Data sets whose point estimate is invalid (TPR + TNR − 1 too small) produce no
interval and are counted as refusals, not as coverage. ``--write-docs`` writes the table into
docs/calibration.md between the COVERAGE markers.

(b) Times corrected rate + interval with 100k judged / 1k labeled items and with 100k labeled items,
against ``judgy.estimate_success_rate`` on the same data, in the same run, and prints the ratio.
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from helix.calibration import (
    COVERAGE_GRID,
    MIN_DENOMINATOR,
    corrected_rate,
    corrected_rate_intervals,
)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "calibration.md"
BEGIN, END = "<!-- COVERAGE:BEGIN -->", "<!-- COVERAGE:END -->"


def coverage(
    m: int, tpr: float, tnr: float, prev: float, n: int, *, reps: int, draws: int, seed: int
) -> tuple[float, float, float]:
    """(coverage among valid results, share refused as invalid, mean width) for one regime."""
    rng = np.random.default_rng(seed)
    tp = rng.binomial(m, tpr, reps)
    tn = rng.binomial(m, tnr, reps)
    k = rng.binomial(n, prev * tpr + (1 - prev) * (1 - tnr), reps)
    den = tp / m + tn / m - 1
    valid = den > MIN_DENOMINATOR
    if not valid.any():
        return float("nan"), 1.0, float("nan")
    theta = np.clip((k / n + tn / m - 1) / np.where(valid, den, 1.0), 0, 1)[valid]
    low, high = corrected_rate_intervals(tp[valid], m, tn[valid], m, k[valid], n, seed=seed + 1, draws=draws)
    low, high = np.minimum(low, theta), np.maximum(high, theta)
    covered = (low <= prev) & (prev <= high)
    return float(covered.mean()), float(1 - valid.mean()), float((high - low).mean())


def run_coverage(reps: int, draws: int, write_docs: bool) -> None:
    g = COVERAGE_GRID
    regimes = list(itertools.product(g.labels_per_class, g.tpr, g.tnr, g.prevalence, g.judged_n))
    print(f"{len(regimes)} regimes × {reps} data sets, {draws} posterior draws each")
    started = time.perf_counter()
    results = {}
    for i, (m, tpr, tnr, prev, n) in enumerate(regimes):
        results[(m, tpr, tnr, prev, n)] = coverage(
            m, tpr, tnr, prev, n, reps=reps, draws=draws, seed=1000 + i
        )
    elapsed = time.perf_counter() - started
    rows = []
    flagged = []
    for m, tpr, tnr in itertools.product(g.labels_per_class, g.tpr, g.tnr):
        cells = [results[(m, tpr, tnr, p, n)] for p in g.prevalence for n in g.judged_n]
        covs = [c for c, _, _ in cells if c == c]
        refused = float(np.mean([r for _, r, _ in cells]))
        width = float(np.nanmean([w for _, _, w in cells]))
        low = min(covs) if covs else float("nan")
        rows.append(
            f"| {m} | {tpr:g} | {tnr:g} | {low:.3f} | {np.mean(covs):.3f} | {refused:.1%} | {width:.3f} |"
        )
        for p in g.prevalence:
            for n in g.judged_n:
                c = results[(m, tpr, tnr, p, n)][0]
                if c == c and c < 0.94:
                    flagged.append(f"({m}, {tpr:g}, {tnr:g}, {p:g}, {n}): {c:.3f}")
    table = "\n".join(
        [
            f"Measured {time.strftime('%Y-%m-%d')} by `benchmarks/bench_calibration.py coverage` "
            f"({reps} data sets per regime, {draws} posterior draws, seeded; {elapsed:.0f} s). Each row "
            f"aggregates {len(g.prevalence)} prevalences ({', '.join(f'{p:g}' for p in g.prevalence)}) × "
            f"{len(g.judged_n)} judged-set sizes ({', '.join(str(n) for n in g.judged_n)}).",
            "",
            "| labels/class | TPR | TNR | min coverage | mean coverage | refused (invalid) | mean width |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            *rows,
            "",
            f"Regimes with measured coverage below 94% (labels/class, TPR, TNR, prevalence, judged n): "
            f"{len(flagged)} of {len(regimes)}.",
            "",
            *(f"- {f}" for f in flagged),
        ]
    )
    print(table)
    print("\nFLAGGED = (")
    for m, tpr, tnr in itertools.product(g.labels_per_class, g.tpr, g.tnr):
        for p in g.prevalence:
            for n in g.judged_n:
                c = results[(m, tpr, tnr, p, n)][0]
                if c == c and c < 0.94:
                    print(f"    ({m}, {tpr!r}, {tnr!r}, {p!r}, {n}),")
    print(")")
    if write_docs:
        text = DOCS.read_text(encoding="utf-8")
        start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
        DOCS.write_text(text[:start] + "\n" + table + "\n" + text[stop:], encoding="utf-8")
        print(f"wrote {DOCS}")


def _timed(fn: Callable[[], None]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _helix(labels: np.ndarray, preds: np.ndarray, unlabeled: np.ndarray) -> None:
    """What `helix validate` does with the data: count, then the corrected rate and its interval."""
    corrected_rate(
        tp=int((labels & preds).sum()),
        n_pos=int(labels.sum()),
        tn=int((~labels & ~preds).sum()),
        n_neg=int((~labels).sum()),
        judged_pass=int(unlabeled.sum()),
        judged=int(unlabeled.size),
        seed=1,
    )


def _judgy(labels: np.ndarray, preds: np.ndarray, unlabeled: np.ndarray, iterations: int) -> None:
    from judgy import estimate_success_rate

    np.random.seed(1)
    estimate_success_rate(
        labels.astype(int), preds.astype(int), unlabeled.astype(int), bootstrap_iterations=iterations
    )


def run_timing(judgy_iterations: int) -> None:
    rng = np.random.default_rng(7)
    for label, n_labeled in (("100k judged / 1k labeled", 1_000), ("100k judged / 100k labeled", 100_000)):
        labels = rng.random(n_labeled) < 0.5
        preds = np.where(labels, rng.random(n_labeled) < 0.9, rng.random(n_labeled) < 0.15)
        unlabeled = rng.random(100_000) < 0.6
        h = min(_timed(lambda: _helix(labels, preds, unlabeled)) for _ in range(5))  # noqa: B023
        j = _timed(lambda: _judgy(labels, preds, unlabeled, judgy_iterations))  # noqa: B023
        print(
            f"{label}: helix {h * 1000:.1f} ms (best of 5), judgy ({judgy_iterations} bootstrap iterations) "
            f"{j * 1000:.0f} ms, judgy/helix = {j / h:.0f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="what", required=True)
    cov = sub.add_parser("coverage")
    cov.add_argument("--reps", type=int, default=1000)
    cov.add_argument("--draws", type=int, default=2000)
    cov.add_argument("--write-docs", action="store_true")
    tim = sub.add_parser("timing")
    tim.add_argument("--judgy-iterations", type=int, default=20_000)
    args = parser.parse_args()
    if args.what == "coverage":
        run_coverage(args.reps, args.draws, args.write_docs)
    else:
        run_timing(args.judgy_iterations)


if __name__ == "__main__":
    main()
