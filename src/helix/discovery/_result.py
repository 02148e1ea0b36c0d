"""The result of a discovery AGGREGATE: what ``aggregate/discovery.json`` holds."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ._saturation import Saturation

__all__ = [
    "DISCOVERY_RESULT_VERSION",
    "CategoryStat",
    "DeterminationCounts",
    "DiscoveryResult",
    "SaturationReport",
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


class SaturationReport(_Model):
    """The saturation numbers and curve (see :mod:`~helix.discovery` saturation)."""

    traces: int
    notes: int
    categories: int
    singletons: int
    doubletons: int
    coverage: float | None
    coverage_ci: tuple[float, float] | None
    chao1: float | None
    chao1_ci: tuple[float, float] | None
    last_k: int
    target: float
    new_in_last_k: int
    stopped: bool
    curve: tuple[int, ...]

    @classmethod
    def of(cls, s: Saturation) -> SaturationReport:
        """From the pure result."""
        return cls(**s.__dict__)


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
    saturation: SaturationReport
    readers: tuple[str, ...]
    """The runtime/model pairs that wrote the verdicts (provenance)."""
    merge_threshold: float
