"""Determinism: re-fold the run's verdicts and compare with the stored ``scorecard.json``, masked.

The contract: the same inputs and verdicts give byte-identical scorecards once run ids, timestamps
and absolute paths are masked. The audit folds the verdicts twice with the gate configuration the
stored scorecard records (the fold itself must be stable), then compares with the stored file.
Blocks that later steps stamp into the scorecard and the fold leaves empty (a calibration's
provenance, for one) are carried over from the stored file, so only what the fold decides is compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ..judging import collect_results
from ..scoring import GateConfig, Scorecard, build_scorecard, mask_value, scorecard_json
from ._findings import AuditStatus, Detail, Evidence, Finding
from ._snapshot import RunSnapshot

__all__ = ["SCORECARD_FILE", "audit_determinism", "json_differences"]

SCORECARD_FILE = "scorecard.json"
_SHOWN = 20


def json_differences(a: Any, b: Any, path: str = "$", limit: int = _SHOWN) -> list[str]:
    """JSON paths where ``a`` and ``b`` differ (at most ``limit``), depth first in key order."""
    out: list[str] = []

    def walk(x: Any, y: Any, where: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for key in list(x) + [k for k in y if k not in x]:
                if key not in x or key not in y:
                    out.append(f"{where}.{key}")
                else:
                    walk(x[key], y[key], f"{where}.{key}")
                if len(out) >= limit:
                    return
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                out.append(f"{where} (length {len(x)} vs {len(y)})")
                return
            for i, (xi, yi) in enumerate(zip(x, y, strict=True)):
                walk(xi, yi, f"{where}[{i}]")
        elif x != y or type(x) is not type(y):
            out.append(where)

    walk(a, b, path)
    return out


def _gate_config(stored: dict[str, Any]) -> GateConfig:
    gate = stored.get("gate") or {}
    return GateConfig(
        blocking=tuple(gate.get("blocking_severities", ("critical", "major"))),
        fail_on_uncertain=bool(gate.get("fail_on_uncertain", False)),
        fail_on_unscored=bool(gate.get("fail_on_unscored", True)),
    )


def _masked(data: Any) -> bytes:
    return orjson.dumps(mask_value(data), option=orjson.OPT_INDENT_2) + b"\n"


def _with_stamped_blocks(rebuilt: Scorecard, stored: dict[str, Any]) -> bytes:
    """The re-folded scorecard as ``scorecard_json`` writes it, with stamped blocks carried over, masked."""
    data = rebuilt.model_dump(mode="json")
    for key, value in stored.items():
        if key in data and data[key] is None and value is not None:
            data[key] = value
    return _masked(orjson.loads(scorecard_json(Scorecard.model_validate(data))))


def _finding(
    status: AuditStatus,
    summary: str,
    next_step: str,
    *,
    evidence: Evidence | None = None,
    details: tuple[Detail, ...] = (),
) -> Finding:
    return Finding(
        area="pipeline-hygiene",
        check="determinism",
        status=status,
        summary=summary,
        next_step=next_step,
        evidence=evidence or Evidence(),
        details=details,
    )


def audit_determinism(snap: RunSnapshot) -> Finding:
    """``determinism``: the stored scorecard is what folding the verdicts gives, byte for byte (masked)."""
    path = Path(snap.run.run_dir) / SCORECARD_FILE
    if not path.is_file():
        return _finding(
            "not-measured",
            "the run has no scorecard.json yet",
            "Run `helix aggregate --run DIR`, then audit again to check the scorecard re-folds byte-identically.",
        )
    if not snap.status.ready:
        n = len(snap.status.missing_keys) + len(snap.status.invalid)
        return _finding(
            "fail",
            f"scorecard.json exists but {n} unit(s) have no valid verdict, so it cannot be re-derived",
            "Restore or re-judge the missing verdicts (see verdicts-complete) and run `helix aggregate` again.",
            evidence=Evidence(counts={"units_without_valid_verdict": n}),
        )
    try:
        stored = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        return _finding(
            "fail",
            f"scorecard.json is not JSON ({exc})",
            "Run `helix aggregate --run DIR` to rewrite it.",
        )
    if not isinstance(stored, dict):
        return _finding(
            "fail", "scorecard.json is not a JSON object", "Run `helix aggregate --run DIR` to rewrite it."
        )
    judged = collect_results(snap.run.run_dir)
    gate = _gate_config(stored)
    first = _with_stamped_blocks(build_scorecard(judged, gate=gate), stored)
    second = _with_stamped_blocks(build_scorecard(judged, gate=gate), stored)
    masked_stored = _masked(stored)
    if first != second:
        diffs = json_differences(orjson.loads(first), orjson.loads(second))
        return _finding(
            "fail",
            "folding the same verdicts twice gave different scorecards",
            "Report this as a Helix bug, with the run directory: the fold must not depend on iteration order.",
            evidence=Evidence(counts={"differences": len(diffs)}, ids={"paths": tuple(diffs)}),
        )
    if first != masked_stored:
        diffs = json_differences(orjson.loads(masked_stored), orjson.loads(first))
        return _finding(
            "fail",
            f"the stored scorecard differs from a re-fold of the verdicts at {len(diffs)} place(s)"
            + (f" (first: {diffs[0]})" if diffs else ""),
            "A verdict file changed after aggregation, or scorecard.json was edited: run `helix aggregate` again "
            "and publish only scorecards that re-fold identically.",
            evidence=Evidence(
                counts={
                    "differences": len(diffs),
                    "stored_bytes": len(masked_stored),
                    "refolded_bytes": len(first),
                },
                ids={"paths": tuple(diffs)},
            ),
            details=tuple(
                Detail(subject=d, status="fail", note="stored and re-folded values differ") for d in diffs
            ),
        )
    return _finding(
        "pass",
        f"re-folding {len(judged.results)} rows gives the stored scorecard byte for byte (masked)",
        "Nothing to do.",
        evidence=Evidence(counts={"rows": len(judged.results), "masked_bytes": len(first)}),
    )
