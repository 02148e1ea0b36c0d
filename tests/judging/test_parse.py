"""Verdict parsing: valid answers round-trip; every breach of the contract is rejected with the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix import VerdictFileError
from helix.judging import CriterionVerdict, JudgeInfo, parse_verdict_file, parse_verdict_text

KEY = "0123456789abcdef0123"
IDS = ("grounded", "polite")


def entry(cid: str, result: str = "pass", **over: Any) -> dict[str, Any]:
    e: dict[str, Any] = {
        "criterion_id": cid,
        "critique": f"evidence for {cid}",
        "result": result,
        "confidence": 0.8,
    }
    e["blocked_by"] = "the tool result was not recorded" if result == "uncertain" else None
    e.update(over)
    return e


def verdict_obj(*entries: dict[str, Any], **over: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "version": 1,
        "key": KEY,
        "judge": {"runtime": "claude-code", "model": "claude-sonnet-4-5-20250929"},
        "verdicts": list(entries) or [entry("grounded"), entry("polite", "fail")],
    }
    obj.update(over)
    return obj


def write(tmp_path: Path, obj: Any) -> Path:
    path = tmp_path / f"{KEY}.verdict.json"
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return path


def parse_file(tmp_path: Path, obj: Any) -> Any:
    return parse_verdict_file(write(tmp_path, obj), key=KEY, criterion_ids=IDS)


def test_a_valid_file_parses_in_criterion_order(tmp_path: Path) -> None:
    vf = parse_file(tmp_path, verdict_obj(entry("polite", "fail"), entry("grounded", "uncertain")))
    assert [(v.criterion_id, v.result) for v in vf.verdicts] == [
        ("grounded", "uncertain"),
        ("polite", "fail"),
    ]
    assert vf.verdicts[0].blocked_by == "the tool result was not recorded"
    assert vf.judge == JudgeInfo(runtime="claude-code", model="claude-sonnet-4-5-20250929")


@pytest.mark.parametrize(
    "text",
    [
        '{"verdicts": [%s, %s]}',
        'Here is my verdict:\n```json\n{"verdicts": [%s, %s]}\n```\nThanks.',
        'I looked carefully. {"verdicts": [%s, %s]} That is all.',
    ],
)
def test_provider_answers_parse_bare_fenced_or_in_prose(text: str) -> None:
    body = text % (json.dumps(entry("grounded")), json.dumps(entry("polite", "fail")))
    judge = JudgeInfo(runtime="model", model="gpt-4o-2024-08-06", temperature=0.0)
    vf = parse_verdict_text(body, key=KEY, criterion_ids=IDS, source="answer#1", judge=judge)
    assert [v.result for v in vf.verdicts] == ["pass", "fail"] and vf.key == KEY and vf.judge == judge


def test_the_word_maybe_is_rejected_naming_the_allowed_set(tmp_path: Path) -> None:
    with pytest.raises(VerdictFileError) as info:
        parse_file(tmp_path, verdict_obj(entry("grounded", result="maybe"), entry("polite")))
    msg = str(info.value)
    assert "'maybe'" in msg and "'pass', 'fail', 'uncertain'" in msg and "'grounded'" in msg
    assert str(tmp_path) in msg and info.value.field == "verdicts[0].result"


def test_result_before_critique_is_rejected(tmp_path: Path) -> None:
    backwards = {"criterion_id": "grounded", "result": "pass", "critique": "looks fine", "confidence": 0.9}
    with pytest.raises(VerdictFileError, match="'result' comes before 'critique'.*reason first"):
        parse_file(tmp_path, verdict_obj(backwards, entry("polite")))
    with pytest.raises(VerdictFileError, match="before 'critique'"):
        parse_verdict_text(
            json.dumps({"verdicts": [backwards, entry("polite")]}), key=KEY, criterion_ids=IDS, source="s"
        )


@pytest.mark.parametrize(
    ("obj", "needle"),
    [
        (verdict_obj(entry("grounded", critique="   "), entry("polite")), "critique '   ' is empty"),
        (
            verdict_obj({"criterion_id": "grounded", "result": "pass", "confidence": 1}, entry("polite")),
            "no 'critique'",
        ),
        (
            verdict_obj(entry("grounded", confidence=1.5), entry("polite")),
            "confidence 1.5 must be a number from 0 to 1",
        ),
        (verdict_obj(entry("grounded", confidence=True), entry("polite")), "confidence True"),
        (verdict_obj(entry("grounded", "uncertain", blocked_by=None), entry("polite")), "needs 'blocked_by'"),
        (verdict_obj(entry("grounded")), "no verdict for criterion(s) ['polite']"),
        (verdict_obj(entry("grounded"), entry("polite"), entry("tone")), "criterion 'tone' is not judged"),
        (verdict_obj(entry("grounded"), entry("grounded")), "criterion 'grounded' is answered twice"),
        (verdict_obj(key="ffffffffffffffffffff"), "does not match the unit's key"),
        (verdict_obj(version=2), "version 2 is not supported"),
        (verdict_obj(judge={"runtime": "claude-code"}), "gives no model"),
        (verdict_obj(judge=None), "no 'judge'"),
        (verdict_obj(extra=1), "unexpected key(s) ['extra']"),
        (verdict_obj(entry("grounded", score=3), entry("polite")), "unexpected key(s) ['score']"),
        (verdict_obj(verdicts=[]), "non-empty list"),
        (verdict_obj(status="unscored"), "needs 'error'"),
        (verdict_obj(status="partial"), "status 'partial'"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_contract_breaches_are_rejected(tmp_path: Path, obj: Any, needle: str) -> None:
    with pytest.raises(VerdictFileError) as info:
        parse_file(tmp_path, obj)
    assert needle in str(info.value)


def test_raw_json_problems_are_rejected(tmp_path: Path) -> None:
    dup = '{"version": 1, "key": "K", "key": "K", "verdicts": []}'.replace("K", KEY)
    with pytest.raises(VerdictFileError, match="'key' appears twice"):
        parse_file(tmp_path, dup)
    nan = json.dumps(verdict_obj(entry("grounded", confidence=0.5), entry("polite"))).replace("0.5", "NaN")
    with pytest.raises(VerdictFileError, match="not valid JSON"):
        parse_file(tmp_path, nan)
    with pytest.raises(VerdictFileError, match="does not exist"):
        parse_verdict_file(tmp_path / "absent.verdict.json", key=KEY, criterion_ids=IDS)
    with pytest.raises(VerdictFileError, match="no JSON object with a 'verdicts' list"):
        parse_verdict_text("I think it passes.", key=KEY, criterion_ids=IDS, source="answer#2")


def test_unscored_files_and_code_verdicts_are_valid(tmp_path: Path) -> None:
    unscored = {"version": 1, "key": KEY, "status": "unscored", "error": "provider refused", "verdicts": []}
    vf = parse_file(tmp_path, unscored)
    assert (vf.status, vf.error, vf.verdicts) == ("unscored", "provider refused", ())
    code = verdict_obj(judge={"runtime": "code"})
    assert parse_file(tmp_path, code).judge == JudgeInfo(runtime="code")


_critique = st.text(min_size=1, max_size=30).filter(lambda s: s.strip() != "")
_verdicts = st.fixed_dictionaries(
    {
        "critique": _critique,
        "result": st.sampled_from(["pass", "fail", "uncertain"]),
        "confidence": st.floats(min_value=0, max_value=1),
        "blocked_by": _critique,
    }
)


@settings(max_examples=80, deadline=None)
@given(st.lists(_verdicts, min_size=len(IDS), max_size=len(IDS)), st.permutations(IDS))
def test_random_valid_verdicts_round_trip(
    tmp_path_factory: Any, drawn: list[dict[str, Any]], order: Any
) -> None:
    entries = []
    expected = {}
    for cid, d in zip(order, drawn, strict=True):
        blocked = d["blocked_by"] if d["result"] == "uncertain" else None
        entries.append(
            entry(cid, d["result"], critique=d["critique"], confidence=d["confidence"], blocked_by=blocked)
        )
        expected[cid] = CriterionVerdict(
            criterion_id=cid,
            critique=d["critique"],
            result=d["result"],
            confidence=d["confidence"],
            blocked_by=blocked,
        )
    vf = parse_file(tmp_path_factory.mktemp("v"), verdict_obj(*entries))
    assert vf.verdicts == tuple(expected[c] for c in IDS)
    assert parse_verdict_text(
        json.dumps({"verdicts": entries}), key=KEY, criterion_ids=IDS, source="s"
    ).verdicts == (vf.verdicts)


def _corruptions() -> st.SearchStrategy[tuple[str, Any]]:
    word = st.text(min_size=1, max_size=10).filter(lambda w: w not in ("pass", "fail", "uncertain"))
    return st.one_of(
        st.tuples(st.just("result"), word),
        st.tuples(
            st.just("confidence"),
            st.one_of(st.floats(min_value=1.0001, max_value=1e9), st.floats(max_value=-1e-9)),
        ),
        st.tuples(st.just("confidence"), st.one_of(st.text(max_size=5), st.none(), st.booleans())),
        st.tuples(st.just("critique"), st.one_of(st.just(""), st.just(" \n"), st.integers(), st.none())),
        st.tuples(st.just("criterion_id"), st.text(max_size=10).filter(lambda s: s not in IDS)),
        st.tuples(st.just("drop"), st.sampled_from(["critique", "result", "criterion_id", "confidence"])),
        st.tuples(st.just("swap"), st.just(None)),
        st.tuples(st.just("key"), st.text(max_size=20).filter(lambda s: s != KEY)),
    )


@settings(max_examples=150, deadline=None)
@given(corruption=_corruptions(), which=st.integers(min_value=0, max_value=1))
def test_random_corruptions_are_never_accepted(
    tmp_path_factory: Any, corruption: tuple[str, Any], which: int
) -> None:
    obj = verdict_obj()
    kind, value = corruption
    target = obj["verdicts"][which]
    if kind == "drop":
        del target[value]
    elif kind == "swap":
        obj["verdicts"][which] = {
            "result": target["result"],
            **{k: v for k, v in target.items() if k != "result"},
        }
    elif kind == "key":
        obj["key"] = value
    else:
        target[kind] = value
    with pytest.raises(VerdictFileError):
        parse_file(tmp_path_factory.mktemp("c"), obj)
