"""Active labeling: order the review queue so each label shrinks the corrected-rate interval most.

The judged items are split into strata by what the judge said (verdict × how sure it was:
:func:`~helix.review.stratum_of` under the ``active`` design). The post-stratified estimate of the
success rate has variance Σ_s W_s² p_s(1 − p_s)/n_s (W_s the stratum's share of the judged items, p_s
its human pass rate, n_s its labels), so the next label goes to the stratum whose extra label removes
the most variance, W_s² p̂_s(1 − p̂_s)(1/n_s − 1/(n_s + 1)) with p̂_s = (y_s + 1)/(n_s + 2): the greedy
form of Neyman allocation. Strata without two labels yet come first. Within a stratum the order is a
seeded shuffle, so the labelled items of a stratum are a random sample of it and the estimator stays
valid; the inclusion probability of a labelled item of stratum s is n_s/N_s.

Where the judge is sure and right, labels add little; where it is unsure (low confidence, split
reruns, an abstention) or the human pass rate is near one half, they add much: those strata get
the labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._util import content_hash
from ._design import LabelDesign, stratum_of
from ._items import ReviewItem
from ._labels import HumanLabel

__all__ = ["ACTIVE", "QueuedItem", "active_order", "allocation_scores"]

ACTIVE = LabelDesign(kind="active")
_MIN_PER_STRATUM = 2


def allocation_scores(
    judged: npt.ArrayLike, labelled: npt.ArrayLike, human_pass: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """Variance removed by one more label in each stratum (last axis = strata; any leading axes).

    ``inf`` for a stratum with fewer than two labels that still has unlabelled items; ``-inf`` for
    one with nothing left to label.
    """
    big_n = np.asarray(judged, dtype=np.float64)
    n = np.asarray(labelled, dtype=np.float64)
    y = np.asarray(human_pass, dtype=np.float64)
    total = big_n.sum(axis=-1, keepdims=True)
    weight = np.divide(big_n, total, out=np.zeros_like(big_n), where=total > 0)
    p = (y + 1.0) / (n + 2.0)
    with np.errstate(divide="ignore"):
        gain = weight**2 * p * (1.0 - p) * (1.0 / np.maximum(n, 1.0) - 1.0 / (n + 1.0))
    gain = np.where(n < _MIN_PER_STRATUM, np.inf, gain)
    return np.where(n >= big_n, -np.inf, gain)


@dataclass(frozen=True, kw_only=True)
class QueuedItem:
    """An item in the active queue, with the stratum it was chosen from (None: undecided)."""

    item: ReviewItem
    stratum: str | None


def active_order(
    items: Iterable[ReviewItem],
    labels: Iterable[HumanLabel] | Mapping[tuple[str, str], str] = (),
    *,
    seed: int = 0,
) -> list[QueuedItem]:
    """The active review order: per criterion, unlabelled decided items by greedy Neyman allocation
    over verdict × uncertainty strata (interleaved across criteria), then undecided items, then the
    items already labelled (to revisit).

    ``labels`` are the labels already made (they count toward each stratum's n_s and p̂_s).
    """
    human: Mapping[tuple[str, str], str]
    if isinstance(labels, Mapping):
        human = labels
    else:
        human = {(x.trace_id, x.criterion_id): x.label for x in labels}

    def shuffle_key(item: ReviewItem) -> str:
        return content_hash(f"{seed}\x00{item.trace_id}\x00{item.criterion_id}", length=16)

    pool = sorted(items, key=shuffle_key)
    per_criterion: dict[str, list[QueuedItem]] = {}
    undecided: list[QueuedItem] = []
    revisit: list[QueuedItem] = []
    for cid in sorted({i.criterion_id for i in pool}):
        strata: dict[str, list[ReviewItem]] = {}
        for i in pool:
            if i.criterion_id != cid:
                continue
            known = (i.trace_id, i.criterion_id) in human
            if i.judge_result in ("pass", "fail"):
                name = stratum_of(ACTIVE, i.judge_result, confidence=i.confidence)
                strata.setdefault(name, []).append(i)
                if known:
                    revisit.append(QueuedItem(item=i, stratum=name))
            else:
                (revisit if known else undecided).append(QueuedItem(item=i, stratum=None))
        names = sorted(strata)
        judged = np.array([len(strata[s]) for s in names], dtype=np.float64)
        done = [[i for i in strata[s] if (i.trace_id, i.criterion_id) in human] for s in names]
        todo = [[i for i in strata[s] if (i.trace_id, i.criterion_id) not in human] for s in names]
        labelled = np.array([len(d) for d in done], dtype=np.float64)
        passed = np.array(
            [sum(human[(i.trace_id, i.criterion_id)] == "pass" for i in d) for d in done], dtype=np.float64
        )
        order: list[QueuedItem] = []
        taken = [0] * len(names)
        # The queue is planned with the labels known now: a planned label counts as the expected share of a
        # pass (p̂ of its stratum), so the plan keeps each stratum's estimated pass rate.
        while True:
            gains = allocation_scores(judged, labelled, passed)
            best = int(np.argmax(gains)) if len(names) else 0
            if not len(names) or gains[best] == -np.inf or taken[best] >= len(todo[best]):
                break
            order.append(QueuedItem(item=todo[best][taken[best]], stratum=names[best]))
            taken[best] += 1
            passed[best] += (passed[best] + 1.0) / (labelled[best] + 2.0)
            labelled[best] += 1
        per_criterion[cid] = order
    interleaved: list[QueuedItem] = []
    queues: Sequence[list[QueuedItem]] = [per_criterion[c] for c in sorted(per_criterion)]
    for level in range(max((len(q) for q in queues), default=0)):
        interleaved.extend(q[level] for q in queues if level < len(q))
    return interleaved + undecided + revisit
