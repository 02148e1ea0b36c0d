"""The review server over real HTTP on loopback: bind refusal, token, host guard, the label API, CSP."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from helix import UsageError
from helix.review import (
    LabelStore,
    ReviewServer,
    check_bind,
    check_token,
    create_review_app,
    generate_token,
    is_loopback,
    load_review_set,
)

STRONG = "k9Vq-2mZt_8LwXr4"


def call(
    url: str, *, body: Any = None, headers: dict[str, str] | None = None, method: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    data = json.dumps(body).encode() if body is not None else None
    all_headers = {"Content-Type": "application/json", "X-Helix-Review": "1"} if data is not None else {}
    all_headers.update(headers or {})
    req = urllib.request.Request(url, data=data, headers=all_headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, dict(exc.headers), exc.read()


def test_non_loopback_host_is_refused_without_a_token(run_dir: Path, tmp_path: Path) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    with pytest.raises(UsageError, match=r"'0\.0\.0\.0' without an access token.*--token"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", STRONG)
    app = create_review_app(run_dir, LabelStore(tmp_path / "l.sqlite"))
    with pytest.raises(UsageError, match="HELIX_REVIEW_TOKEN"):
        ReviewServer(app, host="0.0.0.0")


def test_label_api_round_trip_with_security_headers(run_dir: Path, tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "l.sqlite")
    with ReviewServer(create_review_app(run_dir, store, annotator="ana")) as server:
        status, headers, page = call(server.url)
        assert status == 200
        csp = headers["content-security-policy"]
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "connect-src 'self'" in csp
        assert headers["x-content-type-options"] == "nosniff"
        assert b'<script type="application/json" id="review-data">' in page

        status, _, body = call(
            server.url + "api/labels",
            body={"trace_id": "t2", "criterion_id": "refund_policy", "label": "fail", "note": "late refund"},
        )
        assert status == 200
        stored = json.loads(body)
        assert (stored["annotator"], stored["label"], stored["note"]) == ("ana", "fail", "late refund")
        assert [(x.trace_id, x.label) for x in store.latest()] == [("t2", "fail")]

        status, _, body = call(server.url + "api/labels?annotator=ana")
        assert [x["trace_id"] for x in json.loads(body)] == ["t2"]

        status, _, body = call(
            server.url + "api/undo", body={"trace_id": "t2", "criterion_id": "refund_policy"}
        )
        assert (status, json.loads(body)) == (200, None)
        assert store.latest() == []

        # refused writes: unknown item, bad label, missing CSRF header
        status, _, body = call(
            server.url + "api/labels",
            body={"trace_id": "zz", "criterion_id": "refund_policy", "label": "pass"},
        )
        assert status == 400 and b"not an item of this run" in body
        status, _, body = call(
            server.url + "api/labels",
            body={"trace_id": "t1", "criterion_id": "refund_policy", "label": "maybe"},
        )
        assert status == 400 and b"label" in body
        status, _, _ = call(
            server.url + "api/labels",
            body={"trace_id": "t1", "criterion_id": "refund_policy", "label": "pass"},
            headers={"X-Helix-Review": "0"},
        )
        assert status == 400
        assert store.all() == []

        # DNS-rebinding guard: a foreign Host header is refused
        status, _, _ = call(server.url + "api/health", headers={"Host": "evil.example:80"})
        assert status == 403


def test_token_is_enforced_on_every_request(run_dir: Path, tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "l.sqlite")
    app = create_review_app(run_dir, store, token=STRONG, loopback_only=False)
    with ReviewServer(app, token=STRONG) as server:
        for path in ("", "api/labels", "api/health"):
            assert call(server.url + path)[0] == 401
            assert call(server.url + path, headers={"X-Helix-Token": "wrong"})[0] == 401
        body = {"trace_id": "t1", "criterion_id": "refund_policy", "label": "pass"}
        assert call(server.url + "api/labels", body=body)[0] == 401
        assert store.all() == []
        assert call(server.url + "api/labels", body=body, headers={"X-Helix-Token": STRONG})[0] == 200
        status, headers, _ = call(server.url + f"?token={STRONG}")
        assert status == 200
        cookie = headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie
        assert call(server.url + "api/health", headers={"Cookie": cookie.split(";")[0]})[0] == 200
        assert len(store.all()) == 1


@pytest.mark.parametrize("weak", [" ", "s3cret", "a" * 40, "sixteen chars ok"])
def test_a_weak_token_is_refused_for_a_server_others_can_reach(
    weak: str, run_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(UsageError, match="token"):
        check_bind("0.0.0.0", weak)
    with pytest.raises(UsageError, match="token"):
        create_review_app(run_dir, LabelStore(tmp_path / "l.sqlite"), token=weak, loopback_only=False)
    check_bind("127.0.0.1", weak)  # loopback is guarded by the Host check; a token there is extra
    assert len(generate_token()) >= 16
    check_token(generate_token())


def test_blind_review_sends_a_verdict_only_on_reveal_or_once_labelled(run_dir: Path, tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "l.sqlite")
    with ReviewServer(create_review_app(run_dir, store, annotator="ana")) as server:
        _, _, page = call(server.url)
        data = _page_data(page)
        assert all(
            item.get("hidden") and "critique" not in item and "judge_result" not in item
            for item in data["items"]
        )
        assert b"the judge thinks" not in page
        failed = next(i for i in load_review_set(run_dir).items if i.judge_result == "fail")
        other = next(i for i in load_review_set(run_dir).items if i.trace_id != failed.trace_id)
        query = f"api/verdict?trace_id={failed.trace_id}&criterion_id=refund_policy"
        status, _, body = call(server.url + query)
        assert status == 200 and json.loads(body)["judge_result"] == "fail"
        assert json.loads(body)["critique"] == "the judge thinks fail"
        assert call(server.url + "api/verdict?trace_id=zz&criterion_id=refund_policy")[0] == 400
        label = {"trace_id": failed.trace_id, "criterion_id": "refund_policy", "label": "pass"}
        call(server.url + "api/labels", body=label)
        again = {(i["trace_id"], i["criterion_id"]): i for i in _page_data(call(server.url)[2])["items"]}
        assert (
            again[(failed.trace_id, "refund_policy")]["judge_result"] == "fail"
        )  # labelled: nothing to bias
        assert again[(other.trace_id, "refund_policy")].get("hidden")


def _page_data(page: bytes) -> dict[str, Any]:
    text = page.decode()
    start = text.index('id="review-data">') + len('id="review-data">')
    return dict(json.loads(text[start : text.index("</script>", start)]))


def test_the_cli_generates_a_strong_token_for_a_public_host(run_dir: Path, tmp_path: Path) -> None:
    import os
    import re
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "HELIX_REVIEW_TOKEN"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "helix.cli",
            "review",
            "serve",
            "--run",
            str(run_dir),
            "--labels",
            str(tmp_path / "l.sqlite"),
            "--host",
            "0.0.0.0",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = ""
        for _ in range(20):
            line += proc.stdout.readline()
            if "?token=" in line:
                break
        found = re.search(r"http://[^:]+:(\d+)/\?token=(\S+)", line)
        assert found, line
        port, token = found.group(1), found.group(2)
        check_token(token)
        base = f"http://127.0.0.1:{port}/"
        for _ in range(200):  # the URL is printed just before the server starts listening
            try:
                first = call(base + "api/health")[0]
                break
            except urllib.error.URLError:
                time.sleep(0.05)
        assert first == 401
        assert call(base + "api/health", headers={"X-Helix-Token": token})[0] == 200
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
