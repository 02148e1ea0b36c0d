"""The model of helix.yaml (imported lazily: pydantic is not loaded for `helix --help`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["CONFIG_FORMAT_VERSION", "ProjectConfig", "load_config"]

CONFIG_FORMAT_VERSION = 1
Substrate = Literal["claude-code", "codex", "model"]


class ProjectConfig(BaseModel):
    """The content of ``helix.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = CONFIG_FORMAT_VERSION
    subject: str | None = None
    traces: str | None = None
    """The project's trace file or folder (relative to helix.yaml)."""
    criteria: str | None = None
    substrate: Substrate = "claude-code"
    """Who judges: an agent runtime's subagents (claude-code, codex) or an LLM provider (model)."""
    model: str | None = None
    """The pinned judge model (PROVIDER/MODEL snapshot); required for substrate model."""


def load_config(path: Path) -> ProjectConfig | None:
    """The config at ``path`` (None when absent); a broken file raises InputFileError naming the field."""
    import yaml
    from pydantic import ValidationError

    from .._exceptions import InputFileError

    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return ProjectConfig.model_validate(data)
    except yaml.YAMLError as exc:
        raise InputFileError(f"not valid YAML ({exc})", path=path) from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputFileError(
            f"{err['msg']}; fix it or run `helix init` again",
            path=path,
            field=".".join(str(x) for x in err["loc"]),
        ) from exc
