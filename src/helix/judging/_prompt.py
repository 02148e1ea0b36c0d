"""The one judge prompt renderer: a unit's judged content in, the chat messages for a provider out.

Layout (:data:`LAYOUT_REVISION` 2). The system message is the instructions and the answer format,
the same for every unit. The user message shows the criteria (with their few-shot examples), then
the trajectory to judge, then the criterion ids to answer. Everything before the trajectory depends
only on the criteria, so it is byte-identical across a run's units (on the matrix axis all of them;
on the criterion axis all units of one criterion); the message marks it as a cacheable prefix
(``cache_prefix``), which the Anthropic client sends with ``cache_control`` and OpenAI caches on
its own. Layout 1 put the trajectory's fence note first, so no two units shared a prefix.

Untrusted content: every trajectory shown (each few-shot example's and the one judged) sits inside a
fence whose tag is derived from the content it encloses and checked to be absent from it, so no
content can close its fence. The examples share one tag, derived from the criteria alone (so the
prefix stays identical); the judged trajectory gets its own tag, chosen after seeing it.

What a judge is shown is the same in every layout (the same texts from ``_texts.py``, the same
criteria and trajectory), so the layout is not part of :data:`PROMPT_VERSION` or of any key: the
model transport records it in each receipt instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..models import ChatMessage
from ._packets import Packet
from ._texts import (
    ANSWER_FORMAT,
    APPLIES_TEMPLATE,
    CRITERION_TEMPLATE,
    EXAMPLE_TEMPLATE,
    FENCE_BEGIN,
    FENCE_END,
    FENCE_NOTE,
    IDS_LINE,
    INSTRUCTIONS,
    SECTION_ANSWER,
    SECTION_CRITERIA,
    SECTION_TRAJECTORY,
)

__all__ = ["LAYOUT_REVISION", "PromptPrefix", "choose_fence_tag", "render_messages", "render_prompt"]

LAYOUT_REVISION = 2
"""How the texts are arranged into chat messages (see the module docstring); recorded in receipts."""

_SYSTEM = f"{INSTRUCTIONS}\n{ANSWER_FORMAT}\n"

JSONMap = Mapping[str, Any]


def _block(trajectory: JSONMap) -> str:
    return orjson.dumps(trajectory, option=orjson.OPT_INDENT_2).decode("utf-8")


def choose_fence_tag(blocks: Sequence[str]) -> str:
    """A tag for the fence markers that occurs in none of ``blocks``.

    The tag is derived from the content itself (so the same content always gets the same prompt),
    and re-derived with a counter in the practically impossible case that the content contains it.
    """
    joined = "\n".join(blocks)
    counter = 0
    while True:
        tag = hashlib.sha256(f"{counter}\n{joined}".encode()).hexdigest()[:16]
        if tag not in joined:
            return tag
        counter += 1


def _criterion_text(criterion: JSONMap, fenced: Sequence[str], begin: str, end: str) -> str:
    parts = [
        CRITERION_TEMPLATE.format(
            id=criterion["id"],
            title=criterion["title"],
            question=criterion["question"],
            pass_definition=criterion["pass_definition"],
            fail_definition=criterion["fail_definition"],
        )
    ]
    if criterion.get("applies_when"):
        parts.append(APPLIES_TEMPLATE.format(applies_when=criterion["applies_when"]))
    examples = criterion.get("examples") or ()
    for n, (example, body) in enumerate(zip(examples, fenced, strict=True), start=1):
        parts.append(
            EXAMPLE_TEMPLATE.format(
                n=n, id=criterion["id"], result=example["result"], critique=example["critique"]
            )
        )
        parts.append(f"{begin}\n{body}\n{end}")
    return "\n".join(parts)


@dataclass(frozen=True, kw_only=True, eq=False)
class PromptPrefix:
    """The part of a prompt that depends only on the criteria: render it once, reuse it per unit."""

    system: str
    user: str
    """The user message up to the trajectory: identical for every unit over these criteria."""
    examples_tag: str | None
    """The fence tag of the few-shot examples (None without examples)."""
    answer: str
    """The closing section naming the ids to answer."""

    @classmethod
    def of(cls, criteria: Sequence[JSONMap]) -> PromptPrefix:
        """The prefix for criteria in their JSON form (as a packet file holds them)."""
        example_blocks = [[_block(e["trajectory"]) for e in c.get("examples") or ()] for c in criteria]
        flat = [b for blocks in example_blocks for b in blocks]
        tag = choose_fence_tag(flat) if flat else None
        parts: list[str] = []
        if tag is not None:
            begin, end = FENCE_BEGIN.format(tag=tag), FENCE_END.format(tag=tag)
            parts += [FENCE_NOTE.format(begin=begin, end=end), ""]
        else:
            begin = end = ""
        parts.append(SECTION_CRITERIA)
        parts += [
            _criterion_text(c, blocks, begin, end) + "\n"
            for c, blocks in zip(criteria, example_blocks, strict=True)
        ]
        answer = f"{SECTION_ANSWER}\n{IDS_LINE.format(ids=', '.join(c['id'] for c in criteria))}\n"
        return cls(system=_SYSTEM, user="\n".join(parts) + "\n", examples_tag=tag, answer=answer)


def render_messages(prefix: PromptPrefix, trajectory: JSONMap) -> list[ChatMessage]:
    """The chat messages (system, user) judging ``trajectory`` (JSON form) against ``prefix``'s criteria."""
    main = _block(trajectory)
    avoid = [main] if prefix.examples_tag is None else [main, prefix.examples_tag]
    tag = choose_fence_tag(avoid)
    begin, end = FENCE_BEGIN.format(tag=tag), FENCE_END.format(tag=tag)
    tail = (
        f"{FENCE_NOTE.format(begin=begin, end=end)}\n\n{SECTION_TRAJECTORY}\n{begin}\n{main}\n{end}\n\n"
        f"{prefix.answer}"
    )
    return [
        ChatMessage(role="system", content=prefix.system),
        ChatMessage(role="user", content=prefix.user + tail, cache_prefix=len(prefix.user)),
    ]


def render_prompt(packet: Packet) -> list[ChatMessage]:
    """The chat messages (system, user) that ask an LLM to judge one packet.

    Its trace ids and verdict path are not rendered, so identical units (same key) always give
    byte-identical prompts, and units over the same criteria share the prefix before the trajectory.
    """
    dumped = packet.model_dump(mode="json", include={"criteria", "trajectory"})
    return render_messages(PromptPrefix.of(dumped["criteria"]), dumped["trajectory"])
