"""blocked_by in both forms (old text, new {kind, detail}), and label designs and their strata."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from helix import UsageError
from helix.review import blocked_kind, blocked_text, parse_design, stratum_of, uncertainty_bin


@dataclass
class Blocked:
    kind: str | None
    detail: str | None


def test_blocked_by_reads_the_old_string_and_the_new_object() -> None:
    assert blocked_kind(None) is None and blocked_text(None) is None
    assert blocked_kind("no order date") == "missing-evidence"  # old free text
    assert blocked_text("no order date") == "no order date"
    assert blocked_kind({"kind": "normative", "detail": "is a partial refund allowed?"}) == "normative"
    assert blocked_text({"kind": "normative", "detail": "is a partial refund allowed?"}) == (
        "normative: is a partial refund allowed?"
    )
    assert blocked_kind(Blocked(kind=None, detail="x")) == "missing-evidence"  # a missing kind
    assert (
        blocked_kind(Blocked(kind="scope", detail=None)) == "scope"
        and blocked_text(Blocked("scope", None)) == "scope"
    )


def test_designs_parse_and_strata_follow_the_judge() -> None:
    assert parse_design("stratified:domain").text == "stratified:domain"
    assert parse_design("by-class").by_class and not parse_design("random").by_class
    for bad in ("stratified", "by-mood", "random:x"):
        with pytest.raises(UsageError):
            parse_design(bad)
    active = parse_design("active")
    assert stratum_of(active, "pass", confidence=0.9) == "pass/sure"
    assert stratum_of(active, "fail", confidence=0.5) == "fail/unsure"
    assert stratum_of(active, "fail", confidence=None) == "fail/unknown"  # a judge that gives no confidence
    assert stratum_of(active, "pass", confidence=0.99, split_reruns=True) == "pass/unsure"
    assert (
        stratum_of(parse_design("stratified:domain"), "pass", metadata={"domain": "retail"}) == "retail/pass"
    )
    assert stratum_of(parse_design("by-verdict"), "fail") == "fail"
    assert uncertainty_bin(None) == "unknown"
    with pytest.raises(UsageError, match="decided"):
        stratum_of(active, "uncertain")
