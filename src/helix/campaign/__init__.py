"""Campaigns: run an agent over scenarios × seeds × repetitions with a durable cell cache, failure
receipts, bounded retry, a cost ledger and honest aggregates; cell scorers (produced-state grading
among them); attestation.

```python
from helix.campaign import CellContext, DispatchResult, Scenario, run_campaign_sync

async def dispatch(ctx: CellContext) -> DispatchResult:
    return DispatchResult(output=f"echo {ctx.scenario.input}", cost_usd=0.0, served_model="echo")

result = run_campaign_sync(
    [Scenario(id="hello", input="hi")],
    dispatch,
    {"says_echo": lambda cell: cell.output.startswith("echo")},
    run_dir="runs/echo",
    commit="v1",
    reps=3,
)
result.aggregates.by_scorer["says_echo"].mean   # 1.0
```
"""

from ._attest import AttestedReport, Provenance, attest, verify_attestation
from ._campaign_report import load_campaign_run, write_campaign_report
from ._cell_run import CampaignProgress
from ._config import load_campaign_config, resolve_campaign
from ._eval_campaign import EvalCampaignContext, run_eval_campaign
from ._failures import cell_retry
from ._ledger import read_ledger
from ._matrix import run_agent_matrix, run_agent_matrix_sync
from ._model import CellContext, CellResult, Dispatch, DispatchResult, FinishedCell, Scenario
from ._paths import CellPaths
from ._produced import (
    Deliverable,
    ProducedEvent,
    RequiredDeliverable,
    TaskGold,
    extract_produced_state,
    produced_state_scorer,
    verify_completion,
)
from ._run import CampaignResult, run_campaign, run_campaign_sync, run_eval, run_eval_sync
from ._schedule import build_cell_schedule, plan_campaign_run
from ._scorers import Scorer, ScorerConfig, code_check_scorer, llm_matrix_scorer

__all__ = [
    "AttestedReport",
    "CampaignProgress",
    "CampaignResult",
    "CellContext",
    "CellPaths",
    "CellResult",
    "Deliverable",
    "Dispatch",
    "DispatchResult",
    "EvalCampaignContext",
    "FinishedCell",
    "ProducedEvent",
    "Provenance",
    "RequiredDeliverable",
    "Scenario",
    "Scorer",
    "ScorerConfig",
    "TaskGold",
    "attest",
    "build_cell_schedule",
    "cell_retry",
    "code_check_scorer",
    "extract_produced_state",
    "llm_matrix_scorer",
    "load_campaign_config",
    "load_campaign_run",
    "plan_campaign_run",
    "produced_state_scorer",
    "read_ledger",
    "resolve_campaign",
    "run_agent_matrix",
    "run_agent_matrix_sync",
    "run_campaign",
    "run_campaign_sync",
    "run_eval",
    "run_eval_campaign",
    "run_eval_sync",
    "verify_attestation",
    "verify_completion",
    "write_campaign_report",
]
