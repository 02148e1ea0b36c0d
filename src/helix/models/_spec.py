"""Parse ``provider/model`` references into a pinned :class:`ModelSpec`.

The pinning rule
----------------
Providers move floating aliases (``gpt-4o``, ``claude-sonnet-4-5``, ``...-latest``) to new weights
without notice, so a judgment made under an alias cannot be reproduced. A model id counts as
*pinned* when it carries at least one of:

* a date stamp: ``YYYY-MM-DD`` (``gpt-4o-2024-08-06``), ``YYYYMMDD``
  (``claude-sonnet-4-5-20250929``), or OpenAI's legacy trailing ``-MMDD`` (``gpt-4-0613``), each
  a real calendar date;
* an explicit tag after ``:`` that is not ``latest`` (``qwen2.5:7b-instruct-q4_K_M``, the Ollama
  form);
* an explicit revision or digest after ``@`` (``llama3@sha256:...``, ``org/model@v1.2``).

Anything else (including any id containing ``latest``) is a floating alias and is refused unless the
caller passes ``allow_alias=True`` and so takes responsibility for reproducibility.
"""

from __future__ import annotations

import re
from datetime import date
from typing import get_args

from .._exceptions import UsageError
from ._protocol import ModelSpec, Provider

__all__ = ["is_pinned_model_id", "parse_model_spec"]

_PROVIDERS: tuple[str, ...] = get_args(Provider)
_EXAMPLES = "openai/gpt-4o-2024-08-06 or anthropic/claude-sonnet-4-5-20250929"

_DASHED_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_COMPACT_DATE = re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})(?!\d)")
_LEGACY_MMDD = re.compile(r"-(\d{2})(\d{2})$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _is_date(year: int, month: int, day: int) -> bool:
    if not 2000 <= year <= 2099:
        return False
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _has_date_stamp(model_id: str) -> bool:
    for pattern in (_DASHED_DATE, _COMPACT_DATE):
        for m in pattern.finditer(model_id):
            if _is_date(int(m[1]), int(m[2]), int(m[3])):
                return True
    legacy = _LEGACY_MMDD.search(model_id)
    # Legacy OpenAI snapshots (gpt-4-0613, gpt-3.5-turbo-0125): a leap year accepts 02-29.
    return legacy is not None and _is_date(2024, int(legacy[1]), int(legacy[2]))


def _has_explicit_tag(model_id: str) -> bool:
    if "@" in model_id:
        revision = model_id.rsplit("@", 1)[1]
        return bool(revision) and revision.lower() != "latest"
    if ":" in model_id:
        tag = model_id.rsplit(":", 1)[1]
        return bool(tag) and tag.lower() != "latest"
    return False


def is_pinned_model_id(model_id: str) -> bool:
    """True when ``model_id`` names a fixed snapshot (see the module docstring for the rule)."""
    if not model_id or "latest" in model_id.lower():
        return False
    return _has_date_stamp(model_id) or _has_explicit_tag(model_id)


def parse_model_spec(
    ref: str | None,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    allow_alias: bool = False,
) -> ModelSpec:
    """Turn ``"openai/<model>"`` or ``"anthropic/<model>"`` into a pinned :class:`ModelSpec`.

    The model id may itself contain slashes (``openai/meta-llama/Llama-3.1-8B@main`` for a vLLM
    server). ``base_url`` points an ``openai`` spec at any OpenAI-compatible server; ``api_key_env``
    names the environment variable holding the key. Temperature is always 0.

    Raises :class:`UsageError` for a missing ref, an unknown provider, an empty model id, or a
    floating alias (unless ``allow_alias``).
    """
    if ref is None or not ref.strip():
        raise UsageError(
            "no model chosen: running without a chosen model is refused. "
            f"Pass a pinned provider/model reference such as {_EXAMPLES}."
        )
    text = ref.strip()
    provider, sep, model_id = text.partition("/")
    provider = provider.lower()
    if not sep or provider not in _PROVIDERS:
        raise UsageError(
            f"model reference {ref!r} does not start with a known provider; "
            f"write it as <provider>/<model> with provider one of {', '.join(_PROVIDERS)}, e.g. {_EXAMPLES}."
        )
    if not model_id:
        raise UsageError(f"model reference {ref!r} has an empty model id; e.g. {_EXAMPLES}.")
    if not allow_alias and not is_pinned_model_id(model_id):
        raise UsageError(
            f"model {ref!r} is a floating alias: the provider can change what it serves at any time, "
            "so its judgments cannot be reproduced. Give a dated snapshot or an explicit tag "
            f"(e.g. {_EXAMPLES}, or ollama-style name:tag), or pass allow_alias=True "
            "(--allow-alias) to accept the risk."
        )
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise UsageError(
            f"base_url {base_url!r} is not an http(s) URL; give e.g. http://127.0.0.1:8000/v1 "
            "for an OpenAI-compatible server."
        )
    if api_key_env is not None and not _ENV_NAME.match(api_key_env):
        raise UsageError(
            f"api_key_env {api_key_env!r} is not an environment variable name; "
            "give the variable's name (e.g. OPENROUTER_API_KEY), not the key itself."
        )
    # mypy: provider was checked against the Literal's members above.
    return ModelSpec(
        provider="openai" if provider == "openai" else "anthropic",
        model=model_id,
        base_url=base_url,
        api_key_env=api_key_env,
    )
