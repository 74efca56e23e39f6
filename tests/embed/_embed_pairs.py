"""A small labelled set of code/finance text pairs used to check embedder quality."""

from __future__ import annotations

#: Pairs that say the same thing in different words.
PARAPHRASES: list[tuple[str, str]] = [
    ("rolling mean of closing price over 5 days", "5-day moving average of close"),
    ("standard deviation of daily returns over 20 days", "20 day rolling volatility of returns"),
    (
        "ratio of today's volume to its 10-day average",
        "volume divided by mean volume of last 10 days",
    ),
    ("highest high over the past 30 days", "30-day rolling maximum of the high price"),
    (
        "percentage change of close from the previous day",
        "daily return computed with pct_change on close",
    ),
    ("KeyError: column 'close' not found in DataFrame", "the dataframe has no column named close"),
    ("exponential moving average of close with span 12", "EMA(12) of the closing price"),
    (
        "correlation between close and volume over 10 days",
        "10-day rolling corr of close price and volume",
    ),
    ("lowest low in the last 60 trading days", "60 day rolling minimum of low prices"),
    ("cross-sectional rank of momentum each day", "rank momentum across stocks per date"),
    ("log of the ratio between high and low", "np.log(high / low)"),
    ("fill missing values with the previous observation", "forward fill NaN values with ffill"),
]

#: Pairs about unrelated things (still from the code/finance domain).
UNRELATED: list[tuple[str, str]] = [
    ("rolling mean of closing price over 5 days", "parse the json configuration file"),
    (
        "standard deviation of daily returns over 20 days",
        "KeyError: column 'close' not found in DataFrame",
    ),
    ("ratio of today's volume to its 10-day average", "sort a list of strings alphabetically"),
    ("highest high over the past 30 days", "open a database connection with a timeout"),
    ("percentage change of close from the previous day", "write unit tests for the http client"),
    ("exponential moving average of close with span 12", "reverse the words in a sentence"),
    (
        "correlation between close and volume over 10 days",
        "compute the factorial of n recursively",
    ),
    ("lowest low in the last 60 trading days", "merge two dictionaries into one"),
    ("cross-sectional rank of momentum each day", "ZeroDivisionError: division by zero"),
    ("log of the ratio between high and low", "count vowels in a string"),
    ("fill missing values with the previous observation", "bond coupon payment schedule"),
    ("5-day moving average of close", "check whether a number is prime"),
]
