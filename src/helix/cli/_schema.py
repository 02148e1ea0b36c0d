"""`helix schema NAME`: print the JSON Schema of a Helix file format."""

from __future__ import annotations

from typing import Annotated

import typer

from ._common import helix_errors

__all__ = ["SCHEMAS", "register"]

# name -> (module, attribute, what it describes)
SCHEMAS: dict[str, tuple[str, str, str]] = {
    "verdict": ("helix.judging", "VerdictFile", "a <key>.verdict.json file a judge writes"),
    "packet": ("helix.judging", "Packet", "a <key>.packet.json judging unit PREP writes"),
    "criteria": ("helix.judging", "CriteriaMatrix", "a criteria matrix (YAML or JSON)"),
    "trace": ("helix.traces", "Trace", "one line of Helix's canonical trace JSONL"),
    "scorecard": ("helix.scoring", "Scorecard", "the scorecard.json AGGREGATE writes"),
    "run": ("helix.judging", "RunManifest", "the run.json manifest of a run directory"),
    "determination": (
        "helix.discovery",
        "DeterminationFile",
        "a determiner's <key>.verdict.json (discovery)",
    ),
    "cluster": ("helix.discovery", "ClusterFile", "a clusterer's <key>.verdict.json (discovery)"),
    "profile": ("helix.discovery", "SubjectProfile", "the profile.yaml `helix profile` writes"),
    "labels": ("helix.review", "HumanLabel", "one line of a labels JSONL file (docs/labels.md)"),
}


@helix_errors
def schema(
    name: Annotated[str, typer.Argument(help="One of: " + ", ".join(SCHEMAS) + ".")],
) -> None:
    """Print the JSON Schema of a Helix file format.

    In a verdict entry `critique` must come before `result` (reason first, then decide): JSON Schema
    cannot say that, so Helix's parser enforces it.
    """
    import importlib

    import orjson

    from .._exceptions import UsageError

    if name not in SCHEMAS:
        raise UsageError(f"unknown schema {name!r}; choose one of: {', '.join(SCHEMAS)}")
    module, attr, what = SCHEMAS[name]
    model = getattr(importlib.import_module(module), attr)
    doc = model.model_json_schema()
    doc = {"$schema": "https://json-schema.org/draft/2020-12/schema", "description": what, **doc}
    typer.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())


def register(app: typer.Typer) -> None:
    """Add `schema` to the root app."""
    app.command("schema")(schema)
