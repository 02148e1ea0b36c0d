"""Evidence receipts: content-address a report and bind that address to the provenance behind it.

``attest(report, provenance)`` hashes the report's canonical bytes and then hashes that digest together
with the provenance (model versions, seeds, price-table hash, code commit, inputs hash), so changing
either the report or any provenance field breaks the attestation. ``verify_attestation`` never raises
for a mismatch: it returns an :class:`AttestationCheck` saying what failed, so a pipeline can record
why a report did not verify. Signing is the consumer's business: :meth:`AttestedReport.signing_payload`
is a stable byte string to sign, and Helix holds no keys.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._exceptions import UsageError
from .._util import canonical_json

__all__ = [
    "ATTESTATION_ALGORITHM",
    "AttestationCheck",
    "AttestationStatus",
    "AttestedReport",
    "Provenance",
    "ReportEncoding",
    "attest",
    "report_digest",
    "verify_attestation",
]

ATTESTATION_ALGORITHM = "helix-attest-sha256-v1"
"""The hash scheme every attestation carries: SHA-256 over canonical JSON (sorted keys, no spaces),
or over the raw bytes for a non-JSON report; the binding hashes ``{algorithm, report, provenance}``."""

ATTESTATION_VERSION = 1

ReportEncoding = Literal["canonical-json", "raw-bytes"]
AttestationStatus = Literal[
    "verified", "report_mismatch", "binding_mismatch", "unknown_algorithm", "malformed"
]


class Provenance(BaseModel):
    """What is needed to reproduce a report. Every field is part of the attestation's binding."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_versions: dict[str, str] = Field(default_factory=dict)
    """Role or alias → resolved model snapshot, e.g. ``{"judge": "gpt-4o-2024-08-06"}``."""
    seeds: list[int] = Field(default_factory=list)
    price_table_hash: str | None = None
    """``helix.models.price_table_hash()`` when the report contains costs."""
    code_commit: str | None = None
    inputs_hash: str | None = None
    """A content hash of the inputs (traces, scenarios, config) the report was computed from."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Anything else the producer wants bound (JSON values)."""


