"""The campaign config file (YAML, version 2): what `helix campaign plan|run` reads.

```yaml
version: 2
name: support-shop
scenarios: {function: "my_pkg.evals:scenarios", ids: [...]}    # args: {...} calls function(**args)
dispatch: {function: "my_pkg.agent:dispatch"}                # args: {...} makes it a factory
scorers:
  - {name: produced_state, produced_state: {checker: "my_pkg.evals:record_matches"}}
  - {name: gold_match, trace_score: gold_match}
  - {name: tone, function: "my_pkg.scorers:tone"}
seed: 7
reps: 3
max_concurrency: 32
retry: {attempts: 3}            # transient dispatch failures only
commit: auto                    # `git rev-parse HEAD`, or a literal string
dispatch_ref: null
run_dir: runs/support-shop      # relative to the current directory (--run-dir overrides)
```

Everything the config runs is named by ``module:function`` (the shipped example names
``helix.examples:...``): Helix imports only code the user named, and the library has no special
case for its own example. :func:`load_campaign_config` validates the file and raises
:class:`~helix.InputFileError` naming the file, line and field of the first problem;
:func:`resolve_campaign` imports what it names, with the same kind of error for a name that does
not import or a function that refuses its ``args``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from .._exceptions import InputFileError, UsageError
from .._util import (
    Loc,
    field_path,
    git_commit,
    node_line,
    parse_yaml_nodes,
    write_atomic,
    write_json_atomic,
)
from ._campaign_report import campaign_manifest, campaign_summary
from ._cell_run import ProgressCallback
from ._failures import cell_retry
from ._model import Dispatch, FinishedCell, Scenario
from ._paths import CAMPAIGN_MANIFEST_FILE, SUMMARY_FILE
from ._produced import produced_state_scorer
from ._run import CampaignResult, run_campaign
from ._schedule import CampaignPlan, plan_campaign_run
from ._scorers import Scorer, ScorerConfig

__all__ = [
    "CAMPAIGN_CONFIG_VERSION",
    "CampaignConfig",
    "DispatchSource",
    "ResolvedCampaign",
    "RetrySettings",
    "ScenarioSource",
    "ScorerEntry",
    "load_campaign_config",
    "resolve_campaign",
]

CAMPAIGN_CONFIG_VERSION = 2
"""Version 2 names everything by ``module:function`` and calls cell scorers ``scorers``."""

_MIGRATE_V1 = (
    "this is a version 1 campaign config; version 2 names everything by module:function: set "
    "version: 2, rename judges: to scorers:, and replace `example: support-shop` with "
    '`function: "helix.examples:campaign_scenarios"` (scenarios) or '
    '`function: "helix.examples:support_shop_dispatch", args: {profile: ...}` (dispatch), and '
    '`checker: example` with `checker: "helix.examples:shop_correctness_checker"` '
    "(`helix campaign example-config` prints a version 2 config)"
)


def _check_ref(value: str) -> str:
    module, sep, attr = value.partition(":")
    parts = [*module.split("."), *attr.split(".")]
    if not sep or not all(p.isidentifier() for p in parts):
        raise ValueError(
            f"{value!r} is not a module:function reference; write the module's import path, a colon "
            'and the name in it, e.g. "my_pkg.agent:dispatch"'
        )
    return value


Ref = Annotated[str, AfterValidator(_check_ref)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _one_of(values: Mapping[str, Any], names: tuple[str, ...]) -> None:
    given = [n for n in names if values.get(n) is not None]
    if len(given) != 1:
        raise ValueError(f"set exactly one of {', '.join(names)} (got {', '.join(given) or 'none'})")


class ScenarioSource(_Strict):
    """Where scenarios come from: ``module:function`` returning a list of scenarios.

    With ``args`` the function is called as ``function(**args)``; ``ids`` keeps only those scenario
    ids, in that order.
    """

    function: Ref
    args: dict[str, Any] | None = None
    ids: list[str] | None = None


class DispatchSource(_Strict):
    """The dispatch: ``module:function`` naming an async callable taking a ``CellContext``.

    With ``args`` the function is a factory called as ``function(**args)`` to build the dispatch.
    """

    function: Ref
    args: dict[str, Any] | None = None


class ProducedStateSettings(_Strict):
    checker: Ref
    """``module:function``: ``checker(required, deliverable) -> bool`` (see ``verify_completion``)."""
    completed_only: bool = False


class ScorerEntry(_Strict):
    """One cell scorer: produced-state grading, a score recorded in the cell's trace, or ``module:function``.

    With ``args`` the function is a factory called as ``function(**args)`` to build the scorer.
    """

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]{1,64}$")
    produced_state: ProducedStateSettings | None = None
    trace_score: str | None = None
    function: Ref | None = None
    args: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ScorerEntry:
        _one_of(self.__dict__, ("produced_state", "trace_score", "function"))
        if self.args is not None and self.function is None:
            raise ValueError("args go with function: (they are passed to it); remove args here")
        return self


class RetrySettings(_Strict):
    attempts: int = Field(default=1, ge=1, le=20)
    """Total attempts per cell (1 = no retry); only transient dispatch failures are retried."""


@dataclass(frozen=True)
class _Source:
    path: Path
    root: yaml.Node | None


class CampaignConfig(_Strict):
    """A campaign config file (version 2)."""

    version: Literal[2] = 2
    name: str = "campaign"
    scenarios: ScenarioSource
    dispatch: DispatchSource
    scorers: list[ScorerEntry] = Field(min_length=1)
    seed: int = 0
    reps: int = Field(default=1, ge=1)
    max_concurrency: int = Field(default=8, ge=1, le=100_000)
    retry: RetrySettings = RetrySettings()
    abort_on_cell_error: bool = False
    commit: str = "auto"
    dispatch_ref: str | None = None
    run_dir: str = "runs/campaign"

    _source: _Source | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _unique_scorers(self) -> CampaignConfig:
        names = [s.name for s in self.scorers]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"scorer names must be unique; repeated: {', '.join(dupes)}")
        return self

    def identity_config(self) -> dict[str, Any]:
        """The part of the config that decides what a cell's result is (the cache identity's ``config``).

        Scenario source, dispatch and scorer settings. Not the name, concurrency, retry policy or
        run directory: changing those must not throw away paid-for results. Seed and reps are part
        of every cell's own key already.
        """
        return self.model_dump(mode="json", include={"scenarios", "dispatch", "scorers"})

    def error(self, loc: Loc, message: str) -> UsageError:
        """An error about the field at ``loc``: file, line and field when the config came from a file."""
        field = field_path(loc)
        if self._source is None:
            return UsageError(f"campaign config field {field!r}: {message}")
        return InputFileError(
            message, path=self._source.path, line=node_line(self._source.root, loc), field=field
        )


def load_campaign_config(path: str | Path) -> CampaignConfig:
    """Read and validate a campaign config file."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputFileError(f"cannot read the campaign config: {exc.strerror}", path=source) from None
    except UnicodeDecodeError:
        raise InputFileError("the campaign config is not UTF-8 text; save it as UTF-8", path=source) from None
    root, data = parse_yaml_nodes(text, source)
    if not isinstance(data, Mapping):
        raise InputFileError(
            "a campaign config is a mapping with version, scenarios, dispatch and scorers "
            f"(see `helix campaign example-config`), not {type(data).__name__}",
            path=source,
            line=1,
        )
    if data.get("version") == 1 or (data.get("version") is None and "judges" in data):
        loc: Loc = ("version",) if "version" in data else ("judges",)
        raise InputFileError(_MIGRATE_V1, path=source, line=node_line(root, loc), field=field_path(loc))
    try:
        config = CampaignConfig.model_validate(data)
    except ValidationError as exc:
        err = sorted(exc.errors(), key=lambda e: node_line(root, tuple(e["loc"])) or 0)[0]
        loc = tuple(p for p in err["loc"] if isinstance(p, str | int))
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = f"unknown field {loc[-1]!r}; check the spelling (`helix campaign example-config` shows them all)"
        elif "input" in err and err["type"] not in ("missing", "value_error"):
            msg = f"{msg} (got {err['input']!r})"
        raise InputFileError(
            msg, path=source, line=node_line(root, loc), field=field_path(loc) or None
        ) from None
    config._source = _Source(path=source, root=root)
    return config


