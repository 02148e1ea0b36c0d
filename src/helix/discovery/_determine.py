"""The determiner: one packet per trace, one determination per packet.

A determination answers two things about one trajectory: did the agent attain the user's goal
(``pass``, ``fail`` or ``uncertain``; inaction can be success), and, when it failed, the first thing
that went wrong (the transcript index, the agent, an open-coded note). The critique comes first.

The verdict contract is as strict as the trajectory verdict's (:func:`parse_determination_file`,
:func:`parse_determination_text`): exact keys, critique before result (checked on the raw key
order), a closed result set, ``blocked_by`` exactly when uncertain, ``first_wrong`` exactly when
failed and pointing inside the transcript. :class:`Determining` is the
:class:`~helix.judging.PacketKind` a provider judges through :func:`~helix.judging.judge_packet`.
"""

from __future__ import annotations

from collections.abc import Mapping
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
from ._contract import (
    VerdictEnvelope,
    bad,
    check_envelope,
    check_keys,
    check_order,
    confidence_of,
    judge_of,
    text_of,
)
from ._texts import (
    DETERMINE_ANSWER,
    DETERMINE_DELIVERY,
    DETERMINE_INSTRUCTIONS,
    DISCOVERY_PROMPT_VERSION,
    TRAJECTORY_HEADING,
)

__all__ = [
    "DETERMINATION_FORMAT_VERSION",
    "Determination",
    "DeterminationFile",
    "DeterminationPacket",
    "Determining",
    "FirstWrong",
    "determination_content",
    "determination_key",
    "example_verdict",
    "parse_determination_file",
    "parse_determination_text",
    "read_determination_packet",
]

DETERMINATION_FORMAT_VERSION = 1
_KEYS = ("critique", "result", "confidence", "blocked_by", "first_wrong")
_WRONG_KEYS = ("index", "agent", "note")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FirstWrong(_Model):
    """The first thing that went wrong in a failed run."""

    index: int = Field(ge=0)
    """The transcript index of the entry where the run first went off course."""
    agent: str = Field(min_length=1)
    """Who produced that entry (its ``agent`` field, or its role)."""
    note: str = Field(min_length=1)
    """What happened, open-coded: the analyst's own words, specific to the run."""


class Determination(_Model):
    """The answer of one determiner packet. Field order is part of the contract: critique first."""

    critique: str = Field(min_length=1)
    result: Literal["pass", "fail", "uncertain"]
    """``pass``: the user's goal was attained (or holding back was right); ``fail``: it was not."""
    confidence: float = Field(ge=0.0, le=1.0)
    blocked_by: str | None = None
    """Required when ``result`` is ``uncertain``: the evidence the trajectory lacks."""
    first_wrong: FirstWrong | None = None
    """Required when ``result`` is ``fail``, null otherwise."""


class DeterminationFile(VerdictEnvelope):
    """The content of a determiner's ``<key>.verdict.json``."""

    determination: Determination | None = None


class DeterminationPacket(_Model):
    """The content of a determiner's ``<key>.packet.json``."""

    version: int = DETERMINATION_FORMAT_VERSION
    kind: Literal["determination"] = "determination"
    key: str
    instructions: str = DETERMINE_INSTRUCTIONS
    delivery: str = DETERMINE_DELIVERY
    verdict_file: str
    pin: Pin
    trajectory: dict[str, Any]
    """The trajectory as the reader sees it (transcript entries carry ``index`` and ``agent``)."""
    verdict_format: dict[str, Any]
    trace_ids: tuple[str, ...] = ()
    """The traces this determination stands for (identical content is read once; not in the key)."""

    @property
    def entries(self) -> int:
        """How many transcript entries the trajectory has."""
        return len(self.trajectory.get("transcript") or ())


