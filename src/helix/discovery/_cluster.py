"""The clusterer: packets holding batches of first-thing-wrong notes, answered with emergent categories.

A cluster packet shows a batch of notes (id, agent, note) and asks for categories that emerge from
them (never a fixed list): each binary (a question with pass and fail definitions), actionable,
covering some of the note ids, and routed ``fixable`` (a bug for the agent's owner) or
``eval-worthy`` (a standing criterion). Every note id of the batch appears exactly once, in one
category or in ``unassigned`` with a reason. The critique comes first.

:class:`Clustering` is the :class:`~helix.judging.PacketKind`; the parsers are as strict as the
trajectory verdict parser, with typed errors naming the source, field and fix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from .._util import content_hash
from ..judging import (
    JudgeInfo,
    Judgment,
    Pin,
    fence_blocks,
    find_answer_object,
    read_checked_packet,
    read_verdict_document,
)
from ..models import ChatMessage
from ._contract import VerdictEnvelope, bad, check_envelope, check_keys, check_order, judge_of, text_of
from ._texts import (
    CLUSTER_ANSWER,
    CLUSTER_DELIVERY,
    CLUSTER_INSTRUCTIONS,
    DISCOVERY_PROMPT_VERSION,
    NOTES_HEADING,
)

__all__ = [
    "CLUSTER_FORMAT_VERSION",
    "Category",
    "ClusterFile",
    "ClusterPacket",
    "Clustering",
    "ClusterAnswer",
    "NoteView",
    "Routing",
    "Unassigned",
    "cluster_content",
    "cluster_key",
    "example_cluster_verdict",
    "parse_cluster_file",
    "parse_cluster_text",
    "read_cluster_packet",
]

CLUSTER_FORMAT_VERSION = 1
Routing = Literal["fixable", "eval-worthy"]
_ROUTINGS = ("fixable", "eval-worthy")
_ANSWER_KEYS = ("critique", "categories", "unassigned")
_CATEGORY_KEYS = (
    "id",
    "title",
    "definition",
    "question",
    "pass_definition",
    "fail_definition",
    "routing",
    "routing_reason",
    "note_ids",
)
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NoteView(_Model):
    """One note as a clusterer sees it."""

    id: str
    agent: str
    note: str


class Category(_Model):
    """One emergent category of one batch."""

    id: str = Field(pattern=_SLUG.pattern, max_length=80)
    title: str = Field(min_length=1)
    definition: str = Field(min_length=1)
    question: str = Field(min_length=1)
    pass_definition: str = Field(min_length=1)
    fail_definition: str = Field(min_length=1)
    routing: Routing
    routing_reason: str = Field(min_length=1)
    note_ids: tuple[str, ...] = Field(min_length=1)


class Unassigned(_Model):
    """A note that fits no category, and why."""

    note_id: str
    reason: str = Field(min_length=1)


class ClusterAnswer(_Model):
    """The answer of one cluster packet. Field order is part of the contract: critique first."""

    critique: str = Field(min_length=1)
    categories: tuple[Category, ...]
    unassigned: tuple[Unassigned, ...] = ()


class ClusterFile(VerdictEnvelope):
    """The content of a clusterer's ``<key>.verdict.json``."""

    clustering: ClusterAnswer | None = None


class ClusterPacket(_Model):
    """The content of a clusterer's ``<key>.packet.json``."""

    version: int = CLUSTER_FORMAT_VERSION
    kind: Literal["cluster"] = "cluster"
    key: str
    instructions: str = CLUSTER_INSTRUCTIONS
    delivery: str = CLUSTER_DELIVERY
    verdict_file: str
    pin: Pin
    batch: int
    """1-based batch number, in the order the notes were read."""
    notes: tuple[NoteView, ...]
    verdict_format: dict[str, Any]

    @property
    def note_ids(self) -> tuple[str, ...]:
        """The ids every answer must account for."""
        return tuple(n.id for n in self.notes)


def cluster_content(
    notes: Sequence[NoteView], *, prompt_version: str = DISCOVERY_PROMPT_VERSION
) -> dict[str, Any]:
    """Exactly what a cluster packet's key hashes."""
    return {
        "kind": "cluster",
        "prompt_version": prompt_version,
        "notes": [n.model_dump(mode="json") for n in notes],
    }


def cluster_key(notes: Sequence[NoteView], *, prompt_version: str = DISCOVERY_PROMPT_VERSION) -> str:
    """The content key of a cluster packet over ``notes``."""
    return content_hash(cluster_content(notes, prompt_version=prompt_version))


