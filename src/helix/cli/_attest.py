"""`helix attest FILE` and `helix verify FILE`: content-addressed evidence receipts for reports."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ._common import console, helix_errors

__all__ = ["register"]

EXIT_NOT_VERIFIED = 1


def _attestation_path(file: Path) -> Path:
    return file.with_name(file.name + ".attestation.json")


def _load_report(file: Path) -> Any:
    """A JSON file is attested over its canonical JSON (formatting-independent), anything else as bytes."""
    import orjson

    from .._exceptions import UsageError

    if not file.is_file():
        raise UsageError(f"{file} is not a file; pass the report to attest (JSON or any other file)")
    raw = file.read_bytes()
    if file.suffix.lower() == ".json":
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise UsageError(
                f"{file}: not valid JSON ({exc}); fix the file or rename it to attest raw bytes"
            ) from None
    return raw


def _provenance(arg: str | None) -> dict[str, Any]:
    import orjson

    from .._exceptions import UsageError

    if arg is None:
        return {}
    text = arg
    candidate = Path(arg)
    if not arg.lstrip().startswith("{") and candidate.is_file():
        text = candidate.read_text(encoding="utf-8")
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UsageError(
            f"--provenance {arg!r} is neither a JSON object nor a JSON file ({exc}); "
            'pass e.g. --provenance \'{"seeds": [7], "code_commit": "abc123"}\''
        ) from None
    if not isinstance(value, dict):
        raise UsageError(f"--provenance must be a JSON object, got {value!r}")
    return value


def _recorded_provenance(report: Any) -> dict[str, Any]:
    """The provenance a report records about itself: a campaign's summary.json names its commit,
    seed and served models (the agent's), so attesting it does not need them retyped."""
    if not isinstance(report, dict) or not {"identity", "commit", "seed", "aggregates"} <= report.keys():
        return {}
    found: dict[str, Any] = {}
    if isinstance(report["commit"], str):
        found["code_commit"] = report["commit"]
    if isinstance(report["seed"], int) and not isinstance(report["seed"], bool):
        found["seeds"] = [report["seed"]]
    models = report.get("served_models")
    if isinstance(models, list) and models and all(isinstance(m, str) for m in models):
        found["model_versions"] = (
            {"agent": models[0]} if len(models) == 1 else {f"agent-{i}": m for i, m in enumerate(models, 1)}
        )
    return found


@helix_errors
def attest_cmd(
    file: Annotated[
        Path,
        typer.Argument(help="The report to attest (JSON is canonicalized; other files are hashed as bytes)."),
    ],
    provenance: Annotated[
        str | None,
        typer.Option(
            "--provenance",
            help="Provenance as a JSON object or a JSON file: model_versions, seeds, price_table_hash, "
            "code_commit, inputs_hash, extra. Fields not given come from the report when it records "
            "them (a campaign summary.json: code_commit, seeds, model_versions); price_table_hash "
            "defaults to this Helix's price table and code_commit otherwise to `git rev-parse HEAD` "
            "of the current directory when available.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Where to write the attestation (default FILE.attestation.json)."),
    ] = None,
) -> None:
    """Content-address a report and bind it to its provenance; writes FILE.attestation.json.

    The attestation is a stable, byte-identical payload: sign it with your own tooling if you need to
    (Helix holds no keys). Check it later with `helix verify FILE`.
    """
    from rich.markup import escape

    from .._util import git_commit, write_atomic
    from ..campaign import attest
    from ..models import price_table_hash

    report = _load_report(file)
    prov = {**_recorded_provenance(report), **_provenance(provenance)}
    prov.setdefault("price_table_hash", price_table_hash())
    if "code_commit" not in prov:
        prov["code_commit"] = git_commit()
    attested = attest(report, prov)
    target = out or _attestation_path(file)
    write_atomic(target, attested.model_dump_json(indent=2) + "\n")
    c = console()
    c.print(f"attested {file} ({attested.encoding}, sha256 {attested.report_sha256[:16]}…)")
    shown = attested.provenance
    models = ", ".join(f"{k}={v}" for k, v in shown.model_versions.items()) or "none"
    line = f"provenance: code_commit {shown.code_commit or 'unknown'} · seeds {shown.seeds or 'none'} · models {models}"
    c.print(escape(line))
    c.print(f"attestation: {target}")


@helix_errors
def verify_cmd(
    file: Annotated[Path, typer.Argument(help="The report to check.")],
    attestation: Annotated[
        Path | None,
        typer.Option("--attestation", help="The attestation file (default FILE.attestation.json)."),
    ] = None,
) -> None:
    """Check a report against its attestation. Exit 0 when it verifies, 1 when it does not.

    Prints the outcome (verified, report_mismatch, binding_mismatch, unknown_algorithm, malformed) and
    the expected and actual digests for a mismatch.
    """
    from .._exceptions import UsageError
    from ..campaign import verify_attestation

    att_path = attestation or _attestation_path(file)
    if not att_path.is_file():
        raise UsageError(
            f"no attestation at {att_path}; run `helix attest {file}` first or pass --attestation"
        )
    check = verify_attestation(_load_report(file), att_path.read_bytes())
    c = console()
    from rich.markup import escape

    colour = "green" if check.ok else "red"
    c.print(f"[{colour}]{check.status}[/{colour}]: {escape(check.message)}")
    if not check.ok and check.expected is not None:
        c.print(f"  expected {escape(check.expected)}")
        c.print(f"  actual   {escape(str(check.actual))}")
    if not check.ok:
        raise typer.Exit(EXIT_NOT_VERIFIED)


def register(app: typer.Typer) -> None:
    """Add `attest` and `verify` to the root app."""
    app.command("attest")(attest_cmd)
    app.command("verify")(verify_cmd)
