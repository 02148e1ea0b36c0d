"""The one seam to LLM providers: the Model protocol, pinned model specs, clients, usage and cost."""

from ._clients import AnthropicModel, OpenAIModel
from ._limiter import AdaptiveLimiter, AimdWindow, Limiter, LimiterStats, Outcome, is_overload_status
from ._open import open_model
from ._pricing import BATCH_DISCOUNT, PRICE_TABLE, PRICE_TABLE_AS_OF, Price, cost_usd, price_table_hash
from ._protocol import AttemptHook, ChatMessage, Completion, FailureKind, Model, ModelSpec, TokenUsage
from ._receipt import (
    RECEIPT_FORMAT_VERSION,
    RECEIPTS_FILE,
    AttemptRecord,
    CallReceipt,
    ReceiptLog,
    ReceiptLogContents,
    read_receipt_log,
    read_receipts,
)
from ._retry import RetryPolicy, is_retryable_status, parse_retry_after
from ._spec import is_pinned_model_id, parse_model_spec

__all__ = [
    "BATCH_DISCOUNT",
    "PRICE_TABLE",
    "PRICE_TABLE_AS_OF",
    "RECEIPTS_FILE",
    "RECEIPT_FORMAT_VERSION",
    "AdaptiveLimiter",
    "AimdWindow",
    "AnthropicModel",
    "AttemptHook",
    "AttemptRecord",
    "CallReceipt",
    "ChatMessage",
    "Completion",
    "FailureKind",
    "Limiter",
    "LimiterStats",
    "Model",
    "ModelSpec",
    "OpenAIModel",
    "Outcome",
    "Price",
    "ReceiptLog",
    "ReceiptLogContents",
    "RetryPolicy",
    "TokenUsage",
    "cost_usd",
    "is_overload_status",
    "is_pinned_model_id",
    "is_retryable_status",
    "open_model",
    "parse_model_spec",
    "parse_retry_after",
    "price_table_hash",
    "read_receipt_log",
    "read_receipts",
]
