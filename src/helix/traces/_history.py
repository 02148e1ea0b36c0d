"""Decoding a chat history once per trace, however many LLM spans resend it.

A chat agent sends the whole conversation on every LLM call, and span formats record each call's input in
full: a run of *n* calls repeats its history *n* times, so converting every span's messages costs O(n²) in
Python. :class:`HistoryMemo` remembers, per open trace, the last few message lists it converted. A new
list that starts with one of them reuses those converted messages (the same dict objects: events of one
trace share them) and converts only the new tail:

- JSON text (OTLP ``gen_ai.input.messages``, Langfuse rows): when the new text starts with an earlier
  text minus its closing ``]`` and goes on with ``,``, only the tail is parsed. Equal arrays element
  for element are what such a prefix means in JSON, so the result equals a full parse.
- parsed lists (Agents SDK, LangSmith, OpenInference): the longest prefix of items equal (``==``) to an
  earlier list's is reused.

Anything else (a shorter history, an edited one, another agent's) is converted in full, so the memo
changes speed, never results. Readers drop a trace's entries when the trace is released.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ._depth import same_items
from ._span_content import Convert, message_items

__all__ = ["HistoryMemo"]

_KEEP = 4  # earlier lists remembered per trace (several agents or branches may interleave)


@dataclass(slots=True)
class _Entry:
    convert: Convert  # lists converted differently never share
    text_head: str | None  # for JSON text: the text without its closing "]" and the space before it
    items: list[Any] | None  # for parsed lists: the source items
    ends: list[int] | None  # for parsed lists: how many messages items[: i + 1] converted to
    flat: list[dict[str, Any]]  # the converted messages


class HistoryMemo:
    """Recently converted message lists of each open trace, reused when a later span extends them."""

    __slots__ = ("_by_trace",)

    def __init__(self) -> None:
        self._by_trace: dict[str, list[_Entry]] = {}

    def messages(self, trace_id: str, value: Any, convert: Convert) -> list[dict[str, Any]] | None:
        """Like :func:`messages_of` with ``convert`` (same result), reusing this trace's earlier lists."""
        if isinstance(value, str) and value[:1] == "[":
            return self._from_text(trace_id, value, convert) or None
        items = message_items(value)
        if not isinstance(items, list):
            return None
        return self._from_list(trace_id, items, convert) or None

    def forget(self, trace_id: str) -> None:
        """Drop what was remembered for a trace (call when it is released)."""
        self._by_trace.pop(trace_id, None)

    def _remember(self, trace_id: str, entry: _Entry) -> None:
        entries = self._by_trace.setdefault(trace_id, [])
        entries.insert(0, entry)
        del entries[_KEEP:]

    def _from_list(self, trace_id: str, items: list[Any], convert: Convert) -> list[dict[str, Any]]:
        """The canonical messages of ``items``, reusing the longest earlier prefix converted alike."""
        best: _Entry | None = None
        shared = 0
        for entry in self._by_trace.get(trace_id, ()):
            earlier = entry.items
            if entry.convert is not convert or earlier is None:
                continue
            n = min(len(items), len(earlier))
            if not same_items(items[:n], earlier[:n]):  # usually equal: one comparison in C
                n = 0
                for mine, theirs in zip(items, earlier, strict=False):
                    if mine is not theirs and not same_items(mine, theirs):
                        break
                    n += 1
            if n > shared:
                best, shared = entry, n
                if n == len(items):
                    break
        if best is not None and best.ends is not None:
            ends = best.ends[:shared]
            flat = best.flat[: ends[-1]] if shared else []
        else:
            ends, flat = [], []
        for item in items[shared:]:
            flat.extend(convert(item))
            ends.append(len(flat))
        if shared < len(items):
            self._remember(trace_id, _Entry(convert, None, items, ends, flat))
            return list(flat)
        return flat

    def _from_text(self, trace_id: str, text: str, convert: Convert) -> list[dict[str, Any]] | None:
        """The canonical messages of a JSON array ``text``; ``None`` when it is not a JSON array.

        Only the part after an earlier text of this trace that it extends is parsed and converted.
        """
        for entry in self._by_trace.get(trace_id, ()):
            head = entry.text_head
            if entry.convert is not convert or head is None or not text.startswith(head):
                continue
            rest = text[len(head) :].lstrip()
            if rest == "]":
                return list(entry.flat)
            if not rest.startswith(","):
                continue
            if rest[1:].lstrip().startswith("]"):
                return None  # "[..., ]": a trailing comma is not JSON, so the whole text is not either
            try:
                tail = orjson.loads("[" + rest[1:])
            except orjson.JSONDecodeError:
                return None  # the text is not valid JSON past the shared prefix, so not at all
            flat = list(entry.flat)
            for item in tail:
                flat.extend(convert(item))
            self._remember(trace_id, _Entry(convert, _head(text), None, None, flat))
            return list(flat)
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(value, list):
            return None
        flat = []
        for item in value:
            flat.extend(convert(item))
        self._remember(trace_id, _Entry(convert, _head(text), None, None, flat))
        return list(flat)


def _head(text: str) -> str | None:
    """``text`` without its closing bracket (and the space before it), if it ends with one."""
    stripped = text.rstrip()
    return stripped[:-1].rstrip() if stripped.endswith("]") else None
