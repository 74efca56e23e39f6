"""A synthetic ``high_freq`` table: 1-minute bars consistent with the daily bars.

Layout (as RD-Agent's high-frequency tasks read it): index (``datetime``: the minute's
timestamp, ``instrument``), sorted by (datetime, instrument); float columns ``$open``,
``$close``, ``$high``, ``$low``, ``$volume``.

* Days: the last ``n_days`` trading days of the ``daily_pv`` table it is built from (the same
  instruments, late listings and suspended days: a suspended day has its minutes, all NaN).
* Minutes: the bars of China A-share trading hours, stamped at their end: 09:31 to 11:30 and
  13:01 to 15:00 (240 bars). ``minutes_per_day`` (2 to 240) keeps the first half of that count
  in the morning session and the rest in the afternoon one, so a small table still spans both.
* Consistency with the day's bar: the first minute opens at ``$open``, the last closes at
  ``$close``, the highest high is ``$high``, the lowest low ``$low`` and the volumes (lots of
  100 shares, U-shaped over the day) sum to ``$volume``. In between, prices follow a Brownian
  bridge kept inside the day's range; with ``tick`` set they are rounded to it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from costeer_lab.errors import InvalidInputError

__all__ = ["HIGH_FREQ_COLUMNS", "MAX_MINUTES", "high_freq_from_pv", "session_minutes"]

HIGH_FREQ_COLUMNS = ("$open", "$close", "$high", "$low", "$volume")
MAX_MINUTES = 240


def session_minutes(minutes_per_day: int = MAX_MINUTES) -> pd.TimedeltaIndex:
    """Offsets from midnight of the bars of one day (see the module docstring).

    Example:
        >>> [str(t)[7:12] for t in session_minutes(4)]
        ['09:31', '09:32', '13:01', '13:02']
    """
    if not 2 <= minutes_per_day <= MAX_MINUTES:
        raise InvalidInputError(
            f"high_freq minutes_per_day: expected a whole number from 2 to {MAX_MINUTES}, "
            f"got {minutes_per_day!r}"
        )
    morning = pd.timedelta_range("09:31:00", periods=120, freq="min")
    afternoon = pd.timedelta_range("13:01:00", periods=120, freq="min")
    first = (minutes_per_day + 1) // 2
    return pd.TimedeltaIndex(morning[:first].append(afternoon[: minutes_per_day - first]))


def _paths(rng: np.random.Generator, o: np.ndarray, c: np.ndarray, spread: np.ndarray,
           m: int) -> np.ndarray:  # fmt: skip
    """Log-price points 0..m of each row: a Brownian bridge from log(o) to log(c)."""
    steps = rng.normal(0.0, 1.0, (len(o), m)) * (spread / np.sqrt(m))[:, None]
    walk = np.concatenate([np.zeros((len(o), 1)), np.cumsum(steps, axis=1)], axis=1)
    frac = np.arange(m + 1) / m
    bridge = walk - frac[None, :] * walk[:, -1:]
    lo, lc = np.log(o), np.log(c)
    out: np.ndarray = lo[:, None] + frac[None, :] * (lc - lo)[:, None] + bridge
    return out


def _volumes(rng: np.random.Generator, v: np.ndarray, m: int) -> np.ndarray:
    """Per-minute volumes summing to ``v`` (lots of 100, the rest in the last minute)."""
    t = np.linspace(-1.0, 1.0, m)
    shape = 1.0 + 1.5 * t**2
    weights = shape[None, :] * rng.gamma(4.0, 1.0, (len(v), m))
    weights /= weights.sum(axis=1, keepdims=True)
    lots = np.floor(v / 100.0).astype(np.int64)
    out = rng.multinomial(lots, weights).astype("float64") * 100.0
    out[:, -1] += v - lots * 100.0
    return out


def high_freq_from_pv(
    pv: pd.DataFrame,
    n_days: int = 10,
    minutes_per_day: int = MAX_MINUTES,
    seed: int = 0,
    tick: float | None = None,
) -> pd.DataFrame:
    """The minute bars of the last ``n_days`` days of ``pv`` (see the module docstring).

    Example:
        >>> from costeer_lab.suites._rdagent_data import daily_pv_frame
        >>> pv = daily_pv_frame("synthetic", 2, 5)
        >>> hf = high_freq_from_pv(pv, n_days=2, minutes_per_day=6)
        >>> len(hf), list(hf.columns)
        (24, ['$open', '$close', '$high', '$low', '$volume'])
        >>> last_two = pv["$volume"].groupby(level="datetime").sum().iloc[-2:]
        >>> float(hf["$volume"].sum()) == float(last_two.sum())
        True
    """
    if n_days < 1:
        raise InvalidInputError(f"high_freq n_days: expected a whole number >= 1, got {n_days}")
    offsets = session_minutes(minutes_per_day)
    m = len(offsets)
    dates = pv.index.get_level_values("datetime")
    keep = dates.isin(pd.Index(pd.unique(dates)).sort_values()[-n_days:])
    daily = pv.loc[keep, ["$open", "$close", "$high", "$low", "$volume"]]
    rng = np.random.default_rng(seed)
    o, c, h, lo, v = (daily[k].to_numpy(dtype="float64") for k in HIGH_FREQ_COLUMNS)
    live = ~np.isnan(c)
    fill = np.where(live, 1.0, np.nan)
    o1, c1 = np.where(live, o, 1.0), np.where(live, c, 1.0)
    h1, l1 = np.where(live, h, 1.0), np.where(live, lo, 1.0)
    spread = np.maximum(np.log(h1 / l1), 1e-4)
    x = np.exp(_paths(rng, o1, c1, spread, m))
    if tick:
        x = np.round(x / tick) * tick
        x[:, 0], x[:, -1] = o1, c1
    x = np.clip(x, l1[:, None], h1[:, None])
    m_open, m_close = x[:, :-1], x[:, 1:]
    wick = np.exp(np.abs(rng.normal(0.0, 0.1, (len(o), m, 2))) * spread[:, None, None] / 4)
    m_high = np.minimum(np.maximum(m_open, m_close) * wick[..., 0], h1[:, None])
    m_low = np.maximum(np.minimum(m_open, m_close) / wick[..., 1], l1[:, None])
    if tick:
        m_high = np.minimum(np.ceil(m_high / tick - 1e-9) * tick, h1[:, None])
        m_low = np.maximum(np.floor(m_low / tick + 1e-9) * tick, l1[:, None])
    rows = np.arange(len(o))
    m_high[rows, np.argmax(m_high, axis=1)] = h1
    m_low[rows, np.argmin(m_low, axis=1)] = l1
    vol = _volumes(rng, np.where(live, v, 0.0), m)
    stamps = daily.index.get_level_values("datetime").to_numpy()[:, None] + offsets.to_numpy()
    names = np.repeat(daily.index.get_level_values("instrument").to_numpy(), m)
    index = pd.MultiIndex.from_arrays(
        [pd.DatetimeIndex(stamps.ravel()), pd.Index(names, dtype=object)],
        names=["datetime", "instrument"],
    )
    cols = {"$open": m_open, "$close": m_close, "$high": m_high, "$low": m_low, "$volume": vol}
    data = {k: (a * fill[:, None]).ravel() for k, a in cols.items()}
    return pd.DataFrame(data, index=index).sort_index()
