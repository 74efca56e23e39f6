"""A synthetic ``daily_f`` table: daily fundamentals in RD-Agent's naming style.

The frame has the index of the ``daily_pv`` table it is built from (same days, instruments,
late listings and suspended days: a suspended row is all NaN), float columns:

=========================  ==========================================================  =========
column                     meaning                                                     changes
=========================  ==========================================================  =========
``TradableACapital``       tradable A shares, in 10,000 shares (about 1e3 to 1e5)      quarterly
``TotalCapital``           all shares (tradable / a float ratio of 0.3 to 1)           quarterly
``TradableMarketValue``    ``$close * TradableACapital`` (in 10,000 of currency)       daily
``TotalMarketValue``       ``$close * TotalCapital``                                   daily
``TurnoverRate``           ``$volume / shares``, in percent                            daily
``TurnoverRate_30D``       30-day mean of ``TurnoverRate`` per instrument              daily
``ROE``                    return on equity (about -0.1 to 0.3)                        quarterly
``ROA``                    return on assets (about ROE / 2.5)                          quarterly
``EP``                     earnings / price: ``ROE * book per share / $close``          daily
``B/P``                    book / price: ``book per share / $close`` (0.1 to 3)        daily
``SP``                     sales / price                                               daily
=========================  ==========================================================  =========

Units follow the Chinese vendors' tables RD-Agent's data come from: share counts in 10,000
shares, market values in 10,000 of currency, turnover rates in percent. (Ratios such as
``TurnoverRate_30D / TradableACapital`` need not stay above 1e-6: the evaluator's absolute
tolerance follows the truth's median magnitude, see ``EvaluatorSettings.equal_value_atol``.)
"Quarterly" values are constant between report dates (every 63 trading days, shifted per
instrument) and jump there, as reported accounting figures do.

Any other column a reference reads (see :mod:`._rdagent_columns`) is synthesized by
:func:`synthesize_column`, whose generator is chosen by the column's name (case-insensitive,
first rule that matches):

* ``marketvalue``/``mktcap``/``marketcap``/``mv`` → ``$close`` times a quarterly share count;
* ``capital``/``shares`` → a quarterly share count (in 10,000 shares);
* ``turnover`` → ``$volume`` over a share count, in percent (a trailing mean when the name
  ends in ``_<n>D``);
* ``vwap`` → the typical price ``($high + $low + $close) / 3``;
* ``money``/``amount`` → ``$close * $volume``; ``volume`` → ``$volume``;
* ``return``/``ret`` → the daily return of ``$close`` per instrument;
* a name with ``/P`` or ``P/``, or starting ``EP``, ``BP``, ``SP``, ``CFP``, ``DP`` → a
  quarterly per-share value over ``$close`` (a price ratio);
* ``roe``/``roa``/``roic``/``margin``/``growth``/``yoy``/``ratio`` → a quarterly ratio around
  0.08;
* anything else → a quarterly standard-normal score.

Every column draws from its own generator seeded by ``(seed, column name)``, so adding a column
leaves the others unchanged.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

__all__ = ["DAILY_F_COLUMNS", "daily_f_from_pv", "synthesize_column"]

DAILY_F_COLUMNS = (
    "B/P",
    "EP",
    "SP",
    "ROE",
    "ROA",
    "TotalCapital",
    "TradableACapital",
    "TotalMarketValue",
    "TradableMarketValue",
    "TurnoverRate",
    "TurnoverRate_30D",
)
_QUARTER = 63
#: Shares per unit of the share-count columns.
_UNIT = 10_000.0


def _rng(seed: int, column: str) -> np.random.Generator:
    digest = hashlib.sha256(f"{seed}|{column}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _quarterly(pv: pd.DataFrame, draw: Callable[[np.random.Generator, int], np.ndarray],
               rng: np.random.Generator) -> pd.Series:  # fmt: skip
    """A value per instrument and quarter (``draw(rng, n_quarters)``), held between reports."""
    dates = pv.index.get_level_values("datetime")
    day = pd.Series(pd.factorize(dates, sort=True)[0], index=pv.index)
    names = pv.index.get_level_values("instrument")
    out = pd.Series(np.nan, index=pv.index, dtype="float64")
    n_days = int(day.max()) + 1 if len(day) else 0
    for name in pd.unique(names):
        rows = names == name
        offset = int(rng.integers(0, _QUARTER))
        quarter = (day[rows].to_numpy() + offset) // _QUARTER
        values = draw(rng, (n_days + offset) // _QUARTER + 1)
        out[rows] = values[quarter]
    return out


def _shares(rng: np.random.Generator, pv: pd.DataFrame) -> pd.Series:
    def draw(g: np.random.Generator, n: int) -> np.ndarray:
        level = g.normal(8.3, 1.0)  # e^8.3 ~ 4e3 (x 10,000 shares)
        return np.round(np.exp(level + np.cumsum(g.normal(0.0, 0.02, n))), 2)

    return _quarterly(pv, draw, rng)


def _ratio(rng: np.random.Generator, pv: pd.DataFrame, mean: float, sd: float) -> pd.Series:
    def draw(g: np.random.Generator, n: int) -> np.ndarray:
        base = g.normal(mean, sd)
        return base + g.normal(0.0, sd / 3, n)

    return _quarterly(pv, draw, rng)


def _per_share(rng: np.random.Generator, pv: pd.DataFrame) -> pd.Series:
    """A per-share value (book, sales, cash flow) of 0.1 to 3 times the first close."""
    first = pv["$close"].groupby(level="instrument").transform("first")

    def draw(g: np.random.Generator, n: int) -> np.ndarray:
        return np.exp(g.normal(-0.5, 0.6) + np.cumsum(g.normal(0.0, 0.05, n)))

    return _quarterly(pv, draw, rng) * first


def _trailing(s: pd.Series, days: int) -> pd.Series:
    return s.groupby(level="instrument").transform(lambda x: x.rolling(days, min_periods=1).mean())


_PRICE_RATIO = re.compile(r"/p|p/|^(ep|bp|sp|cfp|dp)", re.IGNORECASE)
_WINDOW = re.compile(r"_(\d+)d$", re.IGNORECASE)


def synthesize_column(name: str, pv: pd.DataFrame, seed: int = 0) -> pd.Series:
    """A plausible column ``name`` for the rows of ``pv`` (rules in the module docstring);
    NaN where ``pv`` is suspended.

    Example:
        >>> from costeer_lab.suites._rdagent_data import daily_pv_frame
        >>> pv = daily_pv_frame("synthetic", 3, 30)
        >>> s = synthesize_column("FloatMarketValue", pv)
        >>> bool((s.dropna() > 10).all()), s.isna().equals(pv["$close"].isna())
        (True, True)
    """
    key = name.lower()
    rng = _rng(seed, name)
    close, volume = pv["$close"], pv["$volume"]
    if any(k in key for k in ("marketvalue", "mktcap", "marketcap")) or key.endswith("mv"):
        out = close * _shares(rng, pv)
    elif "capital" in key or "shares" in key:
        out = _shares(rng, pv)
    elif "turnover" in key:
        out = volume / (_shares(rng, pv) * _UNIT) * 100.0
        window = _WINDOW.search(key)
        if window:
            out = _trailing(out, int(window.group(1)))
    elif "vwap" in key and {"$high", "$low"} <= set(pv.columns):
        out = (pv["$high"] + pv["$low"] + close) / 3.0
    elif "money" in key or "amount" in key:
        out = close * volume
    elif "volume" in key:
        out = volume.copy()
    elif "return" in key or re.search(r"(^|_)ret", key):
        out = close / close.groupby(level="instrument").shift(1) - 1.0
    elif _PRICE_RATIO.search(name):
        out = _per_share(rng, pv) / close
    elif any(k in key for k in ("roe", "roa", "roic", "margin", "growth", "yoy", "ratio")):
        out = _ratio(rng, pv, 0.08, 0.08)
    else:
        out = _ratio(rng, pv, 0.0, 1.0)
    return out.where(close.notna()).astype("float64").rename(name)


def daily_f_from_pv(pv: pd.DataFrame, extra: Iterable[str] = (), seed: int = 0) -> pd.DataFrame:
    """The ``daily_f`` table of ``pv`` (see the module docstring) plus the ``extra`` columns.

    Example:
        >>> from costeer_lab.suites._rdagent_data import daily_pv_frame
        >>> f = daily_f_from_pv(daily_pv_frame("synthetic", 3, 70), ["PE_TTM"])
        >>> list(f.index.names), "TradableMarketValue" in f, "PE_TTM" in f
        (['datetime', 'instrument'], True, True)
        >>> roe = f["ROE"].dropna().groupby(level="instrument").nunique()
        >>> bool((roe <= 3).all())  # quarterly steps: 70 days hold at most two report dates
        True
    """
    close, volume = pv["$close"], pv["$volume"]
    live = close.notna()
    tradable = _shares(_rng(seed, "TradableACapital"), pv)
    float_ratio = _quarterly(pv, lambda g, n: np.full(n, g.uniform(0.3, 1.0)),
                             _rng(seed, "float ratio"))  # fmt: skip
    total = (tradable / float_ratio).round(2)
    roe = _ratio(_rng(seed, "ROE"), pv, 0.09, 0.07)
    book = _per_share(_rng(seed, "book"), pv)
    sales = _per_share(_rng(seed, "sales"), pv) * 1.5
    turnover = volume / (tradable * _UNIT) * 100.0
    cols: dict[str, pd.Series] = {
        "B/P": book / close,
        "EP": roe * book / close,
        "SP": sales / close,
        "ROE": roe,
        "ROA": roe / 2.5,
        "TotalCapital": total,
        "TradableACapital": tradable,
        "TotalMarketValue": close * total,
        "TradableMarketValue": close * tradable,
        "TurnoverRate": turnover,
        "TurnoverRate_30D": _trailing(turnover, 30),
    }
    out = pd.DataFrame({k: v.where(live).astype("float64") for k, v in cols.items()})
    for name in extra:
        if name not in out.columns:
            out[name] = synthesize_column(name, pv, seed)
    return out