def determination_content(
    trajectory: Mapping[str, Any], *, prompt_version: str = DISCOVERY_PROMPT_VERSION
) -> dict[str, Any]:
    """Exactly what a determiner packet's key hashes."""
    return {"kind": "determination", "prompt_version": prompt_version, "trajectory": trajectory}


def determination_key(
    trajectory: Mapping[str, Any], *, prompt_version: str = DISCOVERY_PROMPT_VERSION
) -> str:
    """The content key of a determiner packet over ``trajectory``."""
    return content_hash(determination_content(trajectory, prompt_version=prompt_version))


def example_verdict(key: str) -> dict[str, Any]:
    """The example verdict file shown in every packet."""
    return {
        "version": DETERMINATION_FORMAT_VERSION,
        "key": key,
        "status": "scored",
        "judge": {"runtime": "claude-code", "model": "<the model you ran on>"},
        "determination": {
            "critique": "Entry 3 asks for a refund to a gift card; the policy says refunds go to the original "
            "payment method; entry 5 issues the gift-card refund anyway, so the goal was not met within the rules.",
            "result": "fail",
            "confidence": 0.85,
            "blocked_by": None,
            "first_wrong": {
                "index": 5,
                "agent": "assistant",
                "note": "refunded to a gift card although the order was paid by card",
            },
        },
    }


def _first_wrong(raw: Any, entries: int, source: str) -> FirstWrong:
    where = "determination.first_wrong"
    if not isinstance(raw, dict):
        raise bad(
            f"first_wrong must be an object {{index, agent, note}} when the result is fail, got {raw!r}",
            source,
            where,
        )
    check_keys(raw, _WRONG_KEYS, source, where)
    index = raw.get("index")
    if isinstance(index, bool) or not isinstance(index, int):
        raise bad(f"index {index!r} must be a transcript index (an integer)", source, f"{where}.index")
    if not 0 <= index < max(entries, 1):
        raise bad(
            f"index {index} is outside the transcript (entries 0 to {entries - 1}); cite the entry where "
            "the run first went wrong",
            source,
            f"{where}.index",
        )
    agent = text_of(raw, "agent", source, where, what="who produced that entry")
    note = text_of(raw, "note", source, where, what="what happened, in your own words")
    return FirstWrong(index=index, agent=agent.strip(), note=note.strip())


def _determination(raw: Any, entries: int, source: str) -> Determination:
    where = "determination"
    if not isinstance(raw, dict):
        raise bad(f"'determination' must be an object, got {raw!r}", source, where)
    check_keys(raw, _KEYS, source, where)
    check_order(raw, "critique", "result", source, where)
    critique = text_of(raw, "critique", source, where, what="the evidence and reasoning")
    result = raw["result"]
    if result not in ("pass", "fail", "uncertain"):
        raise bad(
            f"result {result!r} is not allowed; use 'pass', 'fail' or 'uncertain'", source, f"{where}.result"
        )
    confidence = confidence_of(raw, source, where)
    blocked_by = raw.get("blocked_by")
    if blocked_by is not None and not isinstance(blocked_by, str):
        raise bad(f"blocked_by {blocked_by!r} must be text or null", source, f"{where}.blocked_by")
    if result == "uncertain" and not (blocked_by and blocked_by.strip()):
        raise bad(
            "result 'uncertain' needs 'blocked_by' saying what evidence the trajectory lacks; decide pass "
            "or fail if the evidence is there",
            source,
            f"{where}.blocked_by",
        )
    if result != "uncertain" and blocked_by is not None:
        raise bad("blocked_by is only for an uncertain result; set it to null", source, f"{where}.blocked_by")
    wrong = raw.get("first_wrong")
    if result == "fail":
        first_wrong: FirstWrong | None = _first_wrong(wrong, entries, source)
    elif wrong is not None:
        raise bad(
            f"first_wrong must be null when the result is {result!r} (it names the first mistake of a failed run)",
            source,
            f"{where}.first_wrong",
        )
    else:
        first_wrong = None
    return Determination(
        critique=critique,
        result=result,
        confidence=confidence,
        blocked_by=blocked_by,
        first_wrong=first_wrong,
    )


