"""The top-level API stays small and honest."""

import helix


def test_all_is_sorted_and_resolvable() -> None:
    assert list(helix.__all__) == sorted(helix.__all__)
    for name in helix.__all__:
        assert hasattr(helix, name), name


def test_every_error_descends_from_the_root() -> None:
    for name in helix.__all__:
        obj = getattr(helix, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, helix.HelixError)
