"""`helix review ...` end to end through the real CLI app."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from helix.cli import app
from helix.review import HumanLabel, LabelStore, write_labels_jsonl

runner = CliRunner()


def test_export_html_writes_one_self_contained_page(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    result = runner.invoke(app, ["review", "export-html", "--run", str(run_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text()
    assert "connect-src &#x27;none&#x27;" in html
    assert 'data-mode="offline"' in html
    assert "http://" not in html and "https://" not in html and " src=" not in html
    again = tmp_path / "again.html"
    runner.invoke(app, ["review", "export-html", "--run", str(run_dir), "--out", str(again)])
    assert again.read_bytes() == out.read_bytes()  # deterministic: no clock, seeded order


def test_import_export_and_agreement(tmp_path: Path) -> None:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    labels = [
        HumanLabel(trace_id=f"t{i}", criterion_id="c", label=lab, annotator=who, created_at=t)  # type: ignore[arg-type]
        for i, (a, b) in enumerate([("pass", "pass"), ("fail", "fail"), ("pass", "fail"), ("fail", "fail")])
        for who, lab in (("ana", a), ("ben", b))
    ]
    src = tmp_path / "in.jsonl"
    write_labels_jsonl(src, labels)
    src.write_text(src.read_text() + "{oops\n")
    db = tmp_path / "labels.sqlite"

    result = runner.invoke(app, ["review", "import", str(src), "--labels", str(db)])
    assert result.exit_code == 1  # a bad line was skipped and reported
    assert "8 label(s) read, 8 added" in result.output
    assert "in.jsonl:9" in result.output
    assert len(LabelStore(db)) == 8

    again = runner.invoke(app, ["review", "import", str(src), "--labels", str(db)])
    assert "0 added, 8 already present" in again.output

    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["review", "export", "--labels", str(db), "--out", str(out), "--latest"])
    assert result.exit_code == 0 and "wrote 8 label(s)" in result.output
    assert len(out.read_text().splitlines()) == 8

    result = runner.invoke(app, ["review", "agreement", "--labels", str(db)])
    # observed 3/4; ana passes 1/2, ben 1/4: expected .5*.25 + .5*.75 = .5; kappa = .5
    assert result.exit_code == 0 and "ana vs ben: kappa=0.500, n=4" in result.output


def test_serve_refuses_a_public_host_with_a_blank_token(run_dir: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "review",
            "serve",
            "--run",
            str(run_dir),
            "--labels",
            str(tmp_path / "l.sqlite"),
            "--host",
            "0.0.0.0",
            "--token",
            " ",
        ],
    )
    assert result.exit_code == 2
    assert "needs an access token" in " ".join(result.output.split())
    assert not (tmp_path / "l.sqlite").exists()


def test_review_help_explains_the_commands() -> None:
    result = runner.invoke(app, ["review", "--help"])
    assert result.exit_code == 0
    for command in ("serve", "export-html", "import", "export", "agreement"):
        assert command in result.output


def test_export_and_agreement_refuse_a_missing_store_instead_of_creating_one(tmp_path: Path) -> None:
    typo = tmp_path / "typo.sqlite"
    result = runner.invoke(
        app, ["review", "export", "--labels", str(typo), "--out", str(tmp_path / "o.jsonl")]
    )
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "does not exist" in text and "typo.sqlite" in text
    assert not typo.exists() and not (tmp_path / "o.jsonl").exists()
    result = runner.invoke(app, ["review", "agreement", "--labels", str(typo)])
    assert result.exit_code == 2 and not typo.exists()


def test_export_html_blind_leaves_verdicts_and_critiques_out(run_dir: Path, tmp_path: Path) -> None:
    seen = tmp_path / "seen.html"
    blind = tmp_path / "blind.html"
    runner.invoke(app, ["review", "export-html", "--run", str(run_dir), "--out", str(seen)])
    result = runner.invoke(
        app, ["review", "export-html", "--run", str(run_dir), "--out", str(blind), "--blind"]
    )
    assert result.exit_code == 0, result.output
    assert "the judge thinks fail" in seen.read_text()  # a critique of the run
    text = blind.read_text()
    start = text.index('id="review-data">')
    data = text[start : text.index("</script>", start)]
    assert "the judge thinks" not in text and '"judge_result"' not in data and '"blind":true' in data