# ----------------------------------------------------------------------------- resolution


def _import_ref(config: CampaignConfig, loc: Loc, ref: str) -> Any:
    """The object ``module:attr`` names; errors point at the config field holding ``ref``."""
    module_name, _, attr = ref.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise config.error(
                loc,
                f"no module named {exc.name!r}; make {module_name} importable (install it, or add "
                "the directory that holds it to PYTHONPATH)",
            ) from None
        raise config.error(loc, f"importing {module_name} failed: {exc}; install what it needs") from exc
    except Exception as exc:
        raise config.error(
            loc, f"importing {module_name} raised {type(exc).__name__}: {exc}; fix that module"
        ) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise config.error(
                loc, f"{module_name} has no {attr!r}; check the name after the colon"
            ) from None
    return obj


def _call(config: CampaignConfig, loc: Loc, ref: str, target: Any, args: dict[str, Any]) -> Any:
    """``target(**args)``; a refusal is an error at the ``args`` field next to ``loc``."""
    args_loc = (*loc[:-1], "args")
    if not callable(target):
        raise config.error(loc, f"{ref} is not callable, so it cannot take args; name a function")
    try:
        inspect.signature(target).bind(**args)
    except TypeError as exc:
        raise config.error(args_loc, f"{ref} does not take these args ({exc}); fix args") from None
    except ValueError:
        pass  # no introspectable signature (a builtin): let the call decide
    try:
        return target(**args)
    except Exception as exc:
        raise config.error(args_loc, f"{ref}(**args) refused them: {type(exc).__name__}: {exc}") from exc


