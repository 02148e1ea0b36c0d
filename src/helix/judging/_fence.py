"""Fencing untrusted content in a prompt: one helper for every packet kind.

A fenced block sits between a begin and an end marker whose tag is derived from the content and
checked to be absent from it (:func:`~helix.judging.choose_fence_tag`), so nothing inside can close
its fence. The marker and note texts are the judging package's own (``_texts.py``), so every kind
fences the same way; the trajectory renderer places its fences itself (its prompt layout caches the
prefix before the trajectory) and could be expressed with :func:`fence_blocks` too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._prompt import choose_fence_tag
from ._texts import FENCE_BEGIN, FENCE_END, FENCE_NOTE

__all__ = ["Fence", "fence_blocks"]


@dataclass(frozen=True, kw_only=True)
class Fence:
    """The markers of one fence and the note that tells the reader what is inside."""

    begin: str
    end: str
    note: str

    def wrap(self, block: str) -> str:
        """``block`` between the markers, each on its own line."""
        return f"{self.begin}\n{block}\n{self.end}"


def fence_blocks(blocks: Sequence[str], *, avoid: Sequence[str] = ()) -> Fence:
    """A fence whose tag occurs in none of ``blocks`` (nor in ``avoid``): the same blocks, the same tag."""
    tag = choose_fence_tag([*blocks, *avoid])
    begin, end = FENCE_BEGIN.format(tag=tag), FENCE_END.format(tag=tag)
    return Fence(begin=begin, end=end, note=FENCE_NOTE.format(begin=begin, end=end))
