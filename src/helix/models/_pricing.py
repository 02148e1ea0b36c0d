"""What a call cost: a small price table of dated snapshots (USD per million tokens).

Prices are the providers' published list prices; ``PRICE_TABLE_AS_OF`` says when they were copied.
Each entry has the standard input and output price and, where the provider prices it, the price of
an input token read from the prompt cache (OpenAI: half or a quarter of the input price, by model;
Anthropic: a tenth) and of one written to it (Anthropic: 1.25 times the input price, for the
default five-minute cache; OpenAI charges nothing extra). The Batch APIs of both providers bill
every token at :data:`BATCH_DISCOUNT` of these prices.

A model that is not in the table has an *unknown* cost (None), never zero: a local server's model is
free to run but not free to trust as a number, and a missing price must not look like a cheap run.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._util import content_hash
from ._protocol import TokenUsage

__all__ = ["BATCH_DISCOUNT", "PRICE_TABLE", "PRICE_TABLE_AS_OF", "Price", "cost_usd", "price_table_hash"]

PRICE_TABLE_AS_OF = "2025-10-15"


@dataclass(frozen=True, kw_only=True)
class Price:
    """USD per one million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None
    """An input token read from the prompt cache; None: billed as a standard input token."""
    cache_write_per_mtok: float | None = None
    """An input token written to the prompt cache; None: billed as a standard input token."""


BATCH_DISCOUNT = 0.5
"""Share of the list price the OpenAI Batch API and Anthropic Message Batches bill (half price)."""


def _openai(input_: float, output: float, cached: float | None) -> Price:
    return Price(input_per_mtok=input_, output_per_mtok=output, cached_input_per_mtok=cached)


def _anthropic(input_: float, output: float) -> Price:
    return Price(
        input_per_mtok=input_,
        output_per_mtok=output,
        cached_input_per_mtok=round(input_ * 0.1, 6),
        cache_write_per_mtok=round(input_ * 1.25, 6),
    )


PRICE_TABLE: dict[str, Price] = {
    # OpenAI (cached input as published; gpt-4o-2024-05-13 has no cached-input price)
    "gpt-4o-2024-05-13": _openai(5.00, 15.00, None),
    "gpt-4o-2024-08-06": _openai(2.50, 10.00, 1.25),
    "gpt-4o-2024-11-20": _openai(2.50, 10.00, 1.25),
    "gpt-4o-mini-2024-07-18": _openai(0.15, 0.60, 0.075),
    "gpt-4.1-2025-04-14": _openai(2.00, 8.00, 0.50),
    "gpt-4.1-mini-2025-04-14": _openai(0.40, 1.60, 0.10),
    "gpt-4.1-nano-2025-04-14": _openai(0.10, 0.40, 0.025),
    "o3-mini-2025-01-31": _openai(1.10, 4.40, 0.55),
    # Anthropic (cache reads 0.1x, five-minute cache writes 1.25x the input price)
    "claude-3-5-haiku-20241022": _anthropic(0.80, 4.00),
    "claude-3-5-sonnet-20241022": _anthropic(3.00, 15.00),
    "claude-3-7-sonnet-20250219": _anthropic(3.00, 15.00),
    "claude-sonnet-4-20250514": _anthropic(3.00, 15.00),
    "claude-opus-4-20250514": _anthropic(15.00, 75.00),
    "claude-opus-4-1-20250805": _anthropic(15.00, 75.00),
    "claude-sonnet-4-5-20250929": _anthropic(3.00, 15.00),
    "claude-haiku-4-5-20251001": _anthropic(1.00, 5.00),
}


def _lookup(model: str) -> Price | None:
    price = PRICE_TABLE.get(model)
    if price is None:
        provider, sep, rest = model.partition("/")
        if sep and provider in ("openai", "anthropic"):
            price = PRICE_TABLE.get(rest)
    return price


def cost_usd(model: str | None, usage: TokenUsage, *, batch: bool = False) -> float | None:
    """USD cost of ``usage`` on ``model`` (a bare id or ``provider/id``); None when unknown.

    Cached and cache-written input tokens are priced as the table says; ``batch`` applies the
    Batch API discount.
    """
    if not model:
        return None
    price = _lookup(model)
    if price is None:
        return None
    cached = usage.cached_input_tokens
    written = usage.cache_write_tokens
    plain = max(0, usage.input_tokens - cached - written)
    cached_price = (
        price.input_per_mtok if price.cached_input_per_mtok is None else price.cached_input_per_mtok
    )
    write_price = price.input_per_mtok if price.cache_write_per_mtok is None else price.cache_write_per_mtok
    total = (
        plain * price.input_per_mtok
        + cached * cached_price
        + written * write_price
        + usage.output_tokens * price.output_per_mtok
    ) / 1e6
    return total * BATCH_DISCOUNT if batch else total


def price_table_hash() -> str:
    """Content hash of the price table, recorded in receipts so a cost can be traced to its prices."""
    return content_hash(
        {
            "as_of": PRICE_TABLE_AS_OF,
            "batch_discount": BATCH_DISCOUNT,
            "prices": {
                k: [p.input_per_mtok, p.output_per_mtok, p.cached_input_per_mtok, p.cache_write_per_mtok]
                for k, p in PRICE_TABLE.items()
            },
        }
    )
