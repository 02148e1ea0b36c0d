"""The scorecard report: structure, drill-down content, and that hostile content stays inert text."""

from __future__ import annotations

import base64
import hashlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helix.judging import (
    CodeCheckSpec,
    CriteriaMatrix,
    Criterion,
    CriterionVerdict,
    JudgedRun,
    JudgeInfo,
    TraceCriterionResult,
)
from helix.report import render_report, trace_anchor, write_report
from helix.scoring import build_scorecard
from helix.traces import Event, Message, ToolCall, Trace

XSS_SCRIPT = "<script>alert(1)</script>"
XSS_IMG = "<img src=x onerror=alert(1)>"
XSS_ATTR = '"onmouseover=alert(1) x="'
XSS_CLOSE = "Fine until </script><script>alert(6)</script> here"
SECRET = "SECRET-GOLD-ANSWER"
NESTED_SECRET = "NESTED-SECRET-VALUE"
EVIL_TRACE = 'evil" onmouseover="alert(1)'
SCRIPT_TRACE = XSS_SCRIPT

JUDGE = JudgeInfo(runtime="model", model="gpt-4o-2024-08-06", temperature=0.0, prompt_version="v3")


def _verdict(cid: str, result: str, critique: str, blocked_by: str | None = None) -> CriterionVerdict:
    return CriterionVerdict(
        criterion_id=cid,
        critique=critique,
        result=result,  # type: ignore[arg-type]
        confidence=0.8,
        blocked_by=blocked_by,
    )


def _row(
    tid: str, cid: str, verdict: CriterionVerdict | None, reason: str | None = None
) -> TraceCriterionResult:
    return TraceCriterionResult(
        trace_id=tid,
        criterion_id=cid,
        key=f"k-{tid}-{cid}",
        verdict=verdict,
        unscored_reason=reason,
        judge=JUDGE,
    )


def hostile_run() -> JudgedRun:
    criteria = (
        Criterion(
            id="refund-policy",
            title=XSS_IMG,
            severity="critical",
            kind="llm",
            question="Was the refund within policy?",
            pass_definition="within policy",
            fail_definition="outside policy",
        ),
        Criterion(
            id="tool-ok",
            title="Tools succeed",
            severity="major",
            kind="code",
            check=CodeCheckSpec(name="no_tool_error"),
        ),
        Criterion(
            id="tone",
            title='Polite "tone"',
            severity="minor",
            kind="llm",
            question="Polite?",
            pass_definition="yes",
            fail_definition="no",
        ),
    )
    chat = Trace(
        id=EVIL_TRACE,
        name=XSS_SCRIPT,
        metadata={
            "_gold": SECRET,
            "visible": {"_nested": NESTED_SECRET, "ok": "<svg onload=alert(5)>"},
            "region": "eu",
        },
        messages=[
            Message(role="system", content="You are a support agent. " + XSS_SCRIPT),
            Message(role="user", content=XSS_SCRIPT),
            Message(
                role="assistant",
                content=XSS_IMG,
                tool_calls=[
                    ToolCall(id="c1", name="get_order", arguments={"order_id": 42, "note": XSS_ATTR}),
                    ToolCall(
                        id="c2",
                        name="<b onclick=alert(1)>",
                        arguments='{"q": "</script><script>alert(2)</script>"}',
                    ),
                    ToolCall(id="c3", name="search", arguments='" onmouseover="alert(3)'),
                ],
            ),
            Message(role="tool", tool_call_id="c1", content='{"status": "delivered", "total": 19.5}'),
            Message(role="tool", tool_call_id="c2", content='{"error": "<img src=x onerror=alert(4)>"}'),
            Message(role="tool", tool_call_id="c3", content="timeout"),
            Message(role="assistant", content="Refund issued."),
        ],
        events=[
            Event(
                id="e3",
                kind="tool",
                name="search",
                tool_call_id="c3",
                status="error",
                error="upstream 503 <b>",
            )
        ],
    )
    steps = Trace(
        id=SCRIPT_TRACE,
        input={"question": XSS_SCRIPT},
        output="done",
        metadata={"_label": SECRET},
        events=[
            Event(id="e1", kind="llm", name="plan", input=XSS_IMG, output={"text": XSS_ATTR}, model="m-1"),
            Event(id="e2", kind="tool", name="lookup", input={"id": 1}, status="error", error=XSS_SCRIPT),
        ],
    )
    plain = Trace(
        id="t-plain",
        messages=[Message(role="user", content="hi"), Message(role="assistant", content="hello")],
    )
    results = (
        _row(EVIL_TRACE, "refund-policy", _verdict("refund-policy", "fail", XSS_CLOSE)),
        _row(EVIL_TRACE, "tool-ok", None, reason='<a href="javascript:alert(8)">check raised</a>'),
        _row(
            EVIL_TRACE,
            "tone",
            _verdict("tone", "uncertain", "Hard to tell.", blocked_by="<iframe src=javascript:alert(7)>"),
        ),
        _row(SCRIPT_TRACE, "refund-policy", _verdict("refund-policy", "pass", XSS_IMG)),
        _row(SCRIPT_TRACE, "tool-ok", _verdict("tool-ok", "fail", "lookup errored")),
        _row("t-plain", "refund-policy", _verdict("refund-policy", "pass", "fine")),
        _row("t-plain", "tool-ok", _verdict("tool-ok", "pass", "no tools")),
        _row("t-plain", "tone", _verdict("tone", "pass", "polite")),
    )
    return JudgedRun(
        run_dir='runs/"><script>alert(9)</script>',
        traces=(chat, steps, plain),
        matrix=CriteriaMatrix(subject=f"shop {XSS_SCRIPT}", criteria=criteria),
        results=results,
        unit_axis="criterion",
    )


