"""helix.examples"""

__all__: list[str] = []
