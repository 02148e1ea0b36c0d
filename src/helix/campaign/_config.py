"""The campaign config file (YAML, version 1): what `helix campaign plan|run` reads.

```yaml
version: 1
name: support-shop
scenarios: {example: support-shop}              # or {function: "my_pkg.evals:scenarios"}
dispatch: {example: support-shop, profile: default}   # or {function: "my_pkg.agent:dispatch", args: {...}}
judges:
  - {name: produced_state, produced_state: {checker: example}}
  - {name: gold_match, trace_score: gold_match}
  - {name: my_judge, function: "my_pkg.judges:tone"}
seed: 7
reps: 3
max_concurrency: 32
retry: {attempts: 3}            # transient dispatch failures only
commit: auto                    # `git rev-parse HEAD`, or a literal string
dispatch_ref: null
run_dir: runs/support-shop      # relative to the current directory (--run-dir overrides)
```

:func:`load_campaign_config` validates it and raises :class:`~helix.InputFileError` naming the file,
line and field of the first problem. :func:`resolve_campaign` turns it into live objects
(scenarios, dispatch, judges) by importing the named functions: only ever code the user named.
"""

from __future__ import annotations

import importlib
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .._exceptions import InputFileError, UsageError
from .._util import field_path, node_line, parse_yaml_nodes, write_atomic, write_json_atomic
from ._campaign_report import CAMPAIGN_MANIFEST_FILE, campaign_manifest, campaign_summary
from ._failures import cell_retry
from ._judges import Judge, JudgeConfig
from ._model import Dispatch, FinishedCell, Scenario
from ._produced import produced_state_judge
from ._run import CampaignResult, ProgressCallback, run_campaign
from ._schedule import CampaignPlan, plan_campaign_run

__all__ = [
    "CAMPAIGN_CONFIG_VERSION",
    "CampaignConfig",
    "DispatchSource",
    "JudgeEntry",
    "ResolvedCampaign",
    "RetrySettings",
    "ScenarioSource",
    "example_config_path",
    "load_campaign_config",
    "plan_configured_campaign",
    "resolve_campaign",
    "run_configured_campaign",
]

CAMPAIGN_CONFIG_VERSION = 1
_REF_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _one_of(values: Mapping[str, Any], names: tuple[str, ...]) -> None:
    given = [n for n in names if values.get(n) is not None]
    if len(given) != 1:
        raise ValueError(f"set exactly one of {', '.join(names)} (got {', '.join(given) or 'none'})")


class ScenarioSource(_Strict):
    """Where scenarios come from: the example subject or a ``module:function`` returning scenarios."""

    example: Literal["support-shop"] | None = None
    function: str | None = Field(default=None, pattern=_REF_PATTERN)
    ids: list[str] | None = None
    """Only these scenario ids (in this order)."""

    @model_validator(mode="after")
    def _exactly_one(self) -> ScenarioSource:
        _one_of(self.__dict__, ("example", "function"))
        return self


class DispatchSource(_Strict):
    """The dispatch: the example's scripted agent with a mistake ``profile``, or ``module:function``.

    With ``args`` the function is a factory called as ``function(**args)`` to build the dispatch.
    """

    example: Literal["support-shop"] | None = None
    profile: str | dict[str, float] = "default"
    function: str | None = Field(default=None, pattern=_REF_PATTERN)
    args: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> DispatchSource:
        _one_of(self.__dict__, ("example", "function"))
        return self


class ProducedStateJudgeSettings(_Strict):
    checker: str = Field(default="example", pattern=r"^(example|[A-Za-z_][\w.]*:[A-Za-z_][\w.]*)$")
    """``example`` (the support-shop record checker) or ``module:function``."""
    completed_only: bool = False


