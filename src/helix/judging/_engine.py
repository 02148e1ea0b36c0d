"""The one judging engine: a packet in, a result or an explicit unscored record out, with its calls.

Every caller that judges a packet with a model goes through here (``helix judge run``, ``helix
evaluate``, the campaign's LLM scorer, the batch transport, and later discovery, datasets and
optimization): one path, one failure rule.

1. Render the packet's messages (the packet kind decides how).
2. Call the pinned model. The client retries transient failures under its policy; each HTTP
   attempt takes a slot of the caller's limiter (adaptive concurrency) and is announced to
   ``on_attempt`` before it is sent.
3. Parse the answer strictly (the kind's parser). An answer that does not parse is asked again
   once, with the parse error and the required shape fed back.

The failure rule: a provider that still fails after the client's retries gives an **unscored**
record naming the failure kind (``connection_refused``, ``timeout``, ``rate_limited``...); an answer
that does not parse twice gives an unscored record of kind ``unparseable``. Nothing is ever turned
into a pass or a fail by default.

A packet kind is an extension point (:class:`PacketKind`): how to render its messages, how to parse
an answer strictly, what to feed back when an answer does not parse, and what a result is. The
trajectory/criterion judging of the file protocol is the first kind (``_kind.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

from .._exceptions import InputFileError, ModelError, RunError
from ..models import ChatMessage, Completion, Limiter, Model

__all__ = [
    "CallTally",
    "Judgment",
    "JudgmentUnscoredError",
    "PacketKind",
    "Reask",
    "Unscored",
    "judge_packet",
    "read_answer",
    "unscored_from_error",
]

PacketT = TypeVar("PacketT", contravariant=True)
ResultT = TypeVar("ResultT")
ResultT_co = TypeVar("ResultT_co", covariant=True)

UNPARSEABLE = "unparseable"


class PacketKind(Protocol[PacketT, ResultT_co]):
    """One kind of packet a model can judge: what to send, and how to read the answer.

    ``parse`` is strict: it raises :class:`~helix.InputFileError` (for verdicts,
    :class:`~helix.VerdictFileError`) naming what is wrong and how to fix it, and the engine feeds
    that message back once. ``served_model`` is the model that answered (for the result's
    provenance).
    """

    def key(self, packet: PacketT) -> str:
        """The content key of what is judged."""
        ...

    def render(self, packet: PacketT) -> list[ChatMessage]:
        """The chat messages asking for a judgment of ``packet``."""
        ...

    def parse(self, packet: PacketT, answer: str, *, source: str, served_model: str) -> ResultT_co:
        """The result in ``answer``, or raise InputFileError saying why there is none."""
        ...

    def feedback(self, packet: PacketT, error: str) -> ChatMessage:
        """The message that asks again after an answer that did not parse with ``error``."""
        ...


@dataclass(frozen=True, kw_only=True)
class Unscored:
    """Why a packet got no result: a failure kind a summary can group by, and the full message."""

    failure: str
    """A provider :data:`~helix.models.FailureKind`, ``unparseable``, or (batch) ``expired``,
    ``canceled``, ``batch_failed``, ``errored``."""
    message: str

    @property
    def error(self) -> str:
        """The text recorded in an unscored verdict file: ``<kind>: <message>``."""
        return f"{self.failure}: {self.message}"


class JudgmentUnscoredError(RunError):
    """A judgment ended unscored where the caller needs a result (e.g. a campaign cell's scorer)."""

    def __init__(self, unscored: Unscored, *, key: str) -> None:
        self.failure = unscored.failure
        self.key = key
        super().__init__(f"unit {key} ended unscored ({unscored.error})")


@dataclass
class CallTally:
    """What the model calls for one packet added up to."""

    calls: int = 0
    completions: int = 0
    """Calls that got an answer (a failed call has no usage, so its cost is unknown)."""
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = 0.0
    """None as soon as one answer's price is unknown."""
    latency_s: float = 0.0
    served_model: str | None = None
    request_ids: list[str] = field(default_factory=list)
    charges: list[tuple[float | None, str | None]] = field(default_factory=list)
    """(cost, request id) of each answered call, for callers that bill per call."""

    def add(self, c: Completion) -> None:
        """Count one answered call."""
        self.calls += 1
        self.completions += 1
        self.attempts += c.attempts
        u = c.usage
        self.input_tokens += u.input_tokens
        self.output_tokens += u.output_tokens
        self.cached_input_tokens += u.cached_input_tokens
        self.cache_write_tokens += u.cache_write_tokens
        self.cost_usd = None if (self.cost_usd is None or c.cost_usd is None) else self.cost_usd + c.cost_usd
        self.latency_s += c.latency_s
        self.served_model = c.served_model or self.served_model
        if c.request_id:
            self.request_ids.append(c.request_id)
        self.charges.append((c.cost_usd, c.request_id))

    def add_failure(self, exc: ModelError) -> None:
        """Count one call that failed after the client's retries."""
        self.calls += 1
        self.attempts += exc.attempts or 1

    @property
    def known_cost(self) -> float | None:
        """The summed cost when every answered call had a price (None when none answered)."""
        return self.cost_usd if self.completions else None


@dataclass(frozen=True, kw_only=True)
class Judgment(Generic[ResultT]):
    """How judging one packet ended: a result or an unscored record, and the calls it took."""

    key: str
    result: ResultT | None
    unscored: Unscored | None
    calls: CallTally
    reasked: bool = False
    """The first answer did not parse and the model was asked again."""

    @property
    def status(self) -> Literal["scored", "unscored"]:
        """``scored`` when there is a result."""
        return "scored" if self.unscored is None else "unscored"

    @property
    def provider_failed(self) -> bool:
        """The unit ended unscored because the provider failed (not because of its answers)."""
        return self.unscored is not None and self.unscored.failure != UNPARSEABLE

    def result_or_raise(self) -> ResultT:
        """The result, or :class:`JudgmentUnscoredError` naming why there is none."""
        if self.unscored is not None or self.result is None:
            raise JudgmentUnscoredError(
                self.unscored or Unscored(failure="unknown", message="no result"), key=self.key
            )
        return self.result


@dataclass(frozen=True, kw_only=True)
class Reask:
    """The first answer did not parse: ask again with these messages."""

    messages: list[ChatMessage]
    error: str


def read_answer(
    kind: PacketKind[PacketT, ResultT],
    packet: PacketT,
    messages: Sequence[ChatMessage],
    answer: str,
    *,
    round: int,
    source: str,
    served_model: str,
) -> ResultT | Reask | Unscored:
    """The failure rule for one answer: a result, one re-ask (first round), or unparseable."""
    try:
        where = source if round == 1 else f"{source} (second try)"
        return kind.parse(packet, answer, source=where, served_model=served_model)
    except InputFileError as exc:
        if round == 1:
            return Reask(
                messages=[
                    *messages,
                    ChatMessage(role="assistant", content=answer),
                    kind.feedback(packet, str(exc)),
                ],
                error=str(exc),
            )
        return Unscored(failure=UNPARSEABLE, message=f"the answer did not parse, twice; last error: {exc}")


def unscored_from_error(exc: ModelError) -> Unscored:
    """The unscored record of a provider call that failed after the client's retries."""
    return Unscored(failure=exc.kind or "provider_error", message=f"provider call failed: {exc}")


AttemptCallback = Callable[[int, int], None]
"""Called with (call, attempt), both 1-based, just before each HTTP attempt is sent."""


async def judge_packet(
    kind: PacketKind[PacketT, ResultT],
    packet: PacketT,
    model: Model,
    *,
    limiter: Limiter | None = None,
    on_attempt: AttemptCallback | None = None,
    source: str | None = None,
) -> Judgment[ResultT]:
    """Judge one packet with ``model`` under the one failure rule (see the module docstring).

    Never raises for a provider failure or a bad answer: those are unscored judgments. ``source``
    names the answer in parse errors (default: the model and the packet's key).
    """
    key = kind.key(packet)
    spec = model.spec
    where = source or f"answer of {spec.ref} for unit {key}"
    tally = CallTally()
    messages = kind.render(packet)
    reasked = False
    for round in (1, 2):
        hook = (lambda a, _c=round: on_attempt(_c, a)) if on_attempt is not None else None
        try:
            completion = await model.complete(messages, limiter=limiter, on_attempt=hook)
        except ModelError as exc:
            tally.add_failure(exc)
            unscored = unscored_from_error(exc)
            return Judgment(key=key, result=None, unscored=unscored, calls=tally, reasked=reasked)
        tally.add(completion)
        outcome = read_answer(
            kind,
            packet,
            messages,
            completion.text,
            round=round,
            source=where,
            served_model=completion.served_model or spec.model,
        )
        if isinstance(outcome, Reask):
            messages, reasked = outcome.messages, True
            continue
        if isinstance(outcome, Unscored):
            return Judgment(key=key, result=None, unscored=outcome, calls=tally, reasked=reasked)
        return Judgment(key=key, result=outcome, unscored=None, calls=tally, reasked=reasked)
    raise AssertionError("unreachable: the second round always settles")
