"""The one seam to LLM providers: the Model protocol, pinned model specs, clients, usage and cost."""

from ._clients import AnthropicModel, OpenAIModel
from ._open import open_model
from ._pricing import PRICE_TABLE, PRICE_TABLE_AS_OF, Price, cost_usd, price_table_hash
from ._protocol import ChatMessage, Completion, Model, ModelSpec, TokenUsage
from ._receipt import RECEIPT_FORMAT_VERSION, RECEIPTS_FILE, CallReceipt, ReceiptLog, read_receipts
from ._retry import RetryPolicy, is_retryable_status, parse_retry_after
from ._spec import is_pinned_model_id, parse_model_spec

__all__ = [
    "PRICE_TABLE",
    "PRICE_TABLE_AS_OF",
    "RECEIPTS_FILE",
    "RECEIPT_FORMAT_VERSION",
    "AnthropicModel",
    "CallReceipt",
    "ChatMessage",
    "Completion",
    "Model",
    "ModelSpec",
    "OpenAIModel",
    "Price",
    "ReceiptLog",
    "RetryPolicy",
    "TokenUsage",
    "cost_usd",
    "is_pinned_model_id",
    "is_retryable_status",
    "open_model",
    "parse_model_spec",
    "parse_retry_after",
    "price_table_hash",
    "read_receipts",
]