class AttestedReport(BaseModel):
    """A report's content address bound to its provenance (the file ``helix attest`` writes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = ATTESTATION_VERSION
    algorithm: str
    """The scheme tag; a verifier rejects any value other than the one it implements."""
    encoding: ReportEncoding
    report_sha256: str
    provenance: Provenance
    binding_sha256: str
    """SHA-256 over the canonical JSON of ``{algorithm, encoding, report_sha256, provenance}``."""

    def signing_payload(self) -> bytes:
        """The stable bytes to sign: the canonical JSON of this attestation."""
        return canonical_json(self.model_dump(mode="json"))


@dataclass(frozen=True, kw_only=True)
class AttestationCheck:
    """The outcome of :func:`verify_attestation` (never an exception for a mismatch)."""

    status: AttestationStatus
    message: str
    expected: str | None = None
    """The digest the attestation claims (for a mismatch)."""
    actual: str | None = None
    """The digest recomputed now (for a mismatch)."""

    @property
    def ok(self) -> bool:
        """True only when the report and the binding both verify."""
        return self.status == "verified"


def _as_json_value(report: Any) -> Any:
    if isinstance(report, BaseModel):
        return report.model_dump(mode="json")
    return report


def report_digest(report: Any) -> tuple[ReportEncoding, str]:
    """The encoding and SHA-256 hex digest of ``report``.

    ``bytes`` are hashed as they are (``raw-bytes``); anything else (a pydantic model, dicts, lists,
    strings, numbers) is hashed over its canonical JSON, so key order and whitespace do not matter.
    """
    if isinstance(report, bytes | bytearray | memoryview):
        return "raw-bytes", hashlib.sha256(bytes(report)).hexdigest()
    try:
        data = canonical_json(_as_json_value(report))
    except TypeError as exc:
        raise UsageError(
            f"cannot attest a {type(report).__name__}: it is not JSON-serializable ({exc}); "
            "pass a pydantic model, JSON values (dict/list/str/number) or raw bytes"
        ) from None
    return "canonical-json", hashlib.sha256(data).hexdigest()


def _binding(algorithm: str, encoding: str, digest: str, provenance: Provenance) -> str:
    body = {
        "algorithm": algorithm,
        "encoding": encoding,
        "report_sha256": digest,
        "provenance": provenance.model_dump(mode="json"),
    }
    return hashlib.sha256(canonical_json(body)).hexdigest()


def attest(report: Any, provenance: Provenance | dict[str, Any] | None = None) -> AttestedReport:
    """Content-address ``report`` and bind the address to ``provenance``."""
    if provenance is None:
        prov = Provenance()
    elif isinstance(provenance, Provenance):
        prov = provenance
    else:
        try:
            prov = Provenance.model_validate(provenance)
        except ValidationError as exc:
            raise UsageError(
                f"invalid provenance {provenance!r}: {exc.errors()[0]['msg']} at "
                f"{'.'.join(str(p) for p in exc.errors()[0]['loc'])}; allowed fields: "
                f"{', '.join(Provenance.model_fields)}"
            ) from None
    encoding, digest = report_digest(report)
    return AttestedReport(
        algorithm=ATTESTATION_ALGORITHM,
        encoding=encoding,
        report_sha256=digest,
        provenance=prov,
        binding_sha256=_binding(ATTESTATION_ALGORITHM, encoding, digest, prov),
    )


def verify_attestation(
    report: Any, attested: AttestedReport | dict[str, Any] | bytes | str
) -> AttestationCheck:
    """Check ``report`` against an attestation (a model, its JSON, or parsed JSON); never raises on mismatch."""
    if not isinstance(attested, AttestedReport):
        algorithm = _peek_algorithm(attested)
        if algorithm is not None and algorithm != ATTESTATION_ALGORITHM:
            return _unknown(algorithm)
        try:
            if isinstance(attested, bytes | str):
                attested = AttestedReport.model_validate_json(attested)
            else:
                attested = AttestedReport.model_validate(attested)
        except ValidationError as exc:
            first = exc.errors()[0]
            return AttestationCheck(
                status="malformed",
                message=f"not an attestation: {first['msg']} at "
                f"{'.'.join(str(p) for p in first['loc']) or '<root>'}",
            )
    if attested.algorithm != ATTESTATION_ALGORITHM:
        return _unknown(attested.algorithm)
    try:
        encoding, digest = report_digest(report)
    except UsageError as exc:
        return AttestationCheck(status="malformed", message=str(exc))
    if encoding != attested.encoding or digest != attested.report_sha256:
        return AttestationCheck(
            status="report_mismatch",
            message="the report's content does not match the attested digest (it was changed)",
            expected=f"{attested.encoding}:{attested.report_sha256}",
            actual=f"{encoding}:{digest}",
        )
    binding = _binding(attested.algorithm, attested.encoding, attested.report_sha256, attested.provenance)
    if binding != attested.binding_sha256:
        return AttestationCheck(
            status="binding_mismatch",
            message="the provenance or digest fields of the attestation were changed after attesting",
            expected=attested.binding_sha256,
            actual=binding,
        )
    return AttestationCheck(status="verified", message="report and provenance verify", actual=digest)


def _peek_algorithm(raw: dict[str, Any] | bytes | str) -> str | None:
    if isinstance(raw, dict):
        value = raw.get("algorithm")
    else:
        import orjson

        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        value = parsed.get("algorithm") if isinstance(parsed, dict) else None
    return value if isinstance(value, str) else None


def _unknown(algorithm: str) -> AttestationCheck:
    return AttestationCheck(
        status="unknown_algorithm",
        message=f"unknown attestation algorithm {algorithm!r}; this verifier implements only "
        f"{ATTESTATION_ALGORITHM!r} (re-attest the report with this Helix version)",
        expected=ATTESTATION_ALGORITHM,
        actual=algorithm,
    )
