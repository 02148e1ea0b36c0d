"""Living suites: append-only collections (criteria, dataset cases) that only ever grow.

One writer for every living artifact, generic over what its members are:

- :func:`upsert_by_id` merges incoming members into the current ones (pure): a member whose id is
  new is appended, one whose id exists replaces it in place, and no member is ever dropped.
- :func:`assert_monotonic_growth` fails loudly (:class:`SuiteShrankError`, listing the lost ids)
  when a new membership is missing an id of the old one.
- :func:`append_revision` records the suite's full membership as the next line of its history file
  ``<dir>/suites/<name>.history.jsonl`` (:data:`SUITE_HISTORY_DIR`), after checking the new ids
  keep every id of the last recorded revision. Provenance is a counter (the revision number) and a
  caller-given ``source`` string: no clock, so the same merges give byte-identical histories.

``helix audit``'s ``suites-never-shrank`` check reads these history files with
:func:`read_suite_history` and :func:`first_shrink`: the writer and the audit share one format and
one rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._exceptions import InputFileError, RunError
from ._files import write_atomic

__all__ = [
    "SUITE_HISTORY_DIR",
    "SUITE_HISTORY_SUFFIX",
    "SUITE_REVISION_FORMAT_VERSION",
    "Shrink",
    "SuiteMerge",
    "SuiteRevision",
    "SuiteShrankError",
    "append_revision",
    "assert_monotonic_growth",
    "first_shrink",
    "history_path",
    "read_suite_history",
    "upsert_by_id",
]

SUITE_REVISION_FORMAT_VERSION = 1
SUITE_HISTORY_DIR = "suites"
SUITE_HISTORY_SUFFIX = ".history.jsonl"

T = TypeVar("T")


class SuiteRevision(BaseModel):
    """One line of a suite history: the suite's full membership at a revision, and what changed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = SUITE_REVISION_FORMAT_VERSION
    suite: str = Field(min_length=1)
    revision: int = Field(ge=0)
    ids: tuple[str, ...]
    """Every member id in the suite at this revision, in suite order."""
    added: tuple[str, ...] = ()
    """Ids new at this revision."""
    updated: tuple[str, ...] = ()
    """Ids whose content this revision replaced."""
    source: str | None = None
    """Where the change came from (e.g. ``discover aggregate <run>``): the caller's words, never a time."""


class SuiteShrankError(RunError):
    """A living suite would lose members (or its history was rewritten): refused, loudly."""

    def __init__(self, message: str, *, suite: str, removed: Sequence[str]) -> None:
        self.suite = suite
        self.removed = tuple(removed)
        super().__init__(message)


@dataclass(frozen=True, kw_only=True)
class SuiteMerge(Generic[T]):
    """The result of :func:`upsert_by_id`."""

    members: tuple[T, ...]
    added: tuple[str, ...]
    updated: tuple[str, ...]
    unchanged: tuple[str, ...]

    @property
    def changed(self) -> bool:
        """Whether the merge added or replaced anything."""
        return bool(self.added or self.updated)


def _ids(items: Iterable[T], id_of: Callable[[T], str], what: str) -> list[str]:
    ids = [id_of(x) for x in items]
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise ValueError(f"id {i!r} appears twice in the {what} members; ids must be unique")
        seen.add(i)
    return ids


def upsert_by_id(current: Sequence[T], incoming: Sequence[T], *, id_of: Callable[[T], str]) -> SuiteMerge[T]:
    """Merge ``incoming`` into ``current`` by id: replace in place, append new, never drop.

    Members that compare equal to the one they replace count as unchanged. The result always holds
    every id of ``current`` (asserted).
    """
    old_ids = _ids(current, id_of, "current")
    new_ids = _ids(incoming, id_of, "incoming")
    by_id = dict(zip(new_ids, incoming, strict=True))
    members: list[T] = []
    updated: list[str] = []
    unchanged: list[str] = []
    for i, member in zip(old_ids, current, strict=True):
        if i in by_id and by_id[i] != member:
            members.append(by_id[i])
            updated.append(i)
        else:
            members.append(member)
            unchanged.append(i)
    old = set(old_ids)
    added = [i for i in new_ids if i not in old]
    members.extend(by_id[i] for i in added)
    merged = SuiteMerge(
        members=tuple(members), added=tuple(added), updated=tuple(updated), unchanged=tuple(unchanged)
    )
    assert_monotonic_growth(old_ids, [id_of(m) for m in merged.members], suite="merge")
    return merged


