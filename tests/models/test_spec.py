"""The pinning rule and reference parsing of parse_model_spec."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helix import UsageError
from helix.models import ModelSpec, is_pinned_model_id, parse_model_spec


@pytest.mark.parametrize(
    "model_id",
    [
        "gpt-4o-2024-08-06",
        "claude-sonnet-4-5-20250929",
        "gpt-4-0613",
        "gpt-3.5-turbo-0125",
        "qwen2.5:7b-instruct-q4_K_M",
        "llama3@sha256:0123abcd",
        "meta-llama/Llama-3.1-8B-Instruct@v1.2",
    ],
)
def test_dated_or_tagged_ids_are_pinned(model_id: str) -> None:
    assert is_pinned_model_id(model_id)


@pytest.mark.parametrize(
    "model_id",
    [
        "gpt-4o",
        "gpt-4o-mini",
        "claude-sonnet-4-5",
        "claude-3-5-sonnet-latest",
        "llama3:latest",
        "llama3:",
        "model-2024-13-40",  # not a calendar date
        "model-99999999",
        "gpt-4-1345",  # legacy -MMDD with month 13
        "meta-llama/Llama-3.1-8B-Instruct",
    ],
)
def test_floating_aliases_are_not_pinned(model_id: str) -> None:
    assert not is_pinned_model_id(model_id)


def test_parses_openai_and_anthropic_refs_at_temperature_zero() -> None:
    spec = parse_model_spec("openai/gpt-4o-2024-08-06")
    assert spec == ModelSpec(provider="openai", model="gpt-4o-2024-08-06")
    assert spec.temperature == 0.0
    assert spec.ref == "openai/gpt-4o-2024-08-06"
    anth = parse_model_spec("Anthropic/claude-sonnet-4-5-20250929", api_key_env="MY_KEY")
    assert (anth.provider, anth.model, anth.api_key_env) == (
        "anthropic",
        "claude-sonnet-4-5-20250929",
        "MY_KEY",
    )


def test_model_id_may_contain_slashes_and_base_url_is_kept() -> None:
    spec = parse_model_spec("openai/org/model@abc123", base_url="http://127.0.0.1:8000/v1")
    assert spec.model == "org/model@abc123"
    assert spec.base_url == "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize("ref", [None, "", "   "])
def test_missing_model_is_refused(ref: str | None) -> None:
    with pytest.raises(UsageError, match="running without a chosen model is refused"):
        parse_model_spec(ref)


def test_alias_is_refused_with_how_to_fix_unless_allowed() -> None:
    with pytest.raises(UsageError) as info:
        parse_model_spec("openai/gpt-4o")
    message = str(info.value)
    assert "'openai/gpt-4o'" in message
    assert "floating alias" in message
    assert "openai/gpt-4o-2024-08-06" in message and "allow_alias" in message
    assert parse_model_spec("openai/gpt-4o", allow_alias=True).model == "gpt-4o"


@pytest.mark.parametrize("ref", ["gpt-4o-2024-08-06", "google/gemini-2024-01-01", "openai/"])
def test_bad_references_are_usage_errors_naming_the_value(ref: str) -> None:
    with pytest.raises(UsageError, match=re.escape(repr(ref))):
        parse_model_spec(ref)


def test_bad_base_url_and_key_passed_as_env_name_are_refused() -> None:
    with pytest.raises(UsageError, match="not an http"):
        parse_model_spec("openai/gpt-4o-2024-08-06", base_url="127.0.0.1:8000")
    with pytest.raises(UsageError, match="not an environment variable name"):
        parse_model_spec("openai/gpt-4o-2024-08-06", api_key_env="sk-abc123")


@given(
    name=st.from_regex(r"[a-z][a-z0-9.]{0,10}", fullmatch=True),
    day=st.dates(),
    compact=st.booleans(),
)
def test_any_real_date_stamp_pins_a_model(name: str, day: object, compact: bool) -> None:
    import datetime as dt

    assert isinstance(day, dt.date)
    if not 2000 <= day.year <= 2099:
        return
    stamp = day.strftime("%Y%m%d" if compact else "%Y-%m-%d")
    spec = parse_model_spec(f"openai/{name}-{stamp}")
    assert spec.model.endswith(stamp)


@given(name=st.from_regex(r"[a-z][a-z.\-]{0,15}", fullmatch=True))
def test_names_without_digits_or_tags_are_aliases(name: str) -> None:
    assert not is_pinned_model_id(name)
    with pytest.raises(UsageError):
        parse_model_spec(f"anthropic/{name}")