def example_cluster_verdict(key: str, note_ids: Sequence[str]) -> dict[str, Any]:
    """The example verdict file shown in every cluster packet."""
    first = list(note_ids[:1]) or ["<note id>"]
    return {
        "version": CLUSTER_FORMAT_VERSION,
        "key": key,
        "status": "scored",
        "judge": {"runtime": "claude-code", "model": "<the model you ran on>"},
        "clustering": {
            "critique": "Three notes describe refunds sent to a method the policy forbids; two describe ...",
            "categories": [
                {
                    "id": "refund-to-wrong-method",
                    "title": "Refund to a payment method the policy forbids",
                    "definition": "The agent issues a refund to a method other than the original payment.",
                    "question": "Did the agent refund only to the original payment method?",
                    "pass_definition": "Every refund goes to the original payment method, or none was due.",
                    "fail_definition": "A refund goes to a gift card or another method the policy forbids.",
                    "routing": "eval-worthy",
                    "routing_reason": "A judgement about the policy the agent must keep making correctly.",
                    "note_ids": first,
                }
            ],
            "unassigned": [],
        },
    }


def _category(raw: Any, index: int, allowed: set[str], source: str) -> Category:
    where = f"clustering.categories[{index}]"
    if not isinstance(raw, dict):
        raise bad(f"each category must be an object, got {raw!r}", source, where)
    check_keys(raw, _CATEGORY_KEYS, source, where)
    cid = raw.get("id")
    if not isinstance(cid, str) or not _SLUG.match(cid) or len(cid) > 80:
        raise bad(f"id {cid!r} must be a short kebab-case slug (a-z, 0-9, hyphens)", source, f"{where}.id")
    texts = {
        name: text_of(raw, name, source, where, what=what).strip()
        for name, what in (
            ("title", "a short name"),
            ("definition", "what this failure is"),
            ("question", "a yes/no question a judge can answer on any run"),
            ("pass_definition", "when a run passes"),
            ("fail_definition", "when a run fails"),
            ("routing_reason", "why it is fixable or eval-worthy"),
        )
    }
    routing = raw.get("routing")
    if routing not in _ROUTINGS:
        raise bad(
            f"routing {routing!r} is not allowed; use 'fixable' or 'eval-worthy'", source, f"{where}.routing"
        )
    ids = raw.get("note_ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise bad(
            "note_ids must be a non-empty list of note ids from the packet", source, f"{where}.note_ids"
        )
    unknown = [i for i in ids if i not in allowed]
    if unknown:
        raise bad(
            f"note id(s) {unknown[:5]} are not in this packet; use only its note ids",
            source,
            f"{where}.note_ids",
        )
    return Category(id=cid, routing=routing, note_ids=tuple(ids), **texts)


def _answer(raw: Any, note_ids: Sequence[str], source: str) -> ClusterAnswer:
    where = "clustering"
    if not isinstance(raw, dict):
        raise bad(f"'clustering' must be an object, got {raw!r}", source, where)
    check_keys(raw, _ANSWER_KEYS, source, where)
    check_order(raw, "critique", "categories", source, where)
    critique = text_of(raw, "critique", source, where, what="the patterns you see and how you split them")
    allowed = set(note_ids)
    cats_raw = raw["categories"]
    if not isinstance(cats_raw, list):
        raise bad("categories must be a list", source, f"{where}.categories")
    categories = [_category(c, i, allowed, source) for i, c in enumerate(cats_raw)]
    seen_ids: set[str] = set()
    for i, c in enumerate(categories):
        if c.id in seen_ids:
            raise bad(
                f"category id {c.id!r} is used twice; merge them or rename one",
                source,
                f"{where}.categories[{i}].id",
            )
        seen_ids.add(c.id)
    unassigned_raw = raw.get("unassigned", [])
    if not isinstance(unassigned_raw, list):
        raise bad("unassigned must be a list", source, f"{where}.unassigned")
    unassigned: list[Unassigned] = []
    for i, u in enumerate(unassigned_raw):
        w = f"{where}.unassigned[{i}]"
        if not isinstance(u, dict):
            raise bad(f"each unassigned entry must be an object {{note_id, reason}}, got {u!r}", source, w)
        check_keys(u, ("note_id", "reason"), source, w)
        nid = u.get("note_id")
        if nid not in allowed:
            raise bad(f"note id {nid!r} is not in this packet", source, f"{w}.note_id")
        unassigned.append(
            Unassigned(note_id=str(nid), reason=text_of(u, "reason", source, w, what="why it fits nowhere"))
        )
    placed: dict[str, str] = {}
    for c in categories:
        for nid in c.note_ids:
            if nid in placed:
                raise bad(
                    f"note {nid!r} is in {placed[nid]!r} and {c.id!r}; put every note in exactly one category",
                    source,
                    f"{where}.categories",
                )
            placed[nid] = c.id
    for u in unassigned:
        if u.note_id in placed:
            raise bad(
                f"note {u.note_id!r} is both in {placed[u.note_id]!r} and unassigned",
                source,
                f"{where}.unassigned",
            )
        placed[u.note_id] = "unassigned"
    missing = [n for n in note_ids if n not in placed]
    if missing:
        raise bad(
            f"note(s) {missing[:5]}{' ...' if len(missing) > 5 else ''} are in no category; place every note "
            "in one category or in unassigned with a reason",
            source,
            f"{where}.categories",
        )
    return ClusterAnswer(critique=critique, categories=tuple(categories), unassigned=tuple(unassigned))


