"""Cost from the price table; unknown models have unknown (None) cost, never zero."""

import pytest

from helix.models import PRICE_TABLE, TokenUsage, cost_usd, is_pinned_model_id, price_table_hash


def test_known_snapshot_cost() -> None:
    usage = TokenUsage(input_tokens=1_000_000, output_tokens=500_000)
    assert cost_usd("gpt-4o-2024-08-06", usage) == pytest.approx(2.50 + 5.00)
    assert cost_usd("anthropic/claude-sonnet-4-5-20250929", usage) == pytest.approx(3.0 + 7.5)


@pytest.mark.parametrize("model", ["qwen2.5:7b-instruct-q4_K_M", "gpt-4o", None, ""])
def test_unknown_model_has_no_cost(model: str | None) -> None:
    assert cost_usd(model, TokenUsage(input_tokens=10, output_tokens=10)) is None


def test_zero_tokens_on_a_known_model_costs_zero() -> None:
    assert cost_usd("gpt-4o-mini-2024-07-18", TokenUsage()) == 0.0


def test_table_holds_only_pinned_snapshots_and_has_a_stable_hash() -> None:
    assert all(is_pinned_model_id(m) for m in PRICE_TABLE)
    assert price_table_hash() == price_table_hash()
    assert len(price_table_hash()) == 20


def test_cached_and_cache_written_tokens_and_the_batch_discount() -> None:
    from helix.models import BATCH_DISCOUNT

    mixed = TokenUsage(
        input_tokens=1_000_000, cached_input_tokens=600_000, cache_write_tokens=100_000, output_tokens=0
    )
    # Anthropic: 300k plain at 3.00, 600k cache reads at 0.30, 100k cache writes at 3.75 (per M tokens)
    assert cost_usd("claude-sonnet-4-5-20250929", mixed) == pytest.approx(0.9 + 0.18 + 0.375)
    # OpenAI prices cache reads (half here) and charges nothing extra to write the cache
    assert cost_usd("gpt-4o-2024-08-06", mixed) == pytest.approx(0.4 * 2.5 + 0.6 * 1.25)
    # a model without a cached price bills cached tokens as plain input
    assert cost_usd("gpt-4o-2024-05-13", mixed) == pytest.approx(5.0)
    plain = TokenUsage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert BATCH_DISCOUNT == 0.5
    assert cost_usd("gpt-4o-2024-08-06", plain, batch=True) == pytest.approx((2.5 + 10.0) / 2)
