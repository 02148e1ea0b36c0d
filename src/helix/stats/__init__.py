"""Pure numerics shared by scoring, calibration and campaigns: intervals, quantiles, series summaries."""

from ._intervals import RowStatistic, bootstrap_ci, wilson_interval
from ._quantiles import SeriesDistribution, nearest_rank_quantile, summarize_number_series

__all__ = [
    "RowStatistic",
    "SeriesDistribution",
    "bootstrap_ci",
    "nearest_rank_quantile",
    "summarize_number_series",
    "wilson_interval",
]