class JudgeEntry(_Strict):
    """One judge: produced-state grading, a score recorded in the cell's trace, or a ``module:function``."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]{1,64}$")
    produced_state: ProducedStateJudgeSettings | None = None
    trace_score: str | None = None
    function: str | None = Field(default=None, pattern=_REF_PATTERN)

    @model_validator(mode="after")
    def _exactly_one(self) -> JudgeEntry:
        _one_of(self.__dict__, ("produced_state", "trace_score", "function"))
        return self


class RetrySettings(_Strict):
    attempts: int = Field(default=1, ge=1, le=20)
    """Total attempts per cell (1 = no retry); only transient dispatch failures are retried."""


class CampaignConfig(_Strict):
    """A campaign config file (version 1)."""

    version: Literal[1] = 1
    name: str = "campaign"
    scenarios: ScenarioSource
    dispatch: DispatchSource
    judges: list[JudgeEntry] = Field(min_length=1)
    seed: int = 0
    reps: int = Field(default=1, ge=1)
    max_concurrency: int = Field(default=8, ge=1, le=100_000)
    retry: RetrySettings = RetrySettings()
    abort_on_cell_error: bool = False
    commit: str = "auto"
    dispatch_ref: str | None = None
    run_dir: str = "runs/campaign"

    @model_validator(mode="after")
    def _unique_judges(self) -> CampaignConfig:
        names = [j.name for j in self.judges]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"judge names must be unique; repeated: {', '.join(dupes)}")
        return self

    def identity_config(self) -> dict[str, Any]:
        """The part of the config that decides what a cell's result is (the cache identity's ``config``).

        Scenario source, dispatch and judge settings. Not the name, concurrency, retry policy or run
        directory: changing those must not throw away paid-for results. Seed and reps are part of
        every cell's own key already.
        """
        return self.model_dump(mode="json", include={"scenarios", "dispatch", "judges"})


def example_config_path() -> Path:
    """The shipped campaign config of the support-shop example (produced-state grading)."""
    return Path(__file__).resolve().parents[1] / "examples" / "support_shop" / "campaign.yaml"


def load_campaign_config(path: str | Path) -> CampaignConfig:
    """Read and validate a campaign config file."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputFileError(f"cannot read the campaign config: {exc.strerror}", path=source) from None
    root, data = parse_yaml_nodes(text, source)
    if not isinstance(data, Mapping):
        raise InputFileError(
            "a campaign config is a mapping with version, scenarios, dispatch and judges "
            f"(see `helix campaign --help`), not {type(data).__name__}",
            path=source,
            line=1,
        )
    try:
        config = CampaignConfig.model_validate(data)
    except ValidationError as exc:
        err = sorted(exc.errors(), key=lambda e: node_line(root, tuple(e["loc"])) or 0)[0]
        loc = tuple(p for p in err["loc"] if isinstance(p, str | int))
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = f"unknown field {loc[-1]!r}; check the spelling (see the example: {example_config_path().name})"
        elif "input" in err and err["type"] != "missing":
            msg = f"{msg} (got {err['input']!r})"
        raise InputFileError(
            msg, path=source, line=node_line(root, loc), field=field_path(loc) or None
        ) from None
    return config


# ----------------------------------------------------------------------------- resolution


def _import_ref(ref: str, what: str) -> Any:
    module_name, _, attr = ref.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise UsageError(
            f"cannot import {what} {ref!r}: {exc}; make the module importable (installed, or on PYTHONPATH)"
        ) from None
    return obj


def _trace_score_judge(score_name: str) -> Callable[[FinishedCell], float | None]:
    def judge(cell: FinishedCell) -> float | None:
        trace = cell.trace
        for score in trace.scores if trace is not None else ():
            if score.name == score_name and not isinstance(score.value, str):
                return float(score.value)
        return None

    judge.__name__ = f"trace_score[{score_name}]"
    return judge


@dataclass(frozen=True, kw_only=True)
class ResolvedCampaign:
    """A config turned into live objects, ready for ``run_campaign``."""

    config: CampaignConfig
    scenarios: list[Scenario]
    dispatch: Dispatch
    judges: tuple[Judge, ...]
    run_dir: Path
    commit: str


