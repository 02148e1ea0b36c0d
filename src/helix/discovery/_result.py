"""The result of a discovery AGGREGATE: what ``aggregate/discovery.json`` holds."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ._saturation import Saturation

__all__ = [
    "DISCOVERY_RESULT_VERSION",
    "CategoryStat",
    "DeterminationCounts",
    "DiscoveryResult",
]

DISCOVERY_RESULT_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CategoryStat(_Model):
    """One emergent category with its failure rate."""

    id: str
    title: str
    definition: str
    question: str
    pass_definition: str
    fail_definition: str
    routing: str
    routing_votes: dict[str, int]
    routing_reason: str
    failures: int
    """Traces whose first thing wrong falls in this category."""
    rate: float
    """failures / traces with a decided determination."""
    ci95: tuple[float, float]
    trace_ids: tuple[str, ...]
    note_ids: tuple[str, ...]
    agents: dict[str, int]
    """Responsible agent → notes."""
    members: tuple[tuple[int, str], ...]


class DeterminationCounts(_Model):
    """How the determinations came out, per trace."""

    passed: int
    failed: int
    uncertain: int
    unscored: int
    failed_without_note: int = 0


class DiscoveryResult(_Model):
    """The content of ``aggregate/discovery.json``."""

    version: int = DISCOVERY_RESULT_VERSION
    prompt_version: str
    subject: str | None
    traces: int
    determinations: DeterminationCounts
    decided: int
    notes: int
    unassigned: int
    unassigned_ids: tuple[str, ...]
    categories: tuple[CategoryStat, ...]
    saturation: Saturation
    readers: tuple[str, ...]
    """The runtime/model pairs that wrote the verdicts (provenance)."""
    merge_threshold: float
