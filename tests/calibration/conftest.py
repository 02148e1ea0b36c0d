"""A real judged run directory (PREP → verdict files → AGGREGATE) and human labels for it."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from helix import aggregate_run
from helix.judging import (
    PROMPT_VERSION,
    CriteriaMatrix,
    Criterion,
    CriterionVerdict,
    JudgeInfo,
    VerdictFile,
    open_run,
    prep_run,
)
from helix.review import HumanLabel, write_labels_jsonl
from helix.traces import Message, Trace

N_TRACES = 200
JUDGE_MODEL = "openai/gpt-4o-2024-08-06"


def human_label(i: int) -> str:
    return "pass" if i % 2 == 0 else "fail"


def judge_result(i: int) -> str:
    """A judge that errs on 1 in 10 human passes and 1 in 5 human fails, and abstains on a few."""
    if i % 37 == 0:
        return "uncertain"
    if human_label(i) == "pass":
        return "fail" if i % 20 == 10 else "pass"
    return "pass" if i % 10 in (1, 3) and i % 20 < 10 else "fail"


def _trace(i: int) -> Trace:
    return Trace(
        id=f"t{i:03d}",
        messages=[
            Message(role="user", content=f"Please refund order {1000 + i}."),
            Message(role="assistant", content=f"Refund for order {1000 + i} handled."),
        ],
    )


def make_run(root: Path) -> Path:
    run_dir = root / "run"
    matrix = CriteriaMatrix(
        subject="shop",
        criteria=(
            Criterion(
                id="refund_ok",
                title="Refund handled per policy",
                kind="llm",
                question="Was the refund handled per policy?",
                pass_definition="It was.",
                fail_definition="It was not.",
            ),
        ),
    )
    prep_run([_trace(i) for i in range(N_TRACES)], matrix, run_dir, unit="criterion")
    run = open_run(run_dir)
    judge = JudgeInfo(runtime="dispatch", model=JUDGE_MODEL, temperature=0.0, prompt_version=PROMPT_VERSION)
    for unit in run.units:
        (tid,) = unit.trace_ids
        i = int(tid[1:])
        result = judge_result(i)
        verdict = CriterionVerdict(
            criterion_id="refund_ok",
            critique=f"Looked at order {1000 + i}.",
            result=result,  # type: ignore[arg-type]
            confidence=0.9,
            blocked_by="no order record" if result == "uncertain" else None,
        )
        vf = VerdictFile(key=unit.key, verdicts=(verdict,), judge=judge)
        run.verdict_path(unit.key).parent.mkdir(parents=True, exist_ok=True)
        run.verdict_path(unit.key).write_bytes(orjson.dumps(vf.model_dump(mode="json")))
    aggregate_run(run_dir)
    return run_dir


def make_labels(path: Path, n: int = N_TRACES) -> Path:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    labels = [
        HumanLabel(
            trace_id=f"t{i:03d}",
            criterion_id="refund_ok",
            label=human_label(i),
            annotator="ana",
            created_at=at,
        )  # type: ignore[arg-type]
        for i in range(n)
    ]
    write_labels_jsonl(path, labels)
    return path


@pytest.fixture(scope="session")
def _built_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("calibration-run"))


@pytest.fixture
def judged_run(_built_run: Path, tmp_path: Path) -> Path:
    """A fresh copy of the judged run (validation writes into it)."""
    return Path(shutil.copytree(_built_run, tmp_path / "run"))


@pytest.fixture
def labels_file(tmp_path: Path) -> Path:
    return make_labels(tmp_path / "labels.jsonl")
