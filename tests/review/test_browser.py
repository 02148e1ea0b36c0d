"""The review page in headless Chromium: keyboard labeling, persistence across reloads, two pages at
once, and hostile trace content that must render as text and run nothing.

Uses Debian's ``chromium`` (``playwright install`` cannot download here) through Playwright's Python
client. Skipped, with the reason, when no chromium binary is found.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from helix.review import LabelStore, ReviewServer, create_review_app, write_review_html

from .conftest import HOSTILE_ID, XSS_IMG, XSS_SCRIPT

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 10_000


def _chromium() -> str | None:
    for candidate in (os.environ.get("HELIX_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = _chromium()
    if executable is None:
        pytest.skip("no chromium binary found (install Debian's `chromium`, or set HELIX_CHROMIUM)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=executable, args=LAUNCH_ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


class Watch:
    """Everything a page did that trace content must never cause."""

    def __init__(self, page: Page) -> None:
        self.dialogs: list[str] = []
        self.console: list[str] = []
        self.errors: list[str] = []
        page.on("dialog", self._dialog)
        page.on("console", lambda msg: self.console.append(f"{msg.type}: {msg.text}"))
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


def _open(browser: Browser, url: str) -> tuple[Page, Watch]:
    page = browser.new_context().new_page()
    page.set_default_timeout(TIMEOUT_MS)
    watch = Watch(page)
    page.goto(url)
    page.wait_for_selector("body[data-ready='true']", state="attached")
    return page, watch


def _current(page: Page) -> str:
    return str(page.get_attribute("#item", "data-trace-id"))


def _label_three(page: Page, keys: str = "pfd") -> dict[str, str]:
    """Press a label key on three successive items; returns trace id -> label."""
    names = {"p": "pass", "f": "fail", "d": "defer"}
    done: dict[str, str] = {}
    for key in keys:
        trace_id = _current(page)
        page.keyboard.press(key)
        done[trace_id] = names[key]
    return done


def _wait_saved(page: Page) -> None:
    # (wait_for_function would evaluate a string, which the page's CSP rightly forbids)
    page.wait_for_selector("#save-status[data-pending='0']:text-is('saved')")


def _labels_on_page(page: Page, count: int) -> dict[str, str]:
    """Walk the queue from its start and read the shown label of each item."""
    seen: dict[str, str] = {}
    for _ in range(count + 2):
        page.keyboard.press("k")
    for _ in range(count):
        value = page.get_attribute("#human-label", "data-label")
        if value:
            seen[_current(page)] = str(value)
        page.keyboard.press("j")
    return seen


@pytest.fixture
def server(run_dir: Path, tmp_path: Path) -> Iterator[tuple[str, LabelStore]]:
    store = LabelStore(tmp_path / "labels.sqlite")
    app = create_review_app(run_dir, store, annotator="ana")
    with ReviewServer(app) as running:
        yield running.url, store


def test_server_mode_keyboard_labels_persist_in_sqlite_across_reload(
    browser: Browser, server: tuple[str, LabelStore]
) -> None:
    url, store = server
    page, watch = _open(browser, url)
    assert page.is_hidden("#judge-panel"), "the judge's verdict must start hidden (blind labeling)"
    labeled = _label_three(page)
    _wait_saved(page)
    assert {x.trace_id: x.label for x in store.latest()} == labeled
    assert {x.annotator for x in store.latest()} == {"ana"}

    # a fourth label, then undo: the store drops it again
    fourth = _current(page)
    page.keyboard.press("p")
    _wait_saved(page)
    assert len(store.latest()) == 4
    page.keyboard.press("u")
    _wait_saved(page)
    assert fourth not in {x.trace_id for x in store.latest()}

    page.reload()
    page.wait_for_selector("body[data-ready='true']", state="attached")
    assert page.get_attribute("#progress", "data-labeled") == "3"
    assert _labels_on_page(page, 4) == labeled
    assert page.get_attribute("#human-label", "data-label") == ""  # the unlabelled fourth item
    assert page.text_content("#judge-critique") == ""  # blind in the page's data, not only on screen
    page.keyboard.press("v")
    page.wait_for_selector("#judge-panel:not([hidden])")
    assert page.is_visible("#judge-panel")
    assert page.text_content("#judge-result") in ("pass", "fail", "uncertain", "no verdict", "unscored")
    assert not watch.dialogs and not watch.errors


def test_offline_page_persists_in_local_storage_and_exports_importable_jsonl(
    browser: Browser, run_dir: Path, tmp_path: Path
) -> None:
    page_path = write_review_html(run_dir, tmp_path / "review.html", annotator="olga")
    page, watch = _open(browser, page_path.as_uri())
    labeled = _label_three(page, "fpp")
    page.reload()
    page.wait_for_selector("body[data-ready='true']", state="attached")
    assert page.get_attribute("#progress", "data-labeled") == "3"
    assert _labels_on_page(page, 4) == labeled

    with page.expect_download() as info:
        page.click("#export")
    exported = tmp_path / "exported.jsonl"
    info.value.save_as(exported)
    store = LabelStore(tmp_path / "labels.sqlite")
    summary = store.import_jsonl(exported)
    assert (summary.added, summary.bad_lines) == (3, ())
    assert {x.trace_id: x.label for x in store.latest()} == labeled
    assert {x.annotator for x in store.latest()} == {"olga"}
    assert store.import_jsonl(exported).added == 0
    assert not watch.dialogs and not watch.errors


def test_two_annotators_labeling_at_once_lose_nothing(
    browser: Browser, server: tuple[str, LabelStore]
) -> None:
    url, store = server
    page_a, _ = _open(browser, url + "?annotator=alice")
    page_b, _ = _open(browser, url + "?annotator=bob")
    a: dict[str, str] = {}
    b: dict[str, str] = {}
    for key_a, key_b in zip("pfp", "ffp", strict=True):
        a.update(_label_three(page_a, key_a))
        b.update(_label_three(page_b, key_b))
    _wait_saved(page_a)
    _wait_saved(page_b)
    got = store.latest()
    assert {x.trace_id: x.label for x in got if x.annotator == "alice"} == a
    assert {x.trace_id: x.label for x in got if x.annotator == "bob"} == b


def test_two_pages_of_one_annotator_on_different_items_lose_nothing(
    browser: Browser, server: tuple[str, LabelStore]
) -> None:
    url, store = server
    page_a, _ = _open(browser, url)
    page_b, _ = _open(browser, url)
    page_b.keyboard.press("j")
    page_b.keyboard.press("j")
    first = _label_three(page_a, "p")
    second = _label_three(page_b, "f")
    first.update(_label_three(page_a, "f"))
    second.update(_label_three(page_b, "p"))
    _wait_saved(page_a)
    _wait_saved(page_b)
    assert first.keys().isdisjoint(second.keys())
    assert {x.trace_id: x.label for x in store.latest()} == first | second


def _check_inert(page: Page, watch: Watch) -> None:
    for _ in range(6):
        if _current(page) == HOSTILE_ID:
            break
        page.keyboard.press("j")
    assert _current(page) == HOSTILE_ID
    assert page.text_content("#item-trace") == HOSTILE_ID
    pane = page.locator("section.trace-pane:not([hidden])")
    text = pane.inner_text()
    assert XSS_SCRIPT in text
    assert XSS_IMG in text
    assert pane.locator("img, script").count() == 0
    assert page.locator("img").count() == 0
    # the other panes carry a critique that tries to close the data block: it stays text too
    for _ in range(6):
        page.keyboard.press("k")
    page.keyboard.press("v")
    page.wait_for_selector("#judge-panel:not([hidden])")
    critique = str(page.text_content("#judge-critique"))
    assert "</script><script>window.__pwned = 3</script>" in critique
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("typeof window.alert") == "function"
    assert watch.dialogs == []
    assert watch.errors == []
    assert not [m for m in watch.console if "pwned" in m or "Refused to execute" in m], watch.console


def test_hostile_trace_content_renders_as_text_and_runs_nothing_server(
    browser: Browser, hostile_run_dir: Path, tmp_path: Path
) -> None:
    store = LabelStore(tmp_path / "labels.sqlite")
    with ReviewServer(create_review_app(hostile_run_dir, store)) as running:
        page, watch = _open(browser, running.url)
        _check_inert(page, watch)


def test_hostile_trace_content_renders_as_text_and_runs_nothing_offline(
    browser: Browser, hostile_run_dir: Path, tmp_path: Path
) -> None:
    page_path = write_review_html(hostile_run_dir, tmp_path / "review.html")
    page, watch = _open(browser, page_path.as_uri())
    _check_inert(page, watch)


def test_offline_two_tabs_share_local_storage_without_losing_labels_and_undo_works(
    browser: Browser, run_dir: Path, tmp_path: Path
) -> None:
    url = write_review_html(run_dir, tmp_path / "review.html", annotator="olga").as_uri()
    context = browser.new_context()
    try:
        tabs = []
        for _ in range(2):
            tab = context.new_page()
            tab.set_default_timeout(TIMEOUT_MS)
            tab.goto(url)
            tab.wait_for_selector("body[data-ready='true']", state="attached")
            tabs.append(tab)
        a, b = tabs
        b.keyboard.press("j")
        b.keyboard.press("j")
        first = _label_three(a, "pf")
        second = _label_three(b, "dp")
        assert first.keys().isdisjoint(second.keys())
        # tab a now stands on an item tab b labeled: relabel it, then undo: b's label survives
        overlap = _current(a)
        assert second[overlap] == "defer"
        a.keyboard.press("f")
        a.keyboard.press("u")
        assert _current(a) == overlap
        # the undo restores tab b's label; the page repaints asynchronously, so wait for it
        a.wait_for_selector('#human-label[data-label="defer"]', state="attached")
        a.reload()
        a.wait_for_selector("body[data-ready='true']", state="attached")
        assert a.get_attribute("#progress", "data-labeled") == "4"
        assert _labels_on_page(a, 4) == first | second
    finally:
        context.close()