def parse_determination_text(
    text: str, *, key: str, entries: int, source: str, judge: JudgeInfo | None = None
) -> DeterminationFile:
    """A provider's answer (bare, fenced or in prose; optionally wrapped in ``determination``)."""
    obj = find_answer_object(text, source, marker="critique", shape='{"critique": ..., "result": ...}')
    if "determination" in obj and isinstance(obj["determination"], dict):
        check_keys(obj, ["determination", "key", "version"], source, "")
        if "key" in obj and obj["key"] != key:
            raise bad(f"key {obj['key']!r} does not match the packet's key {key!r}", source, "key")
        obj = obj["determination"]
    return DeterminationFile(key=key, judge=judge, determination=_determination(obj, entries, source))


def parse_determination_file(path: str | Path, *, key: str, entries: int) -> DeterminationFile:
    """Read and check a determiner's ``<key>.verdict.json`` as an agent runtime wrote it."""
    source = str(path)
    obj = read_verdict_document(path, remedy="dispatch the packet to a reader")
    status = check_envelope(
        obj, key=key, version=DETERMINATION_FORMAT_VERSION, body="determination", source=source
    )
    judge = judge_of(obj.get("judge"), source) if obj.get("judge") is not None or status == "scored" else None
    if status == "unscored":
        return DeterminationFile(key=key, status="unscored", error=obj["error"], judge=judge)
    return DeterminationFile(
        key=key, judge=judge, determination=_determination(obj.get("determination"), entries, source)
    )


def read_determination_packet(path: str, key: str) -> DeterminationPacket:
    """Read a determiner packet and check its content hashes to ``key``."""
    return read_checked_packet(
        path,
        key,
        DeterminationPacket,
        lambda p: determination_key(p.trajectory, prompt_version=p.pin.prompt_version),
        remedy="re-run `helix discover prep`",
    )


class Determining:
    """The determiner as a :class:`~helix.judging.PacketKind` (and a directory kind for the transport)."""

    name = "determination"

    def key(self, packet: DeterminationPacket) -> str:
        return packet.key

    def render(self, packet: DeterminationPacket) -> list[ChatMessage]:
        block = orjson.dumps(packet.trajectory, option=orjson.OPT_INDENT_2).decode("utf-8")
        fence = fence_blocks([block])
        heading = TRAJECTORY_HEADING.format(last=max(packet.entries - 1, 0))
        return [
            ChatMessage(role="system", content=f"{DETERMINE_INSTRUCTIONS}\n{DETERMINE_ANSWER}\n"),
            ChatMessage(role="user", content=f"{fence.note}\n\n{heading}\n{fence.wrap(block)}\n"),
        ]

    def parse(
        self, packet: DeterminationPacket, answer: str, *, source: str, served_model: str
    ) -> DeterminationFile:
        judge = JudgeInfo(
            runtime="model", model=served_model, temperature=0.0, prompt_version=packet.pin.prompt_version
        )
        return parse_determination_text(
            answer, key=packet.key, entries=packet.entries, source=source, judge=judge
        )

    def feedback(self, packet: DeterminationPacket, error: str) -> ChatMessage:
        return ChatMessage(
            role="user",
            content=(
                "Your answer could not be used. The parser reported:\n"
                f"{error}\n\nAnswer again with one JSON object and nothing else.\n{DETERMINE_ANSWER}"
            ),
        )

    def read_packet(self, path: str, key: str) -> DeterminationPacket:
        return read_determination_packet(path, key)

    def verdict_bytes(
        self, judgment: Judgment[DeterminationFile], *, model: str, temperature: float
    ) -> bytes:
        if judgment.result is not None:
            verdict = judgment.result
        else:
            assert judgment.unscored is not None
            verdict = DeterminationFile(
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
