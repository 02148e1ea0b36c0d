"""helix.stats"""

__all__: list[str] = []
