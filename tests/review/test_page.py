"""The review page's HTML: data block escaping, CSP, and escaped transcripts (the browser tests run it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from helix.review import json_for_script, load_review_set, render_review_page, review_csp

from .conftest import XSS_IMG, XSS_SCRIPT


@settings(max_examples=60)
@given(
    st.recursive(st.text() | st.integers() | st.none(), lambda c: st.lists(c) | st.dictionaries(st.text(), c))
)
def test_json_for_script_cannot_break_out_and_round_trips(value: object) -> None:
    text = json_for_script(value)
    for forbidden in ("<", ">", "&", "\u2028", "\u2029"):
        assert forbidden not in text
    assert json.loads(text) == value


def test_csp_forbids_inline_handlers_eval_and_remote_loads() -> None:
    for mode in ("server", "offline"):
        csp = review_csp(mode)  # type: ignore[arg-type]
        assert "default-src 'none'" in csp and "img-src 'none'" in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "http" not in csp
        assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'", csp)


def test_page_escapes_hostile_content_and_embeds_data_once(hostile_run_dir: Path) -> None:
    review = load_review_set(hostile_run_dir)
    html = render_review_page(review, mode="offline", annotator="a")
    assert XSS_SCRIPT not in html and XSS_IMG not in html
    assert "<img" not in html
    assert html.count("<script") == 2  # the JSON data block and the page script, nothing else
    assert "innerHTML" not in html and "eval(" not in html
    data = re.search(r'<script type="application/json" id="review-data">(.*?)</script>', html, re.S)
    assert data is not None
    parsed = json.loads(data.group(1))
    assert parsed["mode"] == "offline" and len(parsed["items"]) == 4
    assert any("</script><script>window.__pwned = 3</script>" in i["critique"] for i in parsed["items"])
