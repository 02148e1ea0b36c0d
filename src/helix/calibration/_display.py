"""How a corrected rate is shown: for a judge that is not certified, the interval leads and the point
estimate never stands alone (a number without its uncertainty reads as a measurement it is not)."""

from __future__ import annotations

from ._calibrate import CriterionCalibration

__all__ = ["theta_text"]


def theta_text(r: CriterionCalibration) -> str:
    """``57.1% [41.2%, 73.0%]`` for a certified judge; ``[41.2%, 73.0%] (95% interval; point 57.1%, judge
    refused)`` otherwise; or why there is no number."""
    if r.theta_status != "ok" or r.theta is None or r.theta_interval is None:
        return f"{r.theta_status}: {r.theta_reason or 'not computed'}"
    low, high = r.theta_interval
    if r.status == "certified":
        return f"{r.theta:.1%} [{low:.1%}, {high:.1%}]"
    return f"[{low:.1%}, {high:.1%}] (95% interval; point {r.theta:.1%}, judge {r.status})"
