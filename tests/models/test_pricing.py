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