class Page(HTMLParser):
    """Every start tag with its attributes, the text outside scripts, and each script's text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.text.append(data)

    @property
    def all_text(self) -> str:
        return "".join(self.text)

    def with_class(self, cls: str) -> list[dict[str, str | None]]:
        return [a for _, a in self.tags if cls in (a.get("class") or "").split()]


def parse(page: str) -> Page:
    p = Page()
    p.feed(page)
    p.close()
    return p


@pytest.fixture(scope="module")
def judged() -> JudgedRun:
    return hostile_run()


EMITTED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "header", "h1", "h2", "h3", "div", "dl", "dt",
    "dd", "code", "section", "ul", "li", "a", "table", "thead", "tbody", "tr", "th", "td", "span", "details",
    "summary", "pre", "p", "strong", "br", "footer", "button", "script",
}  # fmt: skip


def _page(judged: JudgedRun) -> str:
    return render_report(judged, build_scorecard(judged))


# --- hostile content -------------------------------------------------------------------------


def test_no_script_or_img_element_comes_from_content(judged: JudgedRun) -> None:
    page = parse(_page(judged))
    names = [tag for tag, _ in page.tags]
    assert set(names) <= EMITTED_TAGS, set(names) - EMITTED_TAGS
    assert names.count("script") == 1
    assert "img" not in names and "iframe" not in names and "svg" not in names
    (script_attrs,) = [a for t, a in page.tags if t == "script"]
    assert script_attrs == {}
    assert "alert" not in page.scripts[0]


def test_no_event_handler_attribute_and_only_local_links(judged: JudgedRun) -> None:
    page = parse(_page(judged))
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name, value)
            assert name in {"class", "id", "href", "data-passed", "data-outcome", "data-criterion-id", "data-result",
                            "data-trace-id", "lang", "charset", "http-equiv", "content", "name", "open", "type",
                            "data-filter", "data-expand", "hidden"}, (tag, name)  # fmt: skip
        if "href" in attrs:
            assert (attrs["href"] or "").startswith("#"), attrs["href"]


def test_hostile_content_is_shown_as_text(judged: JudgedRun) -> None:
    text = parse(_page(judged)).all_text
    for hostile in (
        XSS_SCRIPT,
        XSS_IMG,
        XSS_CLOSE,
        "<iframe src=javascript:alert(7)>",
        "<b onclick=alert(1)>",
    ):
        assert hostile in text, hostile
    assert XSS_ATTR.replace('"', '\\"') in text  # inside the pretty-printed JSON arguments
    assert '" onmouseover="alert(3)' in text  # non-JSON string arguments stay verbatim
    assert '<a href="javascript:alert(8)">check raised</a>' in text
    raw = _page(judged)
    assert "<script>alert" not in raw and "<img" not in raw and "</script><script>" not in raw


def test_attributes_hold_hostile_ids_escaped(judged: JudgedRun) -> None:
    page = parse(_page(judged))
    sections = page.with_class("trace")
    assert {a["data-trace-id"] for a in sections} == {EVIL_TRACE, SCRIPT_TRACE, "t-plain"}
    for a in sections:
        assert a["id"] == trace_anchor(a["data-trace-id"] or "")
        assert set(a["id"] or "") <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def test_hidden_metadata_never_rendered(judged: JudgedRun) -> None:
    raw = _page(judged)
    assert SECRET not in raw and NESTED_SECRET not in raw
    assert "_gold" not in raw and "_nested" not in raw and "_label" not in raw
    assert '"region": "eu"' in parse(raw).all_text  # visible metadata is still shown


def test_csp_allows_exactly_our_script(judged: JudgedRun) -> None:
    page = parse(_page(judged))
    (csp,) = [
        a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    digest = base64.b64encode(hashlib.sha256(page.scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in (csp or "")
    assert "default-src 'none'" in (csp or "")
    raw = _page(judged)
    assert "http://" not in raw and "https://" not in raw and "//" not in raw.replace("://", "")


# --- structure and drill-down ----------------------------------------------------------------


def test_gate_banner(judged: JudgedRun) -> None:
    sc = build_scorecard(judged)
    page = parse(render_report(judged, sc))
    (gate,) = [a for _, a in page.tags if a.get("id") == "gate"]
    assert gate["data-passed"] == "false" and "gate-fail" in (gate["class"] or "")
    assert sc.gate.reason in page.all_text
    assert "GATE FAIL" in page.all_text


def test_criteria_table_rows(judged: JudgedRun) -> None:
    page = parse(_page(judged))
    rows = page.with_class("criterion-row")
    assert [(r["id"], r["data-outcome"]) for r in rows] == [
        ("criterion-refund-policy", "fail"),
        ("criterion-tool-ok", "fail"),
        ("criterion-tone", "pass"),
    ]
    # refund-policy: 2 pass, 1 fail -> 66.7% with the Wilson interval beside it.
    assert "66.7%" in page.all_text and "[20.8%, 93.9%]" in page.all_text
    hrefs = [a["href"] for _, a in page.tags if a.get("href")]
    assert f"#{trace_anchor(EVIL_TRACE)}" in hrefs and f"#{trace_anchor(SCRIPT_TRACE)}" in hrefs


def test_every_link_target_exists_and_ids_are_unique(judged: JudgedRun) -> None:
    page = parse(_page(judged))
    ids = [a["id"] for _, a in page.tags if a.get("id")]
    assert len(ids) == len(set(ids))
    for _, a in page.tags:
        if a.get("href"):
            assert (a["href"] or "")[1:] in ids, a["href"]


def test_transcript_and_verdicts(judged: JudgedRun) -> None:
    page = parse(_page(judged))
    text = page.all_text
    assert len(page.with_class("msg")) == 7 + 0 + 2
    assert len(page.with_class("user")) == 2 and len(page.with_class("assistant")) == 3
    assert len(page.with_class("tool-call")) == 3
    # tool errors are highlighted: c2 by its JSON error field, c3 by its error event
    assert len([a for a in page.with_class("tool") if "error" in (a["class"] or "").split()]) == 2
    assert "error: upstream 503 <b>" in text
    assert '{\n  "order_id": 42,' in text  # pretty-printed arguments
    assert len(page.with_class("step")) == 2 and len(page.with_class("error")) >= 3
    verdicts = page.with_class("verdict")
    assert len(verdicts) == 9
    results = sorted((v["data-criterion-id"], v["data-result"]) for v in verdicts)
    assert results.count(("tone", "missing")) == 1  # SCRIPT_TRACE has no tone row
    assert "Blocked by:" in text and "<iframe src=javascript:alert(7)>" in text
    assert "Unscored:" in text


def test_page_is_self_contained_and_deterministic(judged: JudgedRun) -> None:
    a, b = _page(judged), _page(judged)
    assert a == b
    assert a.startswith("<!DOCTYPE html>") and a.count("<style>") == 1
    assert "src=" not in a.replace("src=x", "").replace("src=javascript", "")


def test_scorecard_from_another_run_is_refused(judged: JudgedRun) -> None:
    from helix import UsageError

    other = hostile_run()
    other_sc = build_scorecard(other)
    fewer = JudgedRun(
        run_dir=judged.run_dir, traces=judged.traces[:1], matrix=judged.matrix,
        results=tuple(r for r in judged.results if r.trace_id == judged.traces[0].id), unit_axis="criterion",
    )  # fmt: skip
    with pytest.raises(UsageError, match="same JudgedRun"):
        render_report(fewer, other_sc)


def test_write_report_is_atomic_and_exact(judged: JudgedRun, tmp_path: Path) -> None:
    html = _page(judged)
    out = write_report(tmp_path / "nested" / "report.html", html)
    assert out.read_text(encoding="utf-8") == html
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]


def test_trace_anchor_is_stable_and_distinct() -> None:
    assert trace_anchor("a/b") == trace_anchor("a/b")
    assert trace_anchor("a/b") != trace_anchor("a:b")
    assert trace_anchor("t-1").startswith("trace-t-1-")


def test_criterion_without_decided_verdicts_shows_no_rate(judged: JudgedRun) -> None:
    undecided = JudgedRun(
        run_dir=judged.run_dir, traces=judged.traces, matrix=judged.matrix,
        results=tuple(r for r in judged.results if not (r.trace_id == "t-plain" and r.criterion_id == "tone")),
        unit_axis=judged.unit_axis,
    )  # fmt: skip
    page = parse(_page(undecided))
    (tone,) = [r for r in page.with_class("criterion-row") if r["data-criterion-id"] == "tone"]
    assert tone["data-outcome"] == "uncertain"
    assert "no decided verdicts" in page.all_text


_nasty = st.text(
    alphabet=st.sampled_from(list("<>\"'&=/ ;:()`\\ \u2028\u2029\x00ascriptimgonerrorlad!-[]{}")), max_size=40
) | st.sampled_from([XSS_SCRIPT, XSS_IMG, XSS_ATTR, XSS_CLOSE, "<!--", "]]>", "<![CDATA[", "<svg/onload=x>"])


@settings(max_examples=60, deadline=None)
@given(tid=_nasty, user=_nasty, args=_nasty, critique=_nasty.filter(bool), meta=_nasty)
def test_any_content_stays_text(tid: str, user: str, args: str, critique: str, meta: str) -> None:
    trace = Trace(
        id=tid or "x",
        metadata={"shown": meta, "_hidden": SECRET},
        messages=[
            Message(role="user", content=user),
            Message(
                role="assistant",
                content=user,
                tool_calls=[ToolCall(id="c", name=args or "t", arguments={"a": args})],
            ),
            Message(role="tool", tool_call_id="c", content=args),
        ],
    )
    crit = Criterion(
        id="c1", title=args or "t", kind="llm", question="q", pass_definition="p", fail_definition="f"
    )
    verdict = CriterionVerdict(criterion_id="c1", critique=critique, result="fail", confidence=0.5)
    judged = JudgedRun(
        run_dir=meta, traces=(trace,), matrix=CriteriaMatrix(subject=user or "s", criteria=(crit,)),
        results=(TraceCriterionResult(trace_id=trace.id, criterion_id="c1", key="k", verdict=verdict),),
        unit_axis="matrix",
    )  # fmt: skip
    page = parse(_page(judged))
    names = [t for t, _ in page.tags]
    assert set(names) <= EMITTED_TAGS and names.count("script") == 1
    assert not any(k.startswith("on") for _, a in page.tags for k in a)
    assert "alert" not in page.scripts[0] and SECRET not in _page(judged)
    assert critique in page.all_text
    (section,) = page.with_class("trace")
    assert section["data-trace-id"] == trace.id
