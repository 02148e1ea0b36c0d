"""The one seam to LLM providers: the Model protocol, pinned model specs, clients, usage and cost."""

from ._protocol import ChatMessage, Completion, Model, ModelSpec, TokenUsage

__all__ = ["ChatMessage", "Completion", "Model", "ModelSpec", "TokenUsage"]