def git_commit(cwd: str | Path = ".") -> str | None:
    """``git rev-parse HEAD`` in ``cwd`` (read-only), or None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _scenarios(source: ScenarioSource) -> list[Scenario]:
    if source.example is not None:
        from ..examples import campaign_scenarios

        return campaign_scenarios(source.ids)
    assert source.function is not None
    made = _import_ref(source.function, "scenarios function")()
    if not isinstance(made, Sequence):
        raise UsageError(
            f"{source.function} returned {type(made).__name__}; it must return a list of scenarios"
        )
    scenarios = [s if isinstance(s, Scenario) else Scenario.model_validate(s) for s in made]
    if source.ids is not None:
        by_id = {s.id: s for s in scenarios}
        missing = [i for i in source.ids if i not in by_id]
        if missing:
            raise UsageError(f"scenario ids {missing!r} are not among those {source.function} returned")
        scenarios = [by_id[i] for i in source.ids]
    return scenarios


def _dispatch(source: DispatchSource) -> Dispatch:
    if source.example is not None:
        from ..examples import support_shop_dispatch

        return support_shop_dispatch(source.profile)
    assert source.function is not None
    target = _import_ref(source.function, "dispatch")
    made = target(**source.args) if source.args is not None else target
    if not callable(made):
        raise UsageError(
            f"dispatch {source.function} is not callable; name an async function taking a CellContext"
        )
    return made  # type: ignore[no-any-return]


def _judge(entry: JudgeEntry) -> Judge:
    if entry.produced_state is not None:
        settings = entry.produced_state
        if settings.checker == "example":
            from ..examples import shop_correctness_checker

            checker: Any = shop_correctness_checker
        else:
            checker = _import_ref(settings.checker, "correctness checker")
        return produced_state_judge(checker, completed_only=settings.completed_only, name=entry.name)
    if entry.trace_score is not None:
        return JudgeConfig(name=entry.name, fn=_trace_score_judge(entry.trace_score))
    assert entry.function is not None
    fn = _import_ref(entry.function, "judge")
    if not callable(fn):
        raise UsageError(f"judge {entry.function} is not callable; name a function taking a finished cell")
    return JudgeConfig(name=entry.name, fn=fn)


def resolve_campaign(
    config: CampaignConfig, *, run_dir: str | Path | None = None, cwd: str | Path = "."
) -> ResolvedCampaign:
    """Import and build what ``config`` names.

    ``run_dir`` overrides the config's; a relative run directory resolves against ``cwd``, which is
    also where ``commit: auto`` asks git for the commit.
    """
    base = Path(cwd)
    commit = config.commit
    if commit == "auto":
        found = git_commit(base)
        if found is None:
            raise UsageError(
                "commit: auto needs a git checkout (`git rev-parse HEAD` failed here); "
                "set commit: to a string naming your code version in the campaign config"
            )
        commit = found
    target = Path(run_dir) if run_dir is not None else Path(config.run_dir)
    return ResolvedCampaign(
        config=config,
        scenarios=_scenarios(config.scenarios),
        dispatch=_dispatch(config.dispatch),
        judges=tuple(_judge(j) for j in config.judges),
        run_dir=target if target.is_absolute() else base / target,
        commit=commit,
    )


# ----------------------------------------------------------------------------- running


def plan_configured_campaign(resolved: ResolvedCampaign) -> CampaignPlan:
    """How the resolved campaign's run directory stands: cached, to run, blocked (reads only)."""
    cfg = resolved.config
    return plan_campaign_run(
        resolved.run_dir,
        resolved.scenarios,
        seed=cfg.seed,
        reps=cfg.reps,
        commit=resolved.commit,
        config=cfg.identity_config(),
        dispatch_ref=cfg.dispatch_ref,
        judges=[j.name for j in resolved.judges],
    )


async def run_configured_campaign(
    resolved: ResolvedCampaign,
    *,
    max_concurrency: int | None = None,
    progress: ProgressCallback | None = None,
    fsync: bool = False,
) -> CampaignResult:
    """Run a resolved config with :func:`run_campaign`, bracketed by the run directory's files.

    Writes ``campaign.json`` (the design, so a report can be made even of a stopped run) before
    dispatching and ``summary.json`` (counts and aggregates, see :func:`campaign_summary`) after.
    """
    cfg = resolved.config
    plan = plan_configured_campaign(resolved)
    manifest = campaign_manifest(
        plan,
        name=cfg.name,
        commit=resolved.commit,
        seed=cfg.seed,
        reps=cfg.reps,
        dispatch_ref=cfg.dispatch_ref,
        config=cfg.model_dump(mode="json"),
    )
    write_atomic(resolved.run_dir / CAMPAIGN_MANIFEST_FILE, manifest.model_dump_json(indent=2) + "\n")
    result = await run_campaign(
        resolved.scenarios,
        resolved.dispatch,
        resolved.judges,
        run_dir=resolved.run_dir,
        commit=resolved.commit,
        seed=cfg.seed,
        reps=cfg.reps,
        config=cfg.identity_config(),
        dispatch_ref=cfg.dispatch_ref,
        max_concurrency=max_concurrency or cfg.max_concurrency,
        abort_on_cell_error=cfg.abort_on_cell_error,
        cell_retry=cell_retry(cfg.retry.attempts) if cfg.retry.attempts > 1 else None,
        progress=progress,
        fsync=fsync,
    )
    write_json_atomic(
        resolved.run_dir / "summary.json", campaign_summary(result, name=cfg.name, commit=resolved.commit)
    )
    return result
