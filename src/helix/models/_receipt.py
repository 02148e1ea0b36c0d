"""Call receipts: what one judged unit cost and how its provider calls went, success or failure."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RECEIPT_FORMAT_VERSION", "CallReceipt"]

RECEIPT_FORMAT_VERSION = 1


class CallReceipt(BaseModel):
    """The content of ``receipts/<key>.json``: one per judged unit, written even when it failed.

    A unit may take more than one model call (a reply that did not parse is asked again once);
    ``calls`` counts them and ``attempts`` counts every HTTP attempt across them, retries included.
    ``cost_usd`` is None when the served model has no price (unknown, not free).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = RECEIPT_FORMAT_VERSION
    key: str
    provider: str
    requested_model: str
    served_model: str | None = None
    calls: int = Field(default=0, ge=0)
    attempts: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = None
    price_table_hash: str | None = None
    latency_s: float = Field(default=0.0, ge=0.0)
    """Summed latency of the successful model calls."""
    started_at: datetime
    ended_at: datetime
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