def assert_monotonic_growth(before: Iterable[str], after: Iterable[str], *, suite: str) -> None:
    """Raise :class:`SuiteShrankError` when ``after`` lacks any id of ``before``."""
    kept = set(after)
    removed = [i for i in dict.fromkeys(before) if i not in kept]
    if removed:
        shown = ", ".join(repr(i) for i in removed[:20]) + (" ..." if len(removed) > 20 else "")
        raise SuiteShrankError(
            f"living suite {suite!r} would lose {len(removed)} member(s): {shown}. A living suite only "
            "grows: restore them (retire a member by marking it, never by deleting it)",
            suite=suite,
            removed=removed,
        )


@dataclass(frozen=True, kw_only=True)
class Shrink:
    """The first place a history breaks the growth rule."""

    revision: int
    previous: int
    removed: tuple[str, ...]
    """Ids dropped (empty when the revision numbers went backwards)."""

    def describe(self) -> str:
        """One line saying what went wrong."""
        if not self.removed:
            return f"revision {self.revision} follows revision {self.previous}: the history was rewritten"
        return (
            f"revision {self.revision} dropped {len(self.removed)} id(s) present at revision {self.previous}"
        )


def first_shrink(revisions: Sequence[SuiteRevision]) -> Shrink | None:
    """The first revision that does not increase the counter or drops an id of the one before."""
    for prev, cur in zip(revisions, revisions[1:], strict=False):
        if cur.revision <= prev.revision:
            return Shrink(revision=cur.revision, previous=prev.revision, removed=())
        dropped = tuple(sorted(set(prev.ids) - set(cur.ids)))
        if dropped:
            return Shrink(revision=cur.revision, previous=prev.revision, removed=dropped)
    return None


def history_path(directory: str | Path, suite: str) -> Path:
    """Where the history of ``suite`` lives under ``directory``."""
    return Path(directory) / SUITE_HISTORY_DIR / f"{suite}{SUITE_HISTORY_SUFFIX}"


def read_suite_history(path: str | Path) -> list[SuiteRevision]:
    """Every revision of a history file, in the order written (a missing file is an empty history).

    Raises :class:`~helix.InputFileError` (path, line) for a line that is not a revision.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return []
    revisions: list[SuiteRevision] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            revisions.append(SuiteRevision.model_validate(orjson.loads(line)))
        except (orjson.JSONDecodeError, ValidationError) as exc:
            reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise InputFileError(
                f"not a suite revision ({reason}); the history is append-only: restore the line from "
                "version control",
                path=p,
                line=number,
            ) from exc
    return revisions


def append_revision(
    directory: str | Path,
    suite: str,
    ids: Sequence[str],
    *,
    added: Sequence[str] = (),
    updated: Sequence[str] = (),
    source: str | None = None,
) -> SuiteRevision | None:
    """Record ``ids`` as the next revision of ``suite``'s history (None when nothing changed).

    Refuses (:class:`SuiteShrankError`) when ``ids`` lacks an id of the last recorded revision, or
    when the history already breaks the growth rule. The file is rewritten atomically with the new
    line at its end, so a crash leaves the old history or the new one, never half a line.
    """
    path = history_path(directory, suite)
    revisions = read_suite_history(path)
    broken = first_shrink(revisions)
    if broken is not None:
        raise SuiteShrankError(
            f"{path}: {broken.describe()}; the history must be restored before it can grow",
            suite=suite,
            removed=broken.removed,
        )
    if len(set(ids)) != len(ids):
        raise ValueError(f"suite {suite!r}: ids must be unique")
    last = revisions[-1] if revisions else None
    if last is not None:
        assert_monotonic_growth(last.ids, ids, suite=suite)
        if tuple(ids) == last.ids and not added and not updated:
            return None
    revision = SuiteRevision(
        suite=suite,
        revision=0 if last is None else last.revision + 1,
        ids=tuple(ids),
        added=tuple(added),
        updated=tuple(updated),
        source=source,
    )
    old = path.read_bytes() if path.is_file() else b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    line = orjson.dumps(revision.model_dump(mode="json")) + b"\n"
    write_atomic(path, old + line)
    return revision
