"""Human review: labels, the SQLite label store, annotator agreement, and the review page and server.

```python
from helix.review import LabelStore, load_labels, cohen_kappa

store = LabelStore("labels.sqlite")
store.record(trace_id="t1", criterion_id="refund_policy", label="fail", annotator="ana")
labels = load_labels("labels.sqlite")          # current label per trace × criterion × annotator
cohen_kappa(labels, "ana", "ben").kappa
```
"""

from typing import TYPE_CHECKING, Any

from ._agreement import KappaResult, annotator_agreement, cohen_kappa
from ._blocked import DEFAULT_BLOCKED_KIND, blocked_kind, blocked_text
from ._design import (
    CONFIDENT,
    DESIGN_KINDS,
    DesignKind,
    LabelDesign,
    parse_design,
    stratum_of,
    uncertainty_bin,
)
from ._labels import (
    DECIDED_LABELS,
    LABEL_FORMAT_VERSION,
    BadLine,
    HumanLabel,
    LabelFile,
    LabelKey,
    LabelValue,
    latest_labels,
    parse_labels_jsonl,
    read_labels_jsonl,
    write_labels_jsonl,
)
from ._store import MIGRATIONS, ImportSummary, LabelStore, Migration, load_labels

if TYPE_CHECKING:
    from ._active import QueuedItem, active_order, allocation_scores
    from ._from_scores import PassRule, ScoreLabels, labels_from_scores, parse_pass_rule
    from ._items import JudgeResult, ReviewItem, ReviewSet, is_disagreement, load_review_set, order_queue
    from ._page import PageMode, json_for_script, render_review_page, review_csp, write_review_html
    from ._server import (
        MIN_TOKEN_LENGTH,
        TOKEN_ENV,
        ReviewServer,
        check_bind,
        check_token,
        create_review_app,
        generate_token,
        is_loopback,
        token_from_env,
    )

# The page, its server and run reading pull in judging, the report renderer and Starlette; they load on
# first use so that reading labels (what calibration does) stays a light import.
_LAZY = {
    "._active": ("QueuedItem", "active_order", "allocation_scores"),
    "._from_scores": ("PassRule", "ScoreLabels", "labels_from_scores", "parse_pass_rule"),
    "._items": (
        "JudgeResult",
        "ReviewItem",
        "ReviewSet",
        "is_disagreement",
        "load_review_set",
        "order_queue",
    ),
    "._page": ("PageMode", "json_for_script", "render_review_page", "review_csp", "write_review_html"),
    "._server": (
        "MIN_TOKEN_LENGTH",
        "TOKEN_ENV",
        "ReviewServer",
        "check_bind",
        "check_token",
        "create_review_app",
        "generate_token",
        "is_loopback",
        "token_from_env",
    ),
}
_LAZY_NAMES = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "CONFIDENT",
    "DECIDED_LABELS",
    "DEFAULT_BLOCKED_KIND",
    "DESIGN_KINDS",
    "LABEL_FORMAT_VERSION",
    "MIGRATIONS",
    "MIN_TOKEN_LENGTH",
    "TOKEN_ENV",
    "BadLine",
    "DesignKind",
    "HumanLabel",
    "ImportSummary",
    "JudgeResult",
    "KappaResult",
    "LabelDesign",
    "LabelFile",
    "LabelKey",
    "LabelStore",
    "LabelValue",
    "Migration",
    "PageMode",
    "PassRule",
    "QueuedItem",
    "ReviewItem",
    "ReviewServer",
    "ReviewSet",
    "ScoreLabels",
    "active_order",
    "allocation_scores",
    "annotator_agreement",
    "blocked_kind",
    "blocked_text",
    "check_bind",
    "check_token",
    "cohen_kappa",
    "create_review_app",
    "generate_token",
    "is_disagreement",
    "is_loopback",
    "json_for_script",
    "labels_from_scores",
    "latest_labels",
    "load_labels",
    "load_review_set",
    "order_queue",
    "parse_design",
    "parse_labels_jsonl",
    "parse_pass_rule",
    "read_labels_jsonl",
    "render_review_page",
    "review_csp",
    "stratum_of",
    "token_from_env",
    "uncertainty_bin",
    "write_labels_jsonl",
    "write_review_html",
]
