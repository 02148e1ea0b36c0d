"""Loading criteria files: good files, errors with the right line and field, and dump → load."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helix import InputFileError
from helix.judging import (
    CodeCheckSpec,
    CriteriaMatrix,
    Criterion,
    FewShotExample,
    criteria_from_dict,
    dump_criteria,
    load_criteria,
)

GOOD = """\
version: 1
subject: support-shop
description: What the support agent must get right.
criteria:
  - id: lookup-before-refund
    title: Looks the order up before refunding it
    severity: critical
    kind: code
    check:
      name: tool_called_before
      args:
        first: lookup_order
        then: [refund_order, cancel_order]
  - id: errors-handled
    title: Does not talk past tool errors
    kind: code
    check: no_unhandled_tool_error
  - id: polite-refusal
    title: Refuses out-of-policy requests politely
    severity: minor
    kind: llm
    question: When the agent refuses, does it explain why and offer an alternative?
    pass_definition: The refusal names the policy reason and offers a next step.
    fail_definition: |
      The refusal is curt, gives no reason,
      or offers nothing the customer can do next.
    applies_when: The agent refuses a request.
"""


def write(tmp_path: Path, text: str, name: str = "criteria.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str) -> InputFileError:
    path = write(tmp_path, text)
    with pytest.raises(InputFileError) as info:
        load_criteria(path)
    assert info.value.path == str(path)
    return info.value


def test_loads_a_good_file(tmp_path: Path) -> None:
    matrix = load_criteria(write(tmp_path, GOOD))
    assert matrix.subject == "support-shop"
    assert [c.id for c in matrix.criteria] == ["lookup-before-refund", "errors-handled", "polite-refusal"]
    first = matrix.by_id("lookup-before-refund")
    assert first.severity == "critical"
    assert first.check == CodeCheckSpec(
        name="tool_called_before", args={"first": "lookup_order", "then": ["refund_order", "cancel_order"]}
    )
    assert matrix.by_id("errors-handled").check == CodeCheckSpec(name="no_unhandled_tool_error")
    assert matrix.by_id("errors-handled").severity == "major"
    assert matrix.by_id("polite-refusal").fail_definition == (
        "The refusal is curt, gives no reason,\nor offers nothing the customer can do next.\n"
    )


def test_bad_severity_names_line_field_value_and_choices(tmp_path: Path) -> None:
    err = load_error(tmp_path, GOOD.replace("severity: minor", "severity: urgent"))
    assert err.line == 20
    assert err.field == "criteria[2].severity"
    assert str(err) == (
        f"{err.path}:20, field 'criteria[2].severity': 'urgent' is not one of critical, major, minor; "
        "use one of them"
    )


def test_missing_field_points_at_the_criterion(tmp_path: Path) -> None:
    err = load_error(tmp_path, GOOD.replace("    title: Does not talk past tool errors\n", ""))
    assert err.line == 14 and err.field == "criteria[1].title"
    assert "required field 'title' is missing; add it" in str(err)


def test_unknown_field_lists_the_allowed_ones(tmp_path: Path) -> None:
    err = load_error(tmp_path, GOOD.replace("    severity: critical\n", "    severty: critical\n"))
    assert err.line == 7 and err.field == "criteria[0].severty"
    assert "unknown field 'severty'" in str(err) and "severity" in str(err).split("allowed fields are:")[1]


def test_bad_id_and_unquoted_yes(tmp_path: Path) -> None:
    err = load_error(tmp_path, GOOD.replace("id: errors-handled", "id: errors handled!"))
    assert err.line == 14 and err.field == "criteria[1].id"
    assert "'errors handled!' is not a valid criterion id" in str(err)
    err = load_error(
        tmp_path, GOOD.replace("applies_when: The agent refuses a request.", "applies_when: yes")
    )
    assert err.line == 27 and "put the value in quotes" in str(err)


def test_model_rule_errors_point_at_the_criterion(tmp_path: Path) -> None:
    text = GOOD.replace(
        "    question: When the agent refuses, does it explain why and offer an alternative?\n", ""
    )
    err = load_error(tmp_path, text)
    assert err.line == 18 and err.field == "criteria[2]"
    assert "llm criterion 'polite-refusal' needs question" in str(err)


def test_every_problem_is_listed(tmp_path: Path) -> None:
    text = GOOD.replace("severity: minor", "severity: urgent").replace(
        "kind: code\n    check: no_", "kind: cod\n    check: no_"
    )
    err = load_error(tmp_path, text)
    assert err.field == "criteria[1].kind" and err.line == 16
    assert re.search(r"also:\n  .*criteria\.yaml:20: field 'criteria\[2\]\.severity': 'urgent'", str(err))


def test_unknown_check_name_lists_the_builtins(tmp_path: Path) -> None:
    err = load_error(tmp_path, GOOD.replace("check: no_unhandled_tool_error", "check: no_unhandled_errors"))
    assert err.line == 17 and err.field == "criteria[1].check.name"
    assert "unknown built-in check 'no_unhandled_errors'" in str(err)
    assert "tool_called_before" in str(err) and "max_tool_calls" in str(err)


def test_bad_check_args_are_named(tmp_path: Path) -> None:
    err = load_error(tmp_path, GOOD.replace("        first: lookup_order\n", "        firts: lookup_order\n"))
    assert err.field == "criteria[0].check.args.firts" and err.line == 12
    assert "tool_called_before takes no argument 'firts'; its arguments are: first, then" in str(err)
    err = load_error(tmp_path, GOOD.replace("check: no_unhandled_tool_error", "check: {name: max_turns}"))
    assert err.field == "criteria[1].check.args.limit" and err.line == 17
    assert "max_turns needs argument 'limit'" in str(err)
    err = load_error(
        tmp_path,
        GOOD.replace("check: no_unhandled_tool_error", "check: {name: max_turns, args: {limit: many}}"),
    )
    assert err.field == "criteria[1].check.args.limit" and "'many'" in str(err)


def test_unimportable_user_check(tmp_path: Path) -> None:
    err = load_error(
        tmp_path, GOOD.replace("check: no_unhandled_tool_error", "check: acme_missing.checks:ok")
    )
    assert err.line == 17 and err.field == "criteria[1].check.name"
    assert "cannot import module 'acme_missing.checks'" in str(err)


def test_user_check_loads_by_dotted_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))
    spec = "check: {name: 'helix_fixture_checks.orders:refund_within_limit', args: {limit: 50}}"
    matrix = load_criteria(write(tmp_path, GOOD.replace("check: no_unhandled_tool_error", spec)))
    assert matrix.by_id("errors-handled").check == CodeCheckSpec(
        name="helix_fixture_checks.orders:refund_within_limit", args={"limit": 50}
    )
    err = load_error(
        tmp_path, GOOD.replace("check: no_unhandled_tool_error", spec.replace("limit: 50", "lim: 50"))
    )
    assert "needs argument 'limit'" in str(err) or "takes no argument 'lim'" in str(err)


def test_yaml_syntax_error_has_its_line(tmp_path: Path) -> None:
    err = load_error(tmp_path, GOOD.replace("    kind: llm\n", "    kind: [llm\n"))
    assert err.line is not None and 21 <= err.line <= 23
    assert str(err).startswith(f"{err.path}:{err.line}: invalid YAML")


def test_duplicate_keys_are_rejected(tmp_path: Path) -> None:
    err = load_error(
        tmp_path, GOOD.replace("    severity: minor\n", "    severity: minor\n    severity: major\n")
    )
    assert err.line == 21 and "key 'severity' appears twice" in str(err) and "line 20" in str(err)


def test_file_level_problems(tmp_path: Path) -> None:
    assert "is empty" in str(load_error(tmp_path, ""))
    assert "must be a mapping" in str(load_error(tmp_path, "- a\n- b\n"))
    err = load_error(tmp_path, GOOD.replace("version: 1", "version: 2"))
    assert err.line == 1 and err.field == "version" and "reads version 1" in str(err)
    with pytest.raises(InputFileError, match="cannot read the criteria file"):
        load_criteria(tmp_path / "absent.yaml")


def test_criteria_from_dict_has_field_but_no_line() -> None:
    with pytest.raises(InputFileError) as info:
        criteria_from_dict(
            {"subject": "s", "criteria": [{"id": "a", "title": "t", "kind": "code", "check": "nope"}]}
        )
    assert info.value.line is None and info.value.field == "criteria[0].check.name"
    assert str(info.value).startswith(
        "<memory>, field 'criteria[0].check.name': unknown built-in check 'nope'"
    )
    matrix = criteria_from_dict(
        {
            "subject": "s",
            "criteria": [{"id": "a", "title": "t", "kind": "code", "check": "no_repeated_tool_call"}],
        }
    )
    assert matrix.by_id("a").check == CodeCheckSpec(name="no_repeated_tool_call")


def test_dump_then_load_round_trips(tmp_path: Path) -> None:
    matrix = load_criteria(write(tmp_path, GOOD))
    text = dump_criteria(matrix)
    assert "fail_definition: |" in text  # multi-line text stays readable
    again = load_criteria(write(tmp_path, text, "copy.yaml"))
    assert again == matrix
    assert dump_criteria(again) == text


def test_docs_example_loads() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "criteria.md"
    if not docs.exists():
        pytest.skip("docs/criteria.md not present")
    blocks = re.findall(r"```yaml\n(.*?)```", docs.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks, "docs/criteria.md has no yaml example"
    matrix = criteria_from_dict(yaml.safe_load(blocks[0]), source="docs/criteria.md")
    assert {c.check.name for c in matrix.code_criteria if c.check} >= {
        "tool_called",
        "no_unhandled_tool_error",
    }


_text = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=40)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=_text, question=_text, critique=_text, description=st.none() | _text, multi=st.booleans())
def test_dump_load_round_trip_property(
    title: str, question: str, critique: str, description: str | None, multi: bool
) -> None:
    if multi:
        question = f"{question}\nsecond line: {title}\n"
    matrix = CriteriaMatrix(
        subject="s",
        description=description,
        criteria=(
            Criterion(
                id="q1",
                title=title,
                kind="llm",
                question=question,
                pass_definition="p",
                fail_definition="f",
                few_shot=(FewShotExample(trace_id="t1", result="fail", critique=critique),),
            ),
            Criterion(
                id="c1",
                title=title,
                kind="code",
                check=CodeCheckSpec(name="final_output_contains", args={"text": critique}),
            ),
        ),
    )
    assert criteria_from_dict(yaml.safe_load(dump_criteria(matrix))) == matrix
