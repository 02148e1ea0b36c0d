"""`helix init`: detect a project's traces and subject, choose the judge substrate and model, write helix.yaml.

``helix.yaml`` in the working directory gives every command its defaults: an option a command has
(``--model``, ``--criteria``, ``--subject``, ``--runtime``) and that is not given on the command line
takes the file's value. Flags always win. The file is read once, lazily, only when a command looks
up a default, so ``helix --help`` stays instant.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from ._common import console, helix_errors

__all__ = ["CONFIG_FILE", "ProjectDefaults", "register"]

CONFIG_FILE = "helix.yaml"
_SUBSTRATES = ("claude-code", "codex", "model")


def _command_name(c: Any) -> str:
    return str(c.name or (c.callback.__name__.replace("_", "-") if c.callback else ""))


class ProjectDefaults(Mapping[str, Any]):
    """Click's ``default_map`` over helix.yaml, mirroring the command tree.

    At a group, a subcommand's name gives the mapping of that subcommand; at a command, an option's
    name gives its value from helix.yaml. So ``helix sample`` and an option called ``sample`` never
    meet: each is looked up at its own level.
    """

    def __init__(self, app: typer.Typer, path: Path | None = None, *, _load: Any = None) -> None:
        self._app = app
        self._path = path
        self._values: tuple[Path, dict[str, Any]] | None = None
        self._loader = _load or self._load_values

    def _load_values(self) -> dict[str, Any]:
        path = self._path or Path.cwd() / CONFIG_FILE
        if self._values is None or self._values[0] != path:  # one process may run commands in several folders
            from ._config import load_config

            cfg = load_config(path)
            values: dict[str, Any] = {}
            if cfg is not None:
                base = path.parent
                if cfg.model:
                    values["model"] = cfg.model
                if cfg.criteria:
                    values["criteria"] = str(base / cfg.criteria)
                if cfg.subject:
                    values["subject"] = cfg.subject
                if cfg.substrate in ("claude-code", "codex"):
                    values["runtime"] = cfg.substrate
            self._values = (path, values)
        return self._values[1]

    def _children(self) -> dict[str, typer.Typer | None]:
        out: dict[str, typer.Typer | None] = {_command_name(c): None for c in self._app.registered_commands}
        for g in self._app.registered_groups:
            if g.name and g.typer_instance is not None:
                out[g.name] = g.typer_instance
        return out

    def __getitem__(self, key: str) -> Any:
        children = self._children()
        if key in children:
            values = self._loader()
            if not values:
                raise KeyError(key)
            group = children[key]
            return dict(values) if group is None else ProjectDefaults(group, _load=self._loader)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._children())

    def __len__(self) -> int:
        return len(self._children())


def _detect_traces(folder: Path) -> list[Path]:
    from ..traces import expand_trace_paths

    try:
        found = expand_trace_paths([folder])
    except Exception:  # an unreadable folder: nothing detected, the user names the traces
        return []
    skip = ("helix-", ".git", "node_modules", ".venv")
    return [p for p in found if not any(part.startswith(skip) for part in p.relative_to(folder).parts)][:20]


def _ask(question: str, default: str | None, choices: tuple[str, ...] | None = None) -> str | None:
    if not sys.stdin.isatty():
        return default
    hint = f" ({'/'.join(choices)})" if choices else ""
    answer = typer.prompt(f"{question}{hint}", default=default or "", show_default=bool(default))
    return answer.strip() or default


@helix_errors
def init(
    directory: Annotated[Path, typer.Argument(help="Project folder.")] = Path("."),
    substrate: Annotated[
        str | None,
        typer.Option("--substrate", help="Who judges: claude-code, codex (subagents) or model (a provider)."),
    ] = None,
    judge_model: Annotated[
        str | None,
        typer.Option("--model", help="Pinned judge model, PROVIDER/MODEL snapshot (required for model)."),
    ] = None,
    traces: Annotated[
        str | None, typer.Option("--traces", help="Trace file or folder (default: detected).")
    ] = None,
    subject: Annotated[
        str | None, typer.Option("--subject", help="The agent's name (default: detected).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing helix.yaml.")] = False,
) -> None:
    """Detect the traces and subject in a folder, choose the judge substrate and model, write helix.yaml.

    Asks for what flags do not give when run in a terminal; otherwise takes the detected values and
    the defaults (substrate claude-code). Every helix command then reads helix.yaml for the defaults
    of --model, --criteria, --subject and --runtime (flags win).
    """
    import yaml

    from .._exceptions import UsageError
    from .._util import write_atomic
    from ..models import parse_model_spec

    target = directory / CONFIG_FILE
    if target.exists() and not force:
        raise UsageError(f"{target} exists; pass --force to replace it")
    found = _detect_traces(directory)
    detected = str(found[0].relative_to(directory)) if found else None
    traces = traces or _ask("trace file or folder", detected)
    criteria = next((p.name for p in (directory / "criteria.yaml",) if p.is_file()), None)
    detected_subject = None
    if criteria:
        from ..judging import load_criteria

        detected_subject = load_criteria(directory / criteria).subject
    subject = subject or _ask("subject (the agent's name)", detected_subject or directory.absolute().name)
    substrate = substrate or _ask("judge substrate", "claude-code", _SUBSTRATES)
    if substrate not in _SUBSTRATES:
        raise UsageError(f"--substrate must be one of {', '.join(_SUBSTRATES)}, not {substrate!r}")
    judge_model = judge_model or _ask("pinned judge model (PROVIDER/MODEL, empty: the runtime's own)", None)
    if substrate == "model" and not judge_model:
        raise UsageError("substrate model needs --model PROVIDER/MODEL (a dated snapshot)")
    if judge_model:
        parse_model_spec(judge_model)  # refuses a floating alias with the fix
    from ._config import ProjectConfig

    cfg = ProjectConfig.model_validate(
        {
            "subject": subject,
            "traces": traces,
            "criteria": criteria,
            "substrate": substrate,
            "model": judge_model,
        }
    )
    write_atomic(target, yaml.safe_dump(cfg.model_dump(mode="json", exclude_none=True), sort_keys=False))
    c = console()
    c.print(f"wrote {target}: " + ", ".join(f"{k}={v}" for k, v in cfg.model_dump(exclude_none=True).items()))
    if found[1:]:
        c.print(f"  ({len(found)} trace files detected; the first was taken)")
    if substrate in ("claude-code", "codex"):
        c.print(f"next: helix agents install --runtime {substrate} --dir {directory}")
    if traces:
        c.print(f"then: helix discover prep {traces} --run helix-runs/discover")


def register(app: typer.Typer) -> None:
    """Add `init` to the root app, and read helix.yaml as every command's defaults."""
    app.command("init")(init)
    settings = dict(app.info.context_settings or {})
    settings["default_map"] = ProjectDefaults(app)
    app.info.context_settings = settings