def _scenarios(config: CampaignConfig) -> list[Scenario]:
    source, loc = config.scenarios, ("scenarios", "function")
    target = _import_ref(config, loc, source.function)
    if not callable(target):
        raise config.error(loc, f"{source.function} is not callable; name a function returning scenarios")
    made = _call(config, loc, source.function, target, source.args or {})
    if not isinstance(made, Sequence) or isinstance(made, str | bytes):
        raise config.error(
            loc, f"{source.function} returned {type(made).__name__}; it must return a list of scenarios"
        )
    scenarios: list[Scenario] = []
    for i, item in enumerate(made):
        try:
            scenarios.append(item if isinstance(item, Scenario) else Scenario.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise config.error(
                loc,
                f"item {i} that {source.function} returned is not a scenario: {first['msg']} at "
                f"{field_path(tuple(first['loc'])) or 'the top'}; return helix.campaign.Scenario objects",
            ) from None
    if source.ids is not None:
        by_id = {s.id: s for s in scenarios}
        missing = [i for i in source.ids if i not in by_id]
        if missing:
            known = ", ".join(list(by_id)[:20]) + (" ..." if len(by_id) > 20 else "")
            raise config.error(
                ("scenarios", "ids"),
                f"scenario ids {missing!r} are not among those {source.function} returned ({known})",
            )
        scenarios = [by_id[i] for i in source.ids]
    return scenarios


def _dispatch(config: CampaignConfig) -> Dispatch:
    source, loc = config.dispatch, ("dispatch", "function")
    target = _import_ref(config, loc, source.function)
    made = _call(config, loc, source.function, target, source.args) if source.args is not None else target
    if not callable(made):
        raise config.error(
            loc, f"{source.function} is not callable; name an async function taking a CellContext"
        )
    return made  # type: ignore[no-any-return]


def _trace_score(score_name: str) -> Callable[[FinishedCell], float | None]:
    def score(cell: FinishedCell) -> float | None:
        trace = cell.trace
        for s in trace.scores if trace is not None else ():
            if s.name == score_name and not isinstance(s.value, str):
                return float(s.value)
        return None

    score.__name__ = f"trace_score[{score_name}]"
    return score


def _scorer(config: CampaignConfig, index: int, entry: ScorerEntry) -> Scorer:
    if entry.produced_state is not None:
        settings = entry.produced_state
        loc: Loc = ("scorers", index, "produced_state", "checker")
        checker = _import_ref(config, loc, settings.checker)
        if not callable(checker):
            raise config.error(
                loc, f"{settings.checker} is not callable; name a function (required, deliverable) -> bool"
            )
        return produced_state_scorer(checker, completed_only=settings.completed_only, name=entry.name)
    if entry.trace_score is not None:
        return ScorerConfig(name=entry.name, fn=_trace_score(entry.trace_score))
    assert entry.function is not None
    loc = ("scorers", index, "function")
    target = _import_ref(config, loc, entry.function)
    fn = _call(config, loc, entry.function, target, entry.args) if entry.args is not None else target
    if not callable(fn):
        raise config.error(loc, f"{entry.function} is not callable; name a function taking a finished cell")
    return ScorerConfig(name=entry.name, fn=fn)


@dataclass(frozen=True, kw_only=True)
class ResolvedCampaign:
    """A config turned into live objects: :meth:`plan` it, :meth:`run` it."""

    config: CampaignConfig
    scenarios: list[Scenario]
    dispatch: Dispatch
    scorers: tuple[Scorer, ...]
    run_dir: Path
    commit: str

    def plan(self) -> CampaignPlan:
        """How the run directory stands: cached, to run, blocked (reads only)."""
        cfg = self.config
        return plan_campaign_run(
            self.run_dir,
            self.scenarios,
            seed=cfg.seed,
            reps=cfg.reps,
            commit=self.commit,
            config=cfg.identity_config(),
            dispatch_ref=cfg.dispatch_ref,
            scorers=[s.name for s in self.scorers],
        )

    async def run(
        self,
        *,
        max_concurrency: int | None = None,
        progress: ProgressCallback | None = None,
        fsync: bool = False,
    ) -> CampaignResult:
        """Run with :func:`run_campaign`, bracketed by the run directory's files.

        Writes ``campaign.json`` (the design, so a report can be made even of a stopped run) before
        dispatching and ``summary.json`` (counts and aggregates, see ``campaign_summary``) after.
        """
        cfg = self.config
        manifest = campaign_manifest(
            self.plan(),
            name=cfg.name,
            commit=self.commit,
            seed=cfg.seed,
            reps=cfg.reps,
            dispatch_ref=cfg.dispatch_ref,
            config=cfg.model_dump(mode="json"),
        )
        write_atomic(self.run_dir / CAMPAIGN_MANIFEST_FILE, manifest.model_dump_json(indent=2) + "\n")
        result = await run_campaign(
            self.scenarios,
            self.dispatch,
            self.scorers,
            run_dir=self.run_dir,
            commit=self.commit,
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
            self.run_dir / SUMMARY_FILE,
            campaign_summary(result, name=cfg.name, commit=self.commit, seed=cfg.seed, reps=cfg.reps),
        )
        return result


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
            raise config.error(
                ("commit",),
                "commit: auto needs a git checkout (`git rev-parse HEAD` failed here); "
                "set commit: to a string naming your code version",
            )
        commit = found
    target = Path(run_dir) if run_dir is not None else Path(config.run_dir)
    return ResolvedCampaign(
        config=config,
        scenarios=_scenarios(config),
        dispatch=_dispatch(config),
        scorers=tuple(_scorer(config, i, s) for i, s in enumerate(config.scorers)),
        run_dir=target if target.is_absolute() else base / target,
        commit=commit,
    )
