"""Packets: one self-explanatory JSON file per LLM judging unit, for any agent runtime to judge.

``<run>/packets/<key>.packet.json`` holds the instructions (the same text the prompt renderer sends
to a provider), the criteria, the trajectory, the absolute path of the verdict file to write, the
verdict shape (an example and a JSON schema) and the pin. A reader who has never heard of Helix can
do the job from the file alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError, field_serializer

from .._exceptions import InputFileError, UsageError
from .._util import content_hash, write_atomic
from ._texts import INSTRUCTIONS, PACKET_DELIVERY, PROMPT_VERSION
from ._units import CriterionView, JudgingUnit, Trajectory, UnitAxis, judged_content
from ._verdict import VERDICT_FORMAT_VERSION

__all__ = [
    "PACKET_FORMAT_VERSION",
    "Packet",
    "Pin",
    "VerdictFormat",
    "build_packet",
    "packet_bytes",
    "read_packet",
    "verdict_json_schema",
    "write_packet",
]

# Bump when a packet field changes meaning or is removed.
PACKET_FORMAT_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Pin(_Model):
    """The envelope every judgment runs under: the model (or null: the runtime's own), temperature 0."""

    model: str | None
    """The pinned model snapshot the judge must run on; null lets the agent runtime use its own."""
    provider: str | None = None
    temperature: float = 0.0
    prompt_version: str = PROMPT_VERSION


class VerdictFormat(_Model):
    """What the verdict file must look like."""

    example: dict[str, Any]
    json_schema: dict[str, Any]


class Packet(_Model):
    """The content of ``<key>.packet.json``: one LLM judging unit, ready for a judge."""

    version: int = PACKET_FORMAT_VERSION
    key: str
    """Content key of what is judged; the verdict file must carry it."""
    instructions: str = INSTRUCTIONS
    delivery: str = PACKET_DELIVERY
    verdict_file: str
    """Absolute path of the verdict file to write."""
    pin: Pin
    axis: UnitAxis
    criteria: tuple[CriterionView, ...]
    trajectory: Trajectory
    verdict_format: VerdictFormat
    trace_ids: tuple[str, ...] = ()
    """The traces this verdict will be recorded for (informational: not judged, not in the key)."""

    @field_serializer("criteria")
    def _compact_criteria(self, criteria: tuple[CriterionView, ...]) -> list[dict[str, Any]]:
        return [c.model_dump(mode="json", exclude_defaults=True) for c in criteria]

    @field_serializer("trajectory")
    def _compact_trajectory(self, trajectory: Trajectory) -> dict[str, Any]:
        return trajectory.model_dump(mode="json", exclude_defaults=True)

    @property
    def criterion_ids(self) -> tuple[str, ...]:
        """The criterion ids the verdict file must answer, in order."""
        return tuple(c.id for c in self.criteria)

    def content_key(self) -> str:
        """The key re-derived from the packet's judged content (equals ``key`` for an intact packet)."""
        return content_hash(
            judged_content(
                prompt_version=self.pin.prompt_version,
                axis=self.axis,
                criteria=self.criteria,
                trajectory=self.trajectory,
            )
        )


def verdict_json_schema(key: str, criterion_ids: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of the verdict file answering the unit ``key`` over ``criterion_ids``."""
    entry = {
        "type": "object",
        "required": ["criterion_id", "critique", "result", "confidence"],
        "additionalProperties": False,
        "properties": {
            "criterion_id": {"enum": list(criterion_ids)},
            "critique": {"type": "string", "minLength": 1},
            "result": {"enum": ["pass", "fail", "uncertain"]},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "blocked_by": {"type": ["string", "null"]},
        },
        "if": {"properties": {"result": {"const": "uncertain"}}},
        "then": {
            "required": ["blocked_by"],
            "properties": {"blocked_by": {"type": "string", "minLength": 1}},
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "verdict file",
        "description": "In every verdicts entry, write critique before result.",
        "type": "object",
        "required": ["version", "key", "judge", "verdicts"],
        "additionalProperties": False,
        "properties": {
            "version": {"const": VERDICT_FORMAT_VERSION},
            "key": {"const": key},
            "status": {"const": "scored"},
            "judge": {
                "type": "object",
                "required": ["runtime", "model"],
                "additionalProperties": False,
                "properties": {
                    "runtime": {"type": "string", "minLength": 1},
                    "model": {"type": "string", "minLength": 1},
                    "temperature": {"type": ["number", "null"]},
                    "prompt_version": {"type": ["string", "null"]},
                },
            },
            "verdicts": {
                "type": "array",
                "minItems": len(criterion_ids),
                "maxItems": len(criterion_ids),
                "items": entry,
            },
        },
    }


def _verdict_example(key: str, criterion_ids: Sequence[str], pin: Pin) -> dict[str, Any]:
    return {
        "version": VERDICT_FORMAT_VERSION,
        "key": key,
        "judge": {
            "runtime": "<name of your agent runtime>",
            "model": pin.model or "<the model you ran on>",
            "temperature": pin.temperature,
            "prompt_version": pin.prompt_version,
        },
        "verdicts": [
            {
                "criterion_id": cid,
                "critique": "<the evidence for and against, citing transcript indexes; written first>",
                "result": "pass",
                "confidence": 0.9,
                "blocked_by": None,
            }
            for cid in criterion_ids
        ],
    }


def build_packet(unit: JudgingUnit, *, verdict_file: str | Path, pin: Pin) -> Packet:
    """The packet of an LLM unit. ``verdict_file`` is made absolute."""
    if unit.kind != "llm" or unit.trajectory is None:
        raise UsageError(f"unit {unit.key!r} is a {unit.kind} unit; only llm units have packets")
    ids = unit.criterion_ids
    return Packet(
        key=unit.key,
        verdict_file=str(Path(verdict_file).absolute()),
        pin=pin,
        axis=unit.axis,
        criteria=unit.criteria,
        trajectory=unit.trajectory,
        verdict_format=VerdictFormat(
            example=_verdict_example(unit.key, ids, pin), json_schema=verdict_json_schema(unit.key, ids)
        ),
        trace_ids=unit.trace_ids,
    )


def packet_bytes(packet: Packet) -> bytes:
    """The exact bytes of a packet file (indented JSON, fields in contract order, trailing newline)."""
    return orjson.dumps(packet.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n"


def write_packet(path: str | Path, packet: Packet) -> bool:
    """Write ``packet`` to ``path`` unless the file already holds these exact bytes. True if written."""
    target = Path(path)
    data = packet_bytes(packet)
    if target.is_file() and target.read_bytes() == data:
        return False
    write_atomic(target, data)
    return True


def read_packet(path: str | Path) -> Packet:
    """Read and check a packet file: valid shape, and a key that matches its judged content."""
    p = Path(path)
    try:
        packet = Packet.model_validate_json(p.read_bytes())
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or None
        raise InputFileError(
            f"not a valid packet ({err['msg']}); re-create it with `prep_run`", path=p, field=field
        ) from exc
    if packet.content_key() != packet.key:
        raise InputFileError(
            f"key {packet.key!r} does not match the packet's content (which hashes to "
            f"{packet.content_key()!r}): the file was edited; re-create it with `prep_run`",
            path=p,
            field="key",
        )
    return packet
