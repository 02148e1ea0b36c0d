"""Real judge outputs with gold labels from ../shared/data, as binary (human, judge) items.

Shared by tests/calibration/test_realdata.py and benchmarks/bench_calibration.py (``realdata``).
Only judge outputs that exist in the sources are used; nothing here derives a judgment from gold.

- DevAI (Agent-as-a-Judge): per requirement, the human consensus vs the gray-box judge agent.
  No uncertainty signal.
- LLMBar and JudgeBench are pairwise. Each pair becomes one binary item for the criterion "the first
  output is the better one": gold says pass (output 1 / A is better) or fail, and the judge passes the
  item when it picks output 1 / A in the original order (LLMBar ``swap = False``, JudgeBench's first
  game). No pick (unparseable, or a tie ``A=B``) is an abstention, never a pass or a fail. The
  uncertainty signal is the judge's own second look: LLMBar's swapped order, JudgeBench's second
  game (mapped back) disagreeing with the first, or tied; for JudgeBench's reward models (whose two
  games always agree) the smallest third of the score margins.
- tau2-bench (gym results): tau2's own LLM judge of natural-language assertions (``nl_assertions``,
  informational in these files) against the programmatic reward. The judge passes a trajectory when
  it found every assertion met; it is unsure when it found some met and some not. A trajectory
  without assertions has no judge output. This judge answers a neighbouring question (the assertions)
  rather than the reward's (database state and required information), so it is measured as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from helix.calibration import CriterionCalibration, Stratum, calibrate

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
DEVAI = DATA / "devai-agent-as-a-judge" / "benchmark" / "judgment"
LLMBAR = DATA / "llmbar" / "Dataset"
JUDGEBENCH = DATA / "judgebench" / "outputs"
TAU2_GYM = DATA / "tau2-bench-gym-results"
TAU2_CLAUDE = DATA / "tau2-bench-submission-claude-sonnet-4-5"


@dataclass(frozen=True)
class Item:
    """One judged item: its id, the gold label, the judge's result (pass/fail/uncertain/None) and
    whether the judge's own second look disagreed (None: no such signal)."""

    id: str
    human: str
    judge: str | None
    unsure: bool | None = None


def devai_items(agent: str) -> list[Item]:
    items: list[Item] = []
    for human_file in sorted((DEVAI / agent / "human_as_a_judge").glob("*.json")):
        judge_file = DEVAI / agent / "agent_as_a_judge" / "gray_box" / human_file.name
        human = json.loads(human_file.read_text())
        judge = {
            r["requirement_id"]: r.get("satisfied")
            for r in json.loads(judge_file.read_text())["requirements"]
        }
        for req in human["requirements"]:
            j = judge.get(req["requirement_id"])
            items.append(
                Item(
                    f"{agent}/{human_file.stem}/{req['requirement_id']}",
                    "pass" if req["satisfied"] else "fail",
                    None if j is None else ("pass" if j else "fail"),
                )
            )
    return items


def llmbar_files() -> Iterator[Path]:
    yield from sorted(LLMBAR.rglob("result.json"))


def llmbar_items(result_file: Path, prefix: str = "") -> list[Item]:
    items: list[Item] = []
    for i, rec in enumerate(json.loads(result_file.read_text())):
        first = rec["results"][0]["swap = False"]["winner"]
        second = rec["results"][0]["swap = True"]["winner"]
        judge = "uncertain" if first is None else ("pass" if str(first) == "1" else "fail")
        items.append(
            Item(
                f"{prefix}{i}",
                "pass" if rec["label"] == 1 else "fail",
                judge,
                unsure=second is None or second != first,
            )
        )
    return items


def llmbar_pooled() -> dict[str, list[Item]]:
    """Items per evaluator × strategy, pooled over every subset that has it."""
    pooled: dict[str, list[Item]] = {}
    for f in llmbar_files():
        rel = f.parent.relative_to(LLMBAR)
        subset, evaluator = rel.parts[:-3], "/".join(rel.parts[-2:])
        pooled.setdefault(evaluator, []).extend(llmbar_items(f, prefix="/".join(subset) + "/"))
    return pooled


_FLIP = {"A>B": "B>A", "B>A": "A>B"}


