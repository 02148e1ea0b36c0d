"""Merging the categories of separate cluster batches into one set, by content.

Batches are read independently (in parallel), so the same failure mode can come back under two
names. Two categories of *different* batches merge when they have the same id, or when the token
Jaccard similarity of their title, definition and question is at least ``threshold``
(methods.md §5). Categories of one batch never merge with each other (the reader split them on
purpose), even through a third. Pairs are merged most similar first, ties by id, so the result is
deterministic. A merged category takes its wording from its largest member and its routing from
the members' notes (majority; a tie is ``eval-worthy``, the routing that keeps a standing check).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ._cluster import Category, Routing

__all__ = ["MergedCategory", "SourceCategory", "merge_categories", "token_jaccard"]

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "the a an and or of to in on for with by at is was are be been it its this that as from agent "
    "did does do not no when run runs user".split()
)


def _tokens(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOP)


def token_jaccard(a: str, b: str) -> float:
    """|A ∩ B| / |A ∪ B| over normalised word sets (0 when both are empty)."""
    ta, tb = _tokens(a), _tokens(b)
    union = ta | tb
    return len(ta & tb) / len(union) if union else 0.0


@dataclass(frozen=True, kw_only=True)
class SourceCategory:
    """A category as one batch answered it."""

    batch: int
    category: Category

    @property
    def text(self) -> str:
        """What similarity is measured on."""
        c = self.category
        return f"{c.title} {c.definition} {c.question}"


@dataclass(frozen=True, kw_only=True)
class MergedCategory:
    """One category across batches."""

    id: str
    title: str
    definition: str
    question: str
    pass_definition: str
    fail_definition: str
    routing: Routing
    routing_votes: dict[str, int]
    """Notes per routing among the members (``fixable`` / ``eval-worthy``)."""
    routing_reason: str
    note_ids: tuple[str, ...]
    members: tuple[tuple[int, str], ...]
    """(batch, id) of every source category merged here."""


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def merge_categories(sources: Sequence[SourceCategory], *, threshold: float = 0.5) -> list[MergedCategory]:
    """Merge categories across batches by content (see the module docstring), largest first."""
    n = len(sources)
    parent = list(range(n))
    batches: list[set[int]] = [{s.batch} for s in sources]
    pairs: list[tuple[float, str, str, int, int]] = []
    for i in range(n):
        for j in range(i + 1, n):
            a, b = sources[i], sources[j]
            if a.batch == b.batch:
                continue
            same = a.category.id == b.category.id
            sim = 2.0 if same else token_jaccard(a.text, b.text)
            if same or sim >= threshold:
                pairs.append((sim, a.category.id, b.category.id, i, j))
    pairs.sort(key=lambda p: (-p[0], p[1], p[2], p[3], p[4]))
    for _, _, _, i, j in pairs:
        ri, rj = _find(parent, i), _find(parent, j)
        if ri == rj or batches[ri] & batches[rj]:
            continue
        parent[rj] = ri
        batches[ri] |= batches[rj]
    groups: dict[int, list[SourceCategory]] = {}
    for i in range(n):
        groups.setdefault(_find(parent, i), []).append(sources[i])
    merged: list[MergedCategory] = []
    used_ids: set[str] = set()
    for members in groups.values():
        lead = sorted(members, key=lambda s: (-len(s.category.note_ids), s.batch, s.category.id))[0].category
        votes = {"fixable": 0, "eval-worthy": 0}
        for s in members:
            votes[s.category.routing] += len(s.category.note_ids)
        routing: Routing = "fixable" if votes["fixable"] > votes["eval-worthy"] else "eval-worthy"
        reason = next(
            (
                s.category.routing_reason
                for s in sorted(members, key=lambda s: (-len(s.category.note_ids), s.batch))
                if s.category.routing == routing
            ),
            lead.routing_reason,
        )
        ids = tuple(
            dict.fromkeys(nid for s in sorted(members, key=lambda s: s.batch) for nid in s.category.note_ids)
        )
        merged.append(
            MergedCategory(
                id=lead.id,
                title=lead.title,
                definition=lead.definition,
                question=lead.question,
                pass_definition=lead.pass_definition,
                fail_definition=lead.fail_definition,
                routing=routing,
                routing_votes=votes,
                routing_reason=reason,
                note_ids=ids,
                members=tuple(sorted((s.batch, s.category.id) for s in members)),
            )
        )
    merged.sort(key=lambda m: (-len(m.note_ids), m.id))
    out: list[MergedCategory] = []
    for m in merged:  # two groups can share a lead id only if the same-batch rule kept them apart
        cid, k = m.id, 2
        while cid in used_ids:
            cid, k = f"{m.id}-{k}", k + 1
        used_ids.add(cid)
        out.append(m if cid == m.id else MergedCategory(**{**m.__dict__, "id": cid}))
    return out
