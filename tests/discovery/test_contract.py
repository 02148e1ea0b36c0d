"""The two discovery verdict contracts: strict, typed errors, schemas, and fuzzing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix import VerdictFileError
from helix.discovery import (
    parse_cluster_file,
    parse_cluster_text,
    parse_determination_file,
    parse_determination_text,
)

GOOD = {
    "critique": "entry 2 refunds to a gift card",
    "result": "fail",
    "confidence": 0.7,
    "blocked_by": None,
    "first_wrong": {"index": 2, "agent": "assistant", "note": "refund to a gift card"},
}


def det(obj: Any, entries: int = 5) -> Any:
    return parse_determination_text(json.dumps(obj), key="k", entries=entries, source="answer")


def test_a_good_determination_parses_bare_fenced_or_wrapped() -> None:
    assert det(GOOD).determination.first_wrong.index == 2
    fenced = "Here it is:\n```json\n" + json.dumps(GOOD) + "\n```"
    assert parse_determination_text(fenced, key="k", entries=5, source="a").determination.result == "fail"
    assert det({"determination": GOOD}).determination.critique.startswith("entry 2")


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"result": "partial"}, "determination.result", "not allowed"),
        ({"confidence": 1.5}, "determination.confidence", "from 0 to 1"),
        ({"confidence": True}, "determination.confidence", "from 0 to 1"),
        ({"critique": "  "}, "determination.critique", "empty"),
        ({"first_wrong": None}, "determination.first_wrong", "when the result is fail"),
        (
            {"first_wrong": {"index": 9, "agent": "a", "note": "n"}},
            "determination.first_wrong.index",
            "outside",
        ),
        (
            {"first_wrong": {"index": "2", "agent": "a", "note": "n"}},
            "determination.first_wrong.index",
            "integer",
        ),
        ({"first_wrong": {"index": 1, "agent": "", "note": "n"}}, "determination.first_wrong.agent", "empty"),
        ({"extra": 1}, "determination", "unexpected key"),
        ({"result": "pass"}, "determination.first_wrong", "must be null"),
        ({"result": "uncertain", "first_wrong": None}, "determination.blocked_by", "needs 'blocked_by'"),
        ({"blocked_by": "x"}, "determination.blocked_by", "only for an uncertain"),
    ],
)
def test_each_broken_rule_names_the_field_and_the_fix(change: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(VerdictFileError, match=words) as caught:
        det({**GOOD, **change})
    assert caught.value.field == field


def test_result_before_critique_is_refused_on_raw_order() -> None:
    text = '{"result": "pass", "critique": "x", "confidence": 0.5, "blocked_by": null, "first_wrong": null}'
    with pytest.raises(VerdictFileError, match="reason first"):
        parse_determination_text(text, key="k", entries=3, source="a")


def test_duplicate_keys_and_nan_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.verdict.json"
    path.write_text('{"version": 1, "key": "k", "key": "k"}')
    with pytest.raises(VerdictFileError, match="twice"):
        parse_determination_file(path, key="k", entries=3)
    path.write_text(
        '{"version": 1, "key": "k", "status": "scored", "judge": {"runtime": "r", "model": "m"}, '
        '"determination": {"critique": "c", "result": "pass", "confidence": NaN, "blocked_by": null, '
        '"first_wrong": null}}'
    )
    with pytest.raises(VerdictFileError, match="not valid JSON"):
        parse_determination_file(path, key="k", entries=3)


def test_file_envelope_needs_key_version_and_a_pinned_judge(tmp_path: Path) -> None:
    path = tmp_path / "k.verdict.json"
    body = {
        "version": 1,
        "key": "other",
        "status": "scored",
        "judge": {"runtime": "r", "model": "m"},
        "determination": GOOD,
    }
    path.write_text(json.dumps(body))
    with pytest.raises(VerdictFileError, match="copy the key") as caught:
        parse_determination_file(path, key="k", entries=5)
    assert caught.value.path == str(path)
    path.write_text(json.dumps({**body, "key": "k", "judge": {"runtime": "r"}}))
    with pytest.raises(VerdictFileError, match="judge.model|no model"):
        parse_determination_file(path, key="k", entries=5)
    path.write_text(json.dumps({"version": 1, "key": "k", "status": "unscored", "error": "provider down"}))
    assert parse_determination_file(path, key="k", entries=5).status == "unscored"
    with pytest.raises(VerdictFileError, match="does not exist"):
        parse_determination_file(tmp_path / "missing.verdict.json", key="k", entries=5)


CATEGORY = {
    "id": "refund-wrong-method",
    "title": "Refund to a forbidden method",
    "definition": "refunds to a gift card",
    "question": "Did the agent refund only to the original method?",
    "pass_definition": "all refunds to the original method",
    "fail_definition": "a refund to another method",
    "routing": "eval-worthy",
    "routing_reason": "a policy judgement",
    "note_ids": ["a", "b"],
}


def clus(obj: Any, ids: tuple[str, ...] = ("a", "b", "c")) -> Any:
    return parse_cluster_text(json.dumps(obj), key="k", note_ids=ids, source="answer")


def test_a_good_clustering_accounts_for_every_note() -> None:
    ok = clus(
        {"critique": "x", "categories": [CATEGORY], "unassigned": [{"note_id": "c", "reason": "vague"}]}
    )
    assert ok.clustering.categories[0].note_ids == ("a", "b")
    with pytest.raises(VerdictFileError, match="in no category") as caught:
        clus({"critique": "x", "categories": [CATEGORY]})
    assert "'c'" in str(caught.value)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"routing": "maybe"}, "routing 'maybe' is not allowed"),
        ({"id": "Not A Slug"}, "kebab-case"),
        ({"note_ids": ["a", "zzz"]}, "not in this packet"),
        ({"note_ids": []}, "non-empty list"),
        ({"question": ""}, "empty"),
        ({"colour": "red"}, "unexpected key"),
    ],
)
def test_broken_categories_are_refused(change: dict[str, Any], words: str) -> None:
    with pytest.raises(VerdictFileError, match=words):
        clus(
            {
                "critique": "x",
                "categories": [{**CATEGORY, **change}],
                "unassigned": [{"note_id": "c", "reason": "r"}],
            }
        )


def test_a_note_in_two_places_and_critique_after_categories_are_refused() -> None:
    second = {**CATEGORY, "id": "other", "note_ids": ["b", "c"]}
    with pytest.raises(VerdictFileError, match="exactly one category"):
        clus({"critique": "x", "categories": [CATEGORY, second]})
    with pytest.raises(VerdictFileError, match="reason first"):
        parse_cluster_text('{"categories": [], "critique": "x"}', key="k", note_ids=(), source="a")


def test_cluster_file_envelope(tmp_path: Path) -> None:
    path = tmp_path / "k.verdict.json"
    clustering = {"critique": "x", "categories": [{**CATEGORY, "note_ids": ["a"]}], "unassigned": []}
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "key": "k",
                "status": "scored",
                "judge": {"runtime": "r", "model": "m"},
                "clustering": clustering,
            }
        )
    )
    assert parse_cluster_file(path, key="k", note_ids=("a",)).clustering is not None
    path.write_text(json.dumps({"version": 2, "key": "k"}))
    with pytest.raises(VerdictFileError, match="version"):
        parse_cluster_file(path, key="k", note_ids=("a",))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "critique",
                    "result",
                    "confidence",
                    "blocked_by",
                    "first_wrong",
                    "index",
                    "agent",
                    "note",
                    "categories",
                    "unassigned",
                    "id",
                    "note_ids",
                    "routing",
                    "determination",
                    "clustering",
                ]
            ),
            inner,
            max_size=6,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_fuzzed_answers_parse_or_raise_a_verdict_error(value: Any) -> None:
    text = json.dumps(value)
    for parse in (
        lambda: parse_determination_text(text, key="k", entries=5, source="fuzz"),
        lambda: parse_cluster_text(text, key="k", note_ids=("a", "b"), source="fuzz"),
    ):
        try:
            result = parse()
        except VerdictFileError:
            continue
        assert result.status == "scored"


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200))
def test_fuzzed_text_never_crashes_the_parsers(text: str) -> None:
    for parse in (
        lambda: parse_determination_text(text, key="k", entries=5, source="fuzz"),
        lambda: parse_cluster_text(text, key="k", note_ids=("a",), source="fuzz"),
    ):
        try:
            parse()
        except VerdictFileError:
            pass
