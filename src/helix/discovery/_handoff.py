"""The failure handoff: fixable categories with their evidence, for whoever owns the agent.

Discovery only judges; it never fixes. A fixable category (a plain defect: a crashing tool, a
broken prompt) is handed over as a bundle: the category, how often it occurred, and per failed
trace the first thing wrong (transcript index, agent, note) with the determiner's critique. The
bundle is masked before it is written (run ids, timestamps and absolute paths replaced by
placeholders, :func:`~helix.scoring.mask_value`), so it carries no home paths and reruns are
byte-identical.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from ..scoring import mask_value

if TYPE_CHECKING:
    from ._determine import DeterminationFile
    from ._result import DiscoveryResult
    from ._run import DeterminationUnit, Note

__all__ = ["HANDOFF_FORMAT_VERSION", "handoff_bundle", "handoff_bytes"]

HANDOFF_FORMAT_VERSION = 1


def handoff_bundle(
    result: DiscoveryResult,
    determinations: Sequence[tuple[DeterminationUnit, DeterminationFile]],
    notes: Mapping[str, Note],
) -> dict[str, Any]:
    """The handoff bundle (unmasked) of the run's fixable categories."""
    critiques = {u.key: v.determination.critique for u, v in determinations if v.determination is not None}
    fixables = []
    for c in result.categories:
        if c.routing != "fixable":
            continue
        evidence = []
        for nid in c.note_ids:
            n = notes[nid]
            for tid in n.trace_ids:
                evidence.append(
                    {
                        "trace_id": tid,
                        "index": n.index,
                        "agent": n.agent,
                        "note": n.note,
                        "critique": critiques.get(nid),
                    }
                )
        fixables.append(
            {
                "id": c.id,
                "title": c.title,
                "definition": c.definition,
                "why_fixable": c.routing_reason,
                "failures": c.failures,
                "rate": c.rate,
                "ci95": list(c.ci95),
                "evidence": evidence,
            }
        )
    return {
        "version": HANDOFF_FORMAT_VERSION,
        "kind": "failure-handoff",
        "subject": result.subject,
        "prompt_version": result.prompt_version,
        "traces": result.traces,
        "decided": result.decided,
        "note": "Fixable failures found by error analysis. Helix judges only: fix these in the agent, then re-run.",
        "fixables": fixables,
    }


def handoff_bytes(
    result: DiscoveryResult,
    determinations: Sequence[tuple[DeterminationUnit, DeterminationFile]],
    notes: Mapping[str, Note],
) -> bytes:
    """The masked bundle as indented JSON."""
    bundle = mask_value(handoff_bundle(result, determinations, notes))
    return orjson.dumps(bundle, option=orjson.OPT_INDENT_2) + b"\n"
