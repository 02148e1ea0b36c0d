"""Attestation: round trip, tamper detection on report and provenance, unknown algorithm, CLI."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from helix.campaign import (
    AttestedReport,
    Provenance,
    attest,
    verify_attestation,
)
from helix.cli import app
from helix.models import price_table_hash
from helix.stats import summarize_number_series

PROV = Provenance(
    model_versions={"judge": "gpt-4o-2024-08-06"},
    seeds=[7, 8],
    price_table_hash=price_table_hash(),
    code_commit="0123abcd",
    inputs_hash="feedbeef",
)
REPORT = {"by_scorer": {"gold": {"mean": 0.5, "n": 4}}, "cells": [1, 2, 3]}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


def test_round_trip_verifies_and_serialized_attestation_still_verifies() -> None:
    att = attest(REPORT, PROV)
    assert att.algorithm == "helix-attest-sha256-v1"
    assert att.encoding == "canonical-json"
    check = verify_attestation(REPORT, att)
    assert check.ok and check.status == "verified"
    # through its JSON file form and back, with the report's keys in another order
    raw = att.model_dump_json()
    reordered = {"cells": [1, 2, 3], "by_scorer": {"gold": {"n": 4, "mean": 0.5}}}
    assert verify_attestation(reordered, raw).ok
    assert verify_attestation(reordered, json.loads(raw)).ok
    # byte-stable payload to sign
    assert attest(reordered, PROV).signing_payload() == att.signing_payload()


def test_pydantic_reports_and_raw_bytes_are_attestable() -> None:
    dist = summarize_number_series([0.0, 0.5, 1.0])
    assert dist is not None
    att = attest(dist, PROV)
    assert verify_attestation(dist.model_dump(mode="json"), att).ok
    html = b"<html><body>report</body></html>"
    att_b = attest(html)
    assert att_b.encoding == "raw-bytes"
    assert verify_attestation(html, att_b).ok
    assert verify_attestation(html + b" ", att_b).status == "report_mismatch"


def test_tampered_report_is_a_typed_mismatch_not_an_exception() -> None:
    att = attest(REPORT, PROV)
    changed = {**REPORT, "cells": [1, 2, 4]}
    check = verify_attestation(changed, att)
    assert not check.ok
    assert check.status == "report_mismatch"
    assert check.expected and check.actual and check.expected != check.actual


def test_tampered_provenance_breaks_the_binding() -> None:
    att = attest(REPORT, PROV)
    forged = att.model_copy(update={"provenance": PROV.model_copy(update={"code_commit": "evil"})})
    check = verify_attestation(REPORT, forged)
    assert check.status == "binding_mismatch"
    raw = json.loads(att.model_dump_json())
    raw["provenance"]["seeds"] = [7, 9]
    assert verify_attestation(REPORT, raw).status == "binding_mismatch"


def test_unknown_algorithm_is_rejected_and_garbage_is_malformed() -> None:
    raw = json.loads(attest(REPORT, PROV).model_dump_json())
    raw["algorithm"] = "md5-please"
    check = verify_attestation(REPORT, raw)
    assert check.status == "unknown_algorithm"
    assert "md5-please" in check.message
    model = AttestedReport.model_validate(raw)
    assert verify_attestation(REPORT, model).status == "unknown_algorithm"
    assert verify_attestation(REPORT, {"hello": 1}).status == "malformed"
    assert verify_attestation(REPORT, b"not json").status == "malformed"


@given(json_values, json_values)
def test_attestation_verifies_exactly_its_own_report(a: object, b: object) -> None:
    att = attest(a, PROV)
    assert verify_attestation(a, att).ok
    assert verify_attestation(b, att).ok == (attest(b, PROV).report_sha256 == att.report_sha256)


def test_cli_attest_then_verify_then_tamper(tmp_path: Path) -> None:
    runner = CliRunner()
    report = tmp_path / "result.json"
    report.write_text(json.dumps(REPORT, indent=2))
    prov = json.dumps({"seeds": [3], "code_commit": "abc123"})
    res = runner.invoke(app, ["attest", str(report), "--provenance", prov])
    assert res.exit_code == 0, res.output
    att_path = tmp_path / "result.json.attestation.json"
    att = AttestedReport.model_validate_json(att_path.read_bytes())
    assert att.provenance.seeds == [3] and att.provenance.code_commit == "abc123"
    assert att.provenance.price_table_hash == price_table_hash()

    ok = runner.invoke(app, ["verify", str(report)])
    assert ok.exit_code == 0, ok.output
    assert "verified" in ok.output

    report.write_text(json.dumps({**REPORT, "cells": []}))
    bad = runner.invoke(app, ["verify", str(report)])
    assert bad.exit_code == 1
    assert "report_mismatch" in bad.output

    bad_prov = runner.invoke(app, ["attest", str(report), "--provenance", '{"seed": 1}'])
    assert bad_prov.exit_code == 2


def test_cli_attest_of_a_campaign_summary_records_its_provenance(tmp_path: Path) -> None:
    from helix.examples import campaign_config_path

    config = tmp_path / "campaign.yaml"
    config.write_text(
        campaign_config_path()
        .read_text()
        .replace("reps: 3", "reps: 1")
        .replace("seed: 7", "seed: 11")
        .replace("runs/support-shop", str(tmp_path / "run"))
    )
    runner = CliRunner()
    assert runner.invoke(app, ["campaign", "run", str(config), "--no-report"]).exit_code == 0
    summary = tmp_path / "run" / "summary.json"
    res = runner.invoke(app, ["attest", str(summary)])
    assert res.exit_code == 0, res.output
    att = AttestedReport.model_validate_json(
        (tmp_path / "run" / "summary.json.attestation.json").read_bytes()
    )
    assert att.provenance.seeds == [11]
    assert att.provenance.code_commit == "helix-examples-support-shop-v1"
    assert att.provenance.model_versions == {"agent": "helix-examples/scripted-support-agent"}
    assert "seeds [11]" in res.output
    # what --provenance says wins over what the summary records
    res = runner.invoke(app, ["attest", str(summary), "--provenance", '{"code_commit": "abc"}'])
    att = AttestedReport.model_validate_json(
        (tmp_path / "run" / "summary.json.attestation.json").read_bytes()
    )
    assert att.provenance.code_commit == "abc" and att.provenance.seeds == [11]
