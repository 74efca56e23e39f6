"""The labelled set the pattern threshold is calibrated on: task descriptions as a pattern
stores them, each with requests an agent would search with for the same task (matches); every
request paired with another task's description is a non-match.

Written for this project (quant factors and small coding tasks, like the loop's own tasks);
deterministic, so a calibration reproduces. :func:`calibration_pairs` builds the pairs.
"""

from __future__ import annotations

__all__ = ["TOPICS", "calibration_pairs"]

#: ``(stored description, (request, request))``: two requests for the task each description
#: solves, worded as an agent would ask (shorter, other words, sometimes a synonym).
TOPICS: tuple[tuple[str, tuple[str, str]], ...] = (
    (
        "20-day moving average of the close price",
        ("20-day moving average", "rolling mean of the close over 20 days"),
    ),
    (
        "10-day price momentum: return over ten days",
        ("10-day momentum factor", "price momentum over the last ten days"),
    ),
    (
        "5-day short-term reversal: minus the return over five days",
        ("short-term reversal factor", "negative 5-day return reversal"),
    ),
    (
        "20-day rolling volatility of daily returns",
        ("volatility of daily returns over 20 days", "rolling standard deviation of returns"),
    ),
    (
        "cross-sectional rank of the daily trading volume",
        ("rank of daily volume across stocks", "cross-sectional volume rank"),
    ),
    (
        "z-score of the close price against its 60-day mean and standard deviation",
        ("60-day z-score of the close price", "standardized close price over 60 days"),
    ),
    (
        "relative strength index RSI over 14 days",
        ("14-day RSI", "relative strength index of the price"),
    ),
    (
        "moving average convergence divergence MACD of the close",
        ("MACD indicator", "moving average convergence divergence"),
    ),
    (
        "Bollinger band width: two standard deviations around the 20-day mean",
        ("Bollinger bands width", "20-day Bollinger band width of the close"),
    ),
    (
        "turnover ratio: volume divided by shares outstanding",
        ("share turnover ratio", "volume over shares outstanding"),
    ),
    (
        "Amihud illiquidity: absolute return divided by dollar volume",
        ("Amihud illiquidity measure", "absolute return per dollar volume"),
    ),
    (
        "market beta from a 60-day regression of stock returns on market returns",
        ("60-day market beta", "beta of the stock against the market"),
    ),
    (
        "book-to-market value ratio from the balance sheet",
        ("book to market ratio", "value factor book-to-market"),
    ),
    (
        "earnings yield: earnings per share divided by price",
        ("earnings yield factor", "EPS over price"),
    ),
    (
        "high minus low range of the day divided by the close",
        ("daily high-low range over close", "intraday range of the price"),
    ),
    (
        "volume-weighted average price VWAP deviation of the close",
        ("close deviation from VWAP", "distance of the close to the volume-weighted price"),
    ),
    (
        "industry-neutral factor: subtract the industry mean of the factor",
        ("neutralize a factor by industry", "industry demeaned factor"),
    ),
    (
        "fill missing values forward within each stock",
        ("forward fill missing values per stock", "ffill NaN values by instrument"),
    ),
    (
        "winsorize a factor at the 1st and 99th percentiles each day",
        ("winsorize factor outliers", "clip the factor at daily percentiles"),
    ),
    (
        "reverse a string",
        ("reverse the characters of a string", "string reversal"),
    ),
    (
        "count how often each word occurs in a text",
        ("word frequency count", "count occurrences of every word"),
    ),
    (
        "parse a CSV file and sum one column",
        ("sum a column of a CSV file", "read CSV and add up a column"),
    ),
    (
        "binary search for a value in a sorted list",
        ("binary search in a sorted list", "find an item in a sorted array by bisection"),
    ),
    (
        "merge two sorted lists into one sorted list",
        ("merge sorted lists", "combine two sorted arrays in order"),
    ),
    (
        "remove duplicate items from a list keeping their order",
        ("deduplicate a list preserving order", "drop repeated items from a list"),
    ),
    (
        "validate an email address with a regular expression",
        ("check an email address is valid", "email validation regex"),
    ),
    (
        "retry an HTTP request with exponential backoff",
        ("exponential backoff retries", "retry a failing request with growing delays"),
    ),
    (
        "flatten a nested list of lists",
        ("flatten nested lists", "turn a list of lists into one list"),
    ),
    (
        "compute the factorial of a number recursively",
        ("recursive factorial", "factorial of n"),
    ),
    (
        "parse an XML configuration file and validate its schema",
        ("validate an XML config against a schema", "read and check an XML configuration"),
    ),
)


def calibration_pairs() -> list[tuple[str, str, bool]]:
    """``(query, stored description, match)`` of the labelled set, in a fixed order.

    Every request is paired with its own task's description (a match) and with every other
    task's description (not a match).

    Example:
        >>> pairs = calibration_pairs()
        >>> pairs[0]
        ('20-day moving average', '20-day moving average of the close price', True)
        >>> sum(m for _, _, m in pairs), len(pairs)
        (60, 1800)
    """
    out: list[tuple[str, str, bool]] = []
    for i, (_, requests) in enumerate(TOPICS):
        for query in requests:
            for j, (stored, _) in enumerate(TOPICS):
                out.append((query, stored, i == j))
    out.sort(key=lambda p: not p[2])  # matches first, each group in its order (stable sort)
    return out
