"""helix.scoring"""

__all__: list[str] = []
