"""The support-shop example subject: a simulated shop, scenarios with gold end states, and a seeded
scripted agent that makes realistic mistakes, so every part of Helix can be tried offline.

```python
from helix.examples import SCENARIOS, MistakeRates, run_episode

episode = run_episode(SCENARIOS[0], seed=7)
episode.trace          # a canonical helix.traces.Trace
episode.gold_match     # did the shop end where it should?
episode.mistakes       # ground truth: what the agent got wrong
```

Ground truth also sits in ``trace.metadata["_ground_truth"]``: metadata keys starting with ``_`` are
never shown to judges (renderers drop them).
"""

from ._campaign_dispatch import (
    SUPPORT_SHOP_AGENT,
    campaign_scenarios,
    mistake_profile,
    shop_correctness_checker,
    shop_produced_events,
    shop_task_gold,
    support_shop_dispatch,
)
from ._catalog import SHOP_AS_OF, base_shop
from ._demo_run import (
    DEMO_CAMPAIGN_REPS,
    DEMO_RUNS,
    DEMO_SEED,
    DemoResult,
    run_demo,
    run_demo_campaign,
    shipped_verdicts_dir,
)
from ._episodes import (
    DEFAULT_RATES,
    GROUND_TRUTH_KEY,
    SUBJECT,
    Episode,
    GoldDifference,
    diff_states,
    episode_seed,
    episode_trace_id,
    generate_episodes,
    run_episode,
)
from ._mistakes import MISTAKE_KINDS, MistakeKind, MistakeRates
from ._resources import POLICY_TEXT, campaign_config_path, criteria_path, policy_path
from ._scenarios import (
    SCENARIOS,
    CustomerRequest,
    ExpectedOutcome,
    RequestAction,
    ScenarioKind,
    ShopScenario,
    graded_view,
)
from ._shop import (
    PROCESSOR_REFUND_LIMIT_DAYS,
    TOOL_NAMES,
    TOOL_SPECS,
    Address,
    Customer,
    Escalation,
    EscalationCategory,
    Order,
    OrderItem,
    OrderStatus,
    Refund,
    ShopBackend,
    ShopState,
    ToolErrorCode,
    ToolName,
)

__all__ = [
    "DEFAULT_RATES",
    "DEMO_CAMPAIGN_REPS",
    "DEMO_RUNS",
    "DEMO_SEED",
    "GROUND_TRUTH_KEY",
    "MISTAKE_KINDS",
    "POLICY_TEXT",
    "PROCESSOR_REFUND_LIMIT_DAYS",
    "SCENARIOS",
    "SHOP_AS_OF",
    "SUBJECT",
    "SUPPORT_SHOP_AGENT",
    "TOOL_NAMES",
    "TOOL_SPECS",
    "Address",
    "Customer",
    "CustomerRequest",
    "DemoResult",
    "Episode",
    "Escalation",
    "EscalationCategory",
    "ExpectedOutcome",
    "GoldDifference",
    "MistakeKind",
    "MistakeRates",
    "Order",
    "OrderItem",
    "OrderStatus",
    "Refund",
    "RequestAction",
    "ScenarioKind",
    "ShopBackend",
    "ShopScenario",
    "ShopState",
    "ToolErrorCode",
    "ToolName",
    "base_shop",
    "campaign_config_path",
    "campaign_scenarios",
    "criteria_path",
    "diff_states",
    "episode_seed",
    "episode_trace_id",
    "generate_episodes",
    "graded_view",
    "mistake_profile",
    "policy_path",
    "run_demo",
    "run_demo_campaign",
    "run_episode",
    "shipped_verdicts_dir",
    "shop_correctness_checker",
    "shop_produced_events",
    "shop_task_gold",
    "support_shop_dispatch",
]
