"""What a call cost: a small price table of dated snapshots (USD per million tokens).

Prices are list prices for standard (non-batch, non-cached) tokens as published by the providers;
``PRICE_TABLE_AS_OF`` says when they were copied. A model that is not in the table has an
*unknown* cost (None), never zero: a local server's model is free to run but not free to trust as
a number, and a missing price must not look like a cheap run.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._util import content_hash
from ._protocol import TokenUsage

__all__ = ["PRICE_TABLE", "PRICE_TABLE_AS_OF", "Price", "cost_usd", "price_table_hash"]

PRICE_TABLE_AS_OF = "2025-10-15"


@dataclass(frozen=True, kw_only=True)
class Price:
    """USD per one million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float


PRICE_TABLE: dict[str, Price] = {
    # OpenAI
    "gpt-4o-2024-05-13": Price(input_per_mtok=5.00, output_per_mtok=15.00),
    "gpt-4o-2024-08-06": Price(input_per_mtok=2.50, output_per_mtok=10.00),
    "gpt-4o-2024-11-20": Price(input_per_mtok=2.50, output_per_mtok=10.00),
    "gpt-4o-mini-2024-07-18": Price(input_per_mtok=0.15, output_per_mtok=0.60),
    "gpt-4.1-2025-04-14": Price(input_per_mtok=2.00, output_per_mtok=8.00),
    "gpt-4.1-mini-2025-04-14": Price(input_per_mtok=0.40, output_per_mtok=1.60),
    "gpt-4.1-nano-2025-04-14": Price(input_per_mtok=0.10, output_per_mtok=0.40),
    "o3-mini-2025-01-31": Price(input_per_mtok=1.10, output_per_mtok=4.40),
    # Anthropic
    "claude-3-5-haiku-20241022": Price(input_per_mtok=0.80, output_per_mtok=4.00),
    "claude-3-5-sonnet-20241022": Price(input_per_mtok=3.00, output_per_mtok=15.00),
    "claude-3-7-sonnet-20250219": Price(input_per_mtok=3.00, output_per_mtok=15.00),
    "claude-sonnet-4-20250514": Price(input_per_mtok=3.00, output_per_mtok=15.00),
    "claude-opus-4-20250514": Price(input_per_mtok=15.00, output_per_mtok=75.00),
    "claude-opus-4-1-20250805": Price(input_per_mtok=15.00, output_per_mtok=75.00),
    "claude-sonnet-4-5-20250929": Price(input_per_mtok=3.00, output_per_mtok=15.00),
    "claude-haiku-4-5-20251001": Price(input_per_mtok=1.00, output_per_mtok=5.00),
}


def _lookup(model: str) -> Price | None:
    price = PRICE_TABLE.get(model)
    if price is None:
        provider, sep, rest = model.partition("/")
        if sep and provider in ("openai", "anthropic"):
            price = PRICE_TABLE.get(rest)
    return price


def cost_usd(model: str | None, usage: TokenUsage) -> float | None:
    """USD cost of ``usage`` on ``model`` (a bare id or ``provider/id``); None when unknown."""
    if not model:
        return None
    price = _lookup(model)
    if price is None:
        return None
    return (usage.input_tokens * price.input_per_mtok + usage.output_tokens * price.output_per_mtok) / 1e6


def price_table_hash() -> str:
    """Content hash of the price table, recorded in receipts so a cost can be traced to its prices."""
    return content_hash(
        {
            "as_of": PRICE_TABLE_AS_OF,
            "prices": {k: [p.input_per_mtok, p.output_per_mtok] for k, p in PRICE_TABLE.items()},
        }
    )
