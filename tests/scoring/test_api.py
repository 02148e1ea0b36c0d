"""The public names of helix.scoring, helix.stats and helix.report resolve and stay isort-sorted."""

from __future__ import annotations

import importlib

import pytest


def _isort_key(name: str) -> tuple[int, str]:
    kind = 0 if name.isupper() else (1 if name[:1].isupper() else 2)
    return kind, name


@pytest.mark.parametrize("package", ["helix.scoring", "helix.stats", "helix.report"])
def test_all_is_sorted_and_resolvable(package: str) -> None:
    module = importlib.import_module(package)
    names = list(module.__all__)
    assert names == sorted(names, key=_isort_key)
    assert len(names) == len(set(names))
    for name in names:
        assert getattr(module, name) is not None, name
        assert not name.startswith("_")
