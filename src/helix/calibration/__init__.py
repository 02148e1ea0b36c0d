"""helix.calibration"""

__all__: list[str] = []