def parse_cluster_text(
    text: str, *, key: str, note_ids: Sequence[str], source: str, judge: JudgeInfo | None = None
) -> ClusterFile:
    """A provider's answer (bare, fenced or in prose; optionally wrapped in ``clustering``)."""
    obj = find_answer_object(
        text, source, marker="categories", shape='{"critique": ..., "categories": [...]}'
    )
    if "clustering" in obj and isinstance(obj["clustering"], dict):
        check_keys(obj, ["clustering", "key", "version"], source, "")
        obj = obj["clustering"]
    return ClusterFile(key=key, judge=judge, clustering=_answer(obj, note_ids, source))


def parse_cluster_file(path: str | Path, *, key: str, note_ids: Sequence[str]) -> ClusterFile:
    """Read and check a clusterer's ``<key>.verdict.json`` as an agent runtime wrote it."""
    source = str(path)
    obj = read_verdict_document(path, remedy="dispatch the cluster packet to a reader")
    status = check_envelope(obj, key=key, version=CLUSTER_FORMAT_VERSION, body="clustering", source=source)
    judge = judge_of(obj.get("judge"), source) if obj.get("judge") is not None or status == "scored" else None
    if status == "unscored":
        return ClusterFile(key=key, status="unscored", error=obj["error"], judge=judge)
    return ClusterFile(key=key, judge=judge, clustering=_answer(obj.get("clustering"), note_ids, source))


def read_cluster_packet(path: str, key: str) -> ClusterPacket:
    """Read a cluster packet and check its content hashes to ``key``."""
    return read_checked_packet(
        path,
        key,
        ClusterPacket,
        lambda p: cluster_key(p.notes, prompt_version=p.pin.prompt_version),
        remedy="re-run `helix discover cluster`",
    )


def _notes_block(notes: Sequence[NoteView]) -> str:
    return "\n".join(orjson.dumps(n.model_dump(mode="json")).decode("utf-8") for n in notes)


class Clustering:
    """The clusterer as a :class:`~helix.judging.PacketKind` (and a directory kind for the transport)."""

    name = "cluster"

    def key(self, packet: ClusterPacket) -> str:
        return packet.key

    def render(self, packet: ClusterPacket) -> list[ChatMessage]:
        block = _notes_block(packet.notes)
        fence = fence_blocks([block])
        heading = NOTES_HEADING.format(n=len(packet.notes))
        return [
            ChatMessage(role="system", content=f"{CLUSTER_INSTRUCTIONS}\n{CLUSTER_ANSWER}\n"),
            ChatMessage(role="user", content=f"{fence.note}\n\n{heading}\n{fence.wrap(block)}\n"),
        ]

    def parse(self, packet: ClusterPacket, answer: str, *, source: str, served_model: str) -> ClusterFile:
        judge = JudgeInfo(
            runtime="model", model=served_model, temperature=0.0, prompt_version=packet.pin.prompt_version
        )
        return parse_cluster_text(
            answer, key=packet.key, note_ids=packet.note_ids, source=source, judge=judge
        )

    def feedback(self, packet: ClusterPacket, error: str) -> ChatMessage:
        return ChatMessage(
            role="user",
            content=(
                "Your answer could not be used. The parser reported:\n"
                f"{error}\n\nAnswer again with one JSON object and nothing else.\n{CLUSTER_ANSWER}"
            ),
        )

    def read_packet(self, path: str, key: str) -> ClusterPacket:
        return read_cluster_packet(path, key)

    def verdict_bytes(self, judgment: Judgment[ClusterFile], *, model: str, temperature: float) -> bytes:
        if judgment.result is not None:
            verdict = judgment.result
        else:
            assert judgment.unscored is not None
            verdict = ClusterFile(
                key=judgment.key,
                status="unscored",
                error=judgment.unscored.error,
                judge=JudgeInfo(
                    runtime="model",
                    model=model,
                    temperature=temperature,
                    prompt_version=DISCOVERY_PROMPT_VERSION,
                ),
            )
        return orjson.dumps(verdict.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n"
