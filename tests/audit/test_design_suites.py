"""Error analysis (grounding), evaluator design (code checks preferred) and living suites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helix import UsageError
from helix.audit import SuiteRevision, audit_run, check_suite_history, suggest_code_check
from helix.judging import Criterion

from .conftest import MakeRun

TOOLS = ["find_customer", "refund", "cancel_order", "update_address", "escalate_to_human"]


def llm(question: str, *, pass_def: str = "It holds.", fail_def: str = "It does not hold.") -> Criterion:
    return Criterion(
        id="c", title="t", kind="llm", question=question, pass_definition=pass_def, fail_definition=fail_def
    )


def test_never_failing_criteria_are_flagged_unless_guarded(make_run: MakeRun) -> None:
    built = make_run(fail={"claims-match-actions": 2, "refund-within-policy": 1})
    report = audit_run(built.path)
    grounded = report.by_check("criteria-grounded")
    assert grounded.status == "warn"
    never = set(grounded.evidence.ids["never_failed"])
    assert {
        "identity-verified-before-action",
        "tool-errors-reported-honestly",
        "resolves-or-escalates",
    } <= never
    assert "claims-match-actions" not in never and "refund-within-policy" not in never
    note = next(d.note for d in grounded.details if d.subject == "claims-match-actions")
    assert note == "failed on 2 of 6 decided verdicts"

    guarded = audit_run(built.path, guards=sorted(never))
    assert guarded.by_check("criteria-grounded").status == "pass"
    assert set(guarded.by_check("criteria-grounded").evidence.ids["guards"]) == never


def test_a_guard_must_name_a_criterion(make_run: MakeRun) -> None:
    built = make_run()
    with pytest.raises(UsageError, match="guard 'no-such-criterion' is not a criterion"):
        audit_run(built.path, guards=["no-such-criterion"])


def test_grounding_not_measured_before_judging(make_run: MakeRun) -> None:
    built = make_run(aggregate=False)
    for p in (built.path / "verdicts").glob("*.verdict.json"):
        p.unlink()
    finding = audit_run(built.path).by_check("criteria-grounded")
    assert finding.status == "not-measured"
    assert finding.evidence.counts["not_judged"] == len(built.llm_ids) + len(built.code_ids)


def test_the_example_ordering_question_gets_a_code_check(make_run: MakeRun) -> None:
    finding = audit_run(make_run().path).by_check("code-check-preferred")
    assert finding.status == "warn"
    assert finding.evidence.ids["flagged"] == ("identity-verified-before-action",)
    note = finding.details[0].note
    assert "tool_called_before" in note and "first: find_customer" in note
    assert "verify-before-account-tools" in note  # an existing code criterion already uses that check


def test_ordering_needs_two_tools_and_an_order_word() -> None:
    assert suggest_code_check(llm("Was find_customer called before cancel_order?"), TOOLS)[0].args == (
        "{first: find_customer, then: [cancel_order]}"
    )
    after = suggest_code_check(llm("Is every cancel_order call made after find_customer succeeded?"), TOOLS)
    assert after[0].check == "tool_called_before" and after[0].args.startswith("{first: find_customer")
    assert (
        suggest_code_check(llm("Did the assistant use find_customer and cancel_order politely?"), TOOLS) == []
    )
    # a plain-word tool name only counts where the text marks it as a tool
    assert (
        suggest_code_check(llm("Was the refund issued before the delivery date plus 30 days?"), TOOLS) == []
    )
    assert suggest_code_check(llm("Was `refund` called after find_customer?"), TOOLS)[0].args == (
        "{first: find_customer, then: [refund]}"
    )


def test_budgets_and_repeats_get_checks() -> None:
    (calls,) = suggest_code_check(llm("Did the agent finish in at most 5 tool calls?"), TOOLS)
    assert (calls.check, calls.args) == ("max_tool_calls", "{limit: 5}")
    (turns,) = suggest_code_check(llm("Did it answer in fewer than three turns?"), TOOLS)
    assert (turns.check, turns.args) == ("max_turns", "{limit: 2}")
    (rep,) = suggest_code_check(llm("Did the agent avoid repeating the same tool call?"), TOOLS)
    assert rep.check == "no_repeated_tool_call"
    assert suggest_code_check(llm("Was the refund within 30 days of delivery?"), TOOLS) == []
    code = Criterion(id="k", title="t", kind="code", check={"name": "max_turns", "args": {"limit": 3}})
    assert suggest_code_check(code, TOOLS) == []


@given(
    limit=st.integers(min_value=0, max_value=500),
    phrase=st.sampled_from(["at most", "no more than", "up to", "a maximum of"]),
    unit=st.sampled_from(["tool calls", "calls", "turns", "assistant messages"]),
)
def test_budget_limit_is_read_back(limit: int, phrase: str, unit: str) -> None:
    found = suggest_code_check(llm(f"Did the agent use {phrase} {limit} {unit}?"), TOOLS)
    assert len(found) == 1
    assert found[0].args == f"{{limit: {limit}}}"
    assert found[0].check == ("max_tool_calls" if "call" in unit else "max_turns")


@given(text=st.text(max_size=300))
def test_suggestions_never_raise_on_any_text(text: str) -> None:
    for s in suggest_code_check(llm(text or "?", pass_def=text or "p", fail_def=text or "f"), TOOLS):
        assert s.check in {"tool_called_before", "max_tool_calls", "max_turns", "no_repeated_tool_call"}


def write_history(run: Path, name: str, revisions: list[list[str]]) -> Path:
    folder = run / "suites"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.history.jsonl"
    lines = [
        SuiteRevision(suite=name, revision=i, ids=tuple(ids)).model_dump_json()
        for i, ids in enumerate(revisions)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_suites_not_measured_without_history(make_run: MakeRun) -> None:
    assert audit_run(make_run().path).by_check("suites-never-shrank").status == "not-measured"


def test_growing_suite_passes_and_a_shrinking_one_fails(make_run: MakeRun) -> None:
    built = make_run()
    write_history(built.path, "regression", [["a"], ["a", "b"], ["a", "b", "c"]])
    ok = audit_run(built.path).by_check("suites-never-shrank")
    assert ok.status == "pass" and ok.details[0].note == "grew from 1 to 3 over 3 revision(s)"
    write_history(built.path, "criteria", [["x", "y"], ["x", "y", "z"], ["x", "z"]])
    bad = audit_run(built.path).by_check("suites-never-shrank")
    assert bad.status == "fail"
    assert bad.evidence.ids == {"shrank": ("criteria",), "removed": ("y",)}
    assert [d.status for d in bad.details] == ["fail", "pass"]


def test_rewritten_or_unreadable_history_fails(tmp_path: Path) -> None:
    path = write_history(tmp_path, "s", [["a"], ["a", "b"]])
    lines = path.read_text().splitlines()
    path.write_text("\n".join(reversed(lines)) + "\n")  # revision 0 after revision 1
    assert "rewritten" in check_suite_history(path).note
    path.write_text(lines[0] + "\n" + json.dumps({"suite": "s"}) + "\n")
    broken = check_suite_history(path)
    assert broken.status == "fail" and "line 2" in broken.note
