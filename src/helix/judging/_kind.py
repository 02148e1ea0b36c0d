"""The first packet kind: one trajectory judged against one or more binary criteria.

:class:`TrajectoryJudging` implements :class:`~helix.judging.PacketKind` over a
:class:`PacketView`: the part of a packet that is judged (its key, the criteria and the trajectory,
in the JSON form the packet file holds). It renders with the one prompt renderer, parses with the
strict verdict parser, and answers a :class:`~helix.judging.VerdictFile`.

:func:`read_packet_view` is the hot path's packet read: it checks the file's key against its judged
content (as :func:`~helix.judging.read_packet` does) without building the pydantic model of the
whole file, whose instructions, schema and example are not what is judged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .._exceptions import InputFileError
from .._util import content_hash
from ..models import ChatMessage
from ._packets import PACKET_FORMAT_VERSION, Packet
from ._parse import parse_verdict_text
from ._prompt import PromptPrefix, render_messages
from ._units import JudgingUnit, judged_content
from ._verdict import JudgeInfo, VerdictFile

__all__ = ["PacketView", "TrajectoryJudging", "parse_feedback_message", "read_packet_view"]


@dataclass(frozen=True, kw_only=True, eq=False)
class PacketView:
    """What is judged in a trajectory packet, in JSON form, already checked against its key."""

    key: str
    prompt_version: str
    temperature: float
    criteria: Sequence[Mapping[str, Any]]
    trajectory: Mapping[str, Any]
    criterion_ids: tuple[str, ...]

    @classmethod
    def of_packet(cls, packet: Packet) -> PacketView:
        """The view of an in-memory packet."""
        dumped = packet.model_dump(mode="json", include={"criteria", "trajectory"})
        return cls(
            key=packet.key,
            prompt_version=packet.pin.prompt_version,
            temperature=packet.pin.temperature,
            criteria=dumped["criteria"],
            trajectory=dumped["trajectory"],
            criterion_ids=packet.criterion_ids,
        )

    @classmethod
    def of_unit(cls, unit: JudgingUnit, *, prompt_version: str) -> PacketView:
        """The view of an LLM unit (what its packet would hold), without writing a packet."""
        if unit.kind != "llm" or unit.trajectory is None:
            raise ValueError(f"unit {unit.key!r} is a {unit.kind} unit; only llm units are judged by a model")
        content = judged_content(
            prompt_version=prompt_version, axis=unit.axis, criteria=unit.criteria, trajectory=unit.trajectory
        )
        return cls(
            key=unit.key,
            prompt_version=prompt_version,
            temperature=0.0,
            criteria=content["criteria"],
            trajectory=content["trajectory"],
            criterion_ids=unit.criterion_ids,
        )


def _bad(path: str, message: str, field: str | None = None) -> InputFileError:
    return InputFileError(
        f"{message}; re-create it with `helix judge prep` (prep_run)", path=path, field=field
    )


def read_packet_view(path: str | Path, key: str) -> PacketView:
    """Read the packet file of unit ``key`` and check it: its key, and that its content hashes to it.

    Raises :class:`~helix.InputFileError` (path and field) for a missing, unreadable or edited
    packet. Fields that are not judged (instructions, verdict path and format, trace ids) are not
    read: the key covers everything a judge is shown.
    """
    p = os.fspath(path)  # a str, not a Path: this runs once per judged unit
    try:
        with open(p, "rb") as fh:
            data = orjson.loads(fh.read())
    except FileNotFoundError:
        raise _bad(p, "packet file is missing") from None
    except orjson.JSONDecodeError as exc:
        raise _bad(p, f"not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _bad(p, "not a packet (not a JSON object)")
    if data.get("version") != PACKET_FORMAT_VERSION:
        raise _bad(p, f"packet version {data.get('version')!r} is not {PACKET_FORMAT_VERSION}", "version")
    try:
        pin = data["pin"]
        prompt_version = pin["prompt_version"]
        criteria = data["criteria"]
        trajectory = data["trajectory"]
        content = {
            "prompt_version": prompt_version,
            "axis": data["axis"],
            "criteria": criteria,
            "trajectory": trajectory,
        }
        criterion_ids = tuple(c["id"] for c in criteria)
        temperature = float(pin.get("temperature", 0.0))
    except (KeyError, TypeError, ValueError) as exc:
        raise _bad(p, f"not a valid packet (missing or malformed {exc})") from exc
    if data.get("key") != key:
        raise _bad(p, f"key {data.get('key')!r} is not the unit's key {key!r}", "key")
    actual = content_hash(content)
    if actual != key:
        raise _bad(
            p,
            f"key {key!r} does not match the packet's content (which hashes to {actual!r}): the file was edited",
            "key",
        )
    return PacketView(
        key=key,
        prompt_version=prompt_version,
        temperature=temperature,
        criteria=criteria,
        trajectory=trajectory,
        criterion_ids=criterion_ids,
    )


def parse_feedback_message(error: str, criterion_ids: Sequence[str]) -> ChatMessage:
    """The user message that asks the model again after an answer that did not parse."""
    skeleton = orjson.dumps(
        {
            "verdicts": [
                {
                    "criterion_id": cid,
                    "critique": "...",
                    "result": "pass | fail | uncertain",
                    "confidence": 0.9,
                    "blocked_by": None,
                }
                for cid in criterion_ids
            ]
        }
    ).decode()
    return ChatMessage(
        role="user",
        content=(
            "Your answer could not be used. The parser reported:\n"
            f"{error}\n\n"
            "Answer again with one JSON object and nothing else, of exactly this shape, one entry per "
            "criterion id, keys in this order (critique before result; blocked_by is text only when "
            f"the result is uncertain, else null):\n{skeleton}"
        ),
    )


class TrajectoryJudging:
    """Judge a trajectory against its criteria: the packet kind of the file protocol.

    Keeps the rendered prefix of each set of criteria it has seen (a run has one per axis group), so
    a unit's prompt costs one trajectory dump and a concatenation.
    """

    name = "trajectory"
    _MAX_PREFIXES = 256

    def __init__(self) -> None:
        self._prefixes: dict[bytes, PromptPrefix] = {}
        self._judges: dict[tuple[str, float, str], JudgeInfo] = {}

    def key(self, packet: PacketView) -> str:
        return packet.key

    def render(self, packet: PacketView) -> list[ChatMessage]:
        memo = orjson.dumps(packet.criteria)
        prefix = self._prefixes.get(memo)
        if prefix is None:
            if len(self._prefixes) >= self._MAX_PREFIXES:
                self._prefixes.clear()
            prefix = self._prefixes[memo] = PromptPrefix.of(packet.criteria)
        return render_messages(prefix, packet.trajectory)

    def parse(self, packet: PacketView, answer: str, *, source: str, served_model: str) -> VerdictFile:
        who = (served_model, packet.temperature, packet.prompt_version)
        judge = self._judges.get(who)
        if judge is None:  # one immutable JudgeInfo per model and prompt, shared by its verdicts
            judge = self._judges[who] = JudgeInfo(
                runtime="model", model=served_model, temperature=who[1], prompt_version=who[2]
            )
        return parse_verdict_text(
            answer, key=packet.key, criterion_ids=packet.criterion_ids, source=source, judge=judge
        )

    def feedback(self, packet: PacketView, error: str) -> ChatMessage:
        return parse_feedback_message(error, packet.criterion_ids)
