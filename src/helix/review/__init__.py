"""helix.review"""

__all__: list[str] = []
