"""``open_model``: from a pinned spec to a ready client, with the API key resolved."""

from __future__ import annotations

import os
import random

import anyio

from .._exceptions import UsageError
from ._clients import AnthropicModel, OpenAIModel
from ._protocol import Model, ModelSpec
from ._retry import RetryPolicy, Sleep

__all__ = ["DEFAULT_KEY_ENV", "NO_KEY_PLACEHOLDER", "open_model"]

DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
NO_KEY_PLACEHOLDER = "helix-no-key"
"""Sent to a custom ``base_url`` when no key is configured: local servers need none."""


def _resolve_api_key(spec: ModelSpec) -> str:
    env_name = spec.api_key_env or DEFAULT_KEY_ENV[spec.provider]
    key = os.environ.get(env_name, "").strip()
    if key:
        return key
    if spec.api_key_env is not None:
        raise UsageError(
            f"api_key_env {spec.api_key_env!r} is not set (or empty) for {spec.ref!r}; "
            f"export {spec.api_key_env}=<your key>, or drop api_key_env for a local server that needs none."
        )
    if spec.base_url is not None:
        return NO_KEY_PLACEHOLDER
    raise UsageError(
        f"no API key for {spec.ref!r}: set the environment variable {env_name}, "
        "or give base_url for a local OpenAI-compatible server."
    )


def open_model(
    spec: ModelSpec,
    *,
    max_retries: int = 6,
    timeout_s: float = 120.0,
    sleep: Sleep | None = None,
    rng: random.Random | None = None,
    base_delay_s: float = 0.5,
    max_delay_s: float = 30.0,
) -> Model:
    """Open a client for ``spec`` (``openai``: any OpenAI-compatible server; ``anthropic``).

    Retries 408/409/429/5xx, timeouts and dropped connections up to ``max_retries`` times with
    capped, fully jittered exponential backoff that honours ``Retry-After``. ``sleep`` and ``rng``
    are injectable for tests. The default ``rng`` is seeded from the OS on purpose: jitter only
    spreads load (it never touches a result), and identical seeds across processes would make
    every client retry in lock-step.

    Raises :class:`UsageError` when no API key can be found for a provider's public endpoint.
    Close the client with ``await model.aclose()``.
    """
    if max_retries < 0:
        raise UsageError(f"max_retries must be >= 0, got {max_retries!r}.")
    if timeout_s <= 0:
        raise UsageError(f"timeout_s must be > 0, got {timeout_s!r}.")
    api_key = _resolve_api_key(spec)
    policy = RetryPolicy(max_retries=max_retries, base_delay_s=base_delay_s, max_delay_s=max_delay_s)
    common = {"policy": policy, "sleep": sleep or anyio.sleep, "rng": rng or random.Random()}
    if spec.provider == "openai":
        return OpenAIModel(spec, api_key=api_key, timeout_s=timeout_s, **common)
    return AnthropicModel(spec, api_key=api_key, timeout_s=timeout_s, **common)