def judgebench_items(output_file: Path) -> list[Item]:
    records = [json.loads(line) for line in output_file.read_text().splitlines()]
    margins = []
    for rec in records:
        scores = rec["judgments"][0]["judgment"].get("scores")
        if scores:
            margins.append(abs(scores[0] - scores[1]))
    cut = sorted(margins)[len(margins) // 3] if margins else None
    items: list[Item] = []
    for rec in records:
        first, second = rec["judgments"][0]["decision"], rec["judgments"][1]["decision"]
        judge = {"A>B": "pass", "B>A": "fail"}.get(first or "", "uncertain")
        scores = rec["judgments"][0]["judgment"].get("scores")
        if scores and cut is not None:
            unsure = abs(scores[0] - scores[1]) < cut
        else:
            unsure = first not in _FLIP or _FLIP.get(second or "") != first
        items.append(Item(rec["pair_id"], "pass" if rec["label"] == "A>B" else "fail", judge, unsure=unsure))
    return items


def judgebench_name(output_file: Path) -> str:
    return "judgebench/" + output_file.name.split("response_model=")[1].replace(".jsonl", "")


def tau2_nl_items() -> list[Item]:
    """tau2's NL-assertion judge vs the reward, over the gym files that carry assertions."""
    items: list[Item] = []
    for f in sorted(TAU2_GYM.glob("*.json")):
        for sim in json.loads(f.read_text())["simulations"]:
            info = sim.get("reward_info") or {}
            met = [a.get("met") for a in info.get("nl_assertions") or []]
            if not met or info.get("reward") is None:
                continue
            judge = "pass" if all(m is True for m in met) else "fail"
            items.append(
                Item(
                    f"{f.stem}/{sim['task_id']}",
                    "pass" if float(info["reward"]) >= 1 else "fail",
                    judge,
                    unsure=len(set(met)) > 1,
                )
            )
    return items


def tau2_claude_has_judge_outputs() -> bool:
    """Whether the claude submission carries any judge output (its nl_assertions are empty)."""
    path = TAU2_CLAUDE / "claude-sonnet-4-5_airline_default_gpt4.1_1trials.json"
    sims = json.loads(path.read_text())["simulations"]
    return any((s.get("reward_info") or {}).get("nl_assertions") for s in sims)


def all_sets() -> dict[str, list[Item]]:
    """Every real data set with judge outputs that is present, by name."""
    sets: dict[str, list[Item]] = {}
    if DEVAI.exists():
        for agent in ("GPT-Pilot", "MetaGPT", "OpenHands"):
            sets[f"devai/{agent}"] = devai_items(agent)
    if LLMBAR.exists():
        for name, items in sorted(llmbar_pooled().items()):
            sets[f"llmbar/{name}"] = items
    if JUDGEBENCH.exists():
        for f in sorted(JUDGEBENCH.glob("*.jsonl")):
            sets[judgebench_name(f)] = judgebench_items(f)
    if TAU2_GYM.exists():
        sets["tau2-gym/nl-assertions"] = tau2_nl_items()
    return sets


def decided(items: list[Item]) -> list[Item]:
    """The judged population: items the judge decided (abstentions apart)."""
    return [i for i in items if i.judge in ("pass", "fail")]


def true_rate(items: list[Item]) -> float:
    """The gold pass rate of the judged population (what the corrected rate estimates)."""
    population = decided(items)
    return sum(i.human == "pass" for i in population) / len(population)


def strata_for(items: list[Item], labelled: set[str], *, by_uncertainty: bool = False) -> list[Stratum]:
    """Post-stratification cells of the judged population: verdict (× unsure) with the labels in each."""
    cells: dict[tuple[str, str], list[int]] = {}
    for i in decided(items):
        key = (str(i.judge), ("unsure" if i.unsure else "sure") if by_uncertainty else "")
        cell = cells.setdefault(key, [0, 0, 0])
        cell[0] += 1
        if i.id in labelled:
            cell[1] += 1
            cell[2] += i.human == "pass"
    return [
        Stratum(name="/".join(x for x in k if x), verdict=k[0], judged=c[0], labelled=c[1], human_pass=c[2])
        for k, c in sorted(cells.items())
    ]


def measure(items: list[Item], labelled: set[str], *, name: str, seed: int = 0) -> CriterionCalibration:
    """``helix validate``'s external-judge measurement with these items labelled (a random design)."""
    pairs = [(i.human, i.judge) for i in items if i.id in labelled]
    return calibrate(
        pairs,
        strata=strata_for(items, labelled),
        design="random",
        design_source="census" if labelled >= {i.id for i in decided(items)} else "given",
        mode="external",
        split="all",
        criterion_id=name,
        seed=seed,
    )


def random_share(items: list[Item], share: float, seed: int) -> set[str]:
    """A seeded random ``share`` of the item ids (the labelled ones)."""
    import random

    ids = sorted(i.id for i in items)
    return set(random.Random(seed).sample(ids, round(share * len(ids))))
