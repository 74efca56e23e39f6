"""Ground-truth ``main.py`` scripts of the Alpha158 features (pandas, one per feature).

Each script follows the candidate contract (read ``daily_pv.parquet``, write
``result.parquet``) and computes per instrument. Operator semantics (documented for coders in
the suite docstring): rolling windows are the last ``d`` rows of the instrument with partial
windows at the start (``min_periods=1``) and missing values skipped; ``Std`` is the sample
standard deviation; ``Slope``/``Rsquare``/``Resi`` are a least-squares fit against the row
position; ``Rank`` is the percentile of the last value; ``IdxMax``/``IdxMin`` are 1-based
positions; ``Corr`` is NaN where either side is (nearly) constant; a comparison with a missing
value is False; every feature is NaN on suspended days.
"""

from __future__ import annotations

from costeer_lab.suites._alpha158_defs import FeatureSpec, describe

__all__ = ["ground_truth_code"]

_HELPERS = {
    "windows": '''
def _windows(values, window):
    """One row per date: the trailing ``window`` values, NaN-padded before the first date."""
    padded = np.concatenate([np.full(window - 1, np.nan), values])
    return np.lib.stride_tricks.sliding_window_view(padded, window)
''',
    "fit": '''
def _linear_fit(series, window):
    """Least-squares line of each trailing window against time (missing values skipped).

    Returns the slope, the r-squared and the residual of the last value, as Series.
    """
    win = _windows(series.to_numpy(dtype=float), window)
    mask = ~np.isnan(win)
    n = mask.sum(axis=1).astype(float)
    t = np.broadcast_to(np.arange(window, dtype=float), win.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_t = np.where(mask, t, 0.0).sum(axis=1) / n
        mean_y = np.where(mask, win, 0.0).sum(axis=1) / n
        dt = np.where(mask, t - mean_t[:, None], 0.0)
        dy = np.where(mask, win - mean_y[:, None], 0.0)
        stt, sty, syy = (dt * dt).sum(axis=1), (dt * dy).sum(axis=1), (dy * dy).sum(axis=1)
        slope = sty / stt
        rsquare = sty * sty / (stt * syy)
        resi = win[:, -1] - (mean_y + slope * (window - 1 - mean_t))
    few = n < 2
    slope[few], rsquare[few], resi[few] = np.nan, np.nan, np.nan
    index = series.index
    return pd.Series(slope, index), pd.Series(rsquare, index), pd.Series(resi, index)
''',
    "argext": '''
def _arg_extreme(series, window, largest):
    """1-based position (1 = oldest row of the window) of the first max/min in each window."""
    win = _windows(series.to_numpy(dtype=float), window)
    empty = np.isnan(win).all(axis=1)
    filled = np.where(np.isnan(win), -np.inf if largest else np.inf, win)
    pos = filled.argmax(axis=1) if largest else filled.argmin(axis=1)
    padding = np.maximum(window - 1 - np.arange(len(win)), 0)  # partial windows at the start
    out = (pos - padding + 1).astype(float)
    out[empty] = np.nan
    return pd.Series(out, series.index)
''',
    "corr": '''
def _rolling_corr(left, right, window):
    """Rolling Pearson correlation; NaN where either side is (nearly) constant."""
    corr = left.rolling(window, min_periods=1).corr(right)
    flat = np.isclose(left.rolling(window, min_periods=1).std(), 0, atol=2e-05) | np.isclose(
        right.rolling(window, min_periods=1).std(), 0, atol=2e-05
    )
    return corr.mask(flat)
''',
}

_R = "rolling(WINDOW, min_periods=1)"

_KBAR_BODY = {
    "KMID": "return (close - open_) / open_",
    "KLEN": "return (high - low) / open_",
    "KMID2": "return (close - open_) / (high - low + 1e-12)",
    "KUP": "return (high - np.maximum(open_, close)) / open_",
    "KUP2": "return (high - np.maximum(open_, close)) / (high - low + 1e-12)",
    "KLOW": "return (np.minimum(open_, close) - low) / open_",
    "KLOW2": "return (np.minimum(open_, close) - low) / (high - low + 1e-12)",
    "KSFT": "return (2 * close - high - low) / open_",
    "KSFT2": "return (2 * close - high - low) / (high - low + 1e-12)",
}


def _signed_sums(col: str, kind: str) -> str:
    lines = [
        f"change = {col} - {col}.shift(1)",
        f"gain = change.clip(lower=0).{_R}.sum()",
        f"loss = (-change).clip(lower=0).{_R}.sum()",
        f"total = change.abs().{_R}.sum()",
    ]
    result = {"P": "gain", "N": "loss", "D": "(gain - loss)"}[kind]
    return "\n".join([*lines, f"return {result} / (total + 1e-12)"])


_ROLLING_BODY: dict[str, tuple[str, tuple[str, ...]]] = {
    "ROC": ("return close.shift(WINDOW) / close", ()),
    "MA": (f"return close.{_R}.mean() / close", ()),
    "STD": (f"return close.{_R}.std() / close", ()),
    "BETA": ("slope, _, _ = _linear_fit(close, WINDOW)\nreturn slope / close", ("windows", "fit")),
    "RSQR": (
        "_, rsquare, _ = _linear_fit(close, WINDOW)\n"
        f"flat = np.isclose(close.{_R}.std(), 0, atol=2e-05)\n"
        "return rsquare.mask(flat)",
        ("windows", "fit"),
    ),
    "RESI": ("_, _, resi = _linear_fit(close, WINDOW)\nreturn resi / close", ("windows", "fit")),
    "MAX": (f"return high.{_R}.max() / close", ()),
    "MIN": (f"return low.{_R}.min() / close", ()),
    "QTLU": (f"return close.{_R}.quantile(0.8) / close", ()),
    "QTLD": (f"return close.{_R}.quantile(0.2) / close", ()),
    "RANK": (f"return close.{_R}.rank(pct=True)", ()),
    "RSV": (
        f"lowest = low.{_R}.min()\nhighest = high.{_R}.max()\n"
        "return (close - lowest) / (highest - lowest + 1e-12)",
        (),
    ),
    "IMAX": ("return _arg_extreme(high, WINDOW, largest=True) / WINDOW", ("windows", "argext")),
    "IMIN": ("return _arg_extreme(low, WINDOW, largest=False) / WINDOW", ("windows", "argext")),
    "IMXD": (
        "pos_max = _arg_extreme(high, WINDOW, largest=True)\n"
        "pos_min = _arg_extreme(low, WINDOW, largest=False)\n"
        "return (pos_max - pos_min) / WINDOW",
        ("windows", "argext"),
    ),
    "CORR": ("return _rolling_corr(close, np.log(volume + 1), WINDOW)", ("corr",)),
    "CORD": (
        "return _rolling_corr(close / close.shift(1), np.log(volume / volume.shift(1) + 1), "
        "WINDOW)",
        ("corr",),
    ),
    "CNTP": (f"up = (close > close.shift(1)).astype(float)\nreturn up.{_R}.mean()", ()),
    "CNTN": (f"down = (close < close.shift(1)).astype(float)\nreturn down.{_R}.mean()", ()),
    "CNTD": (
        "up = (close > close.shift(1)).astype(float)\n"
        "down = (close < close.shift(1)).astype(float)\n"
        f"return up.{_R}.mean() - down.{_R}.mean()",
        (),
    ),
    "SUMP": (_signed_sums("close", "P"), ()),
    "SUMN": (_signed_sums("close", "N"), ()),
    "SUMD": (_signed_sums("close", "D"), ()),
    "VMA": (f"return volume.{_R}.mean() / (volume + 1e-12)", ()),
    "VSTD": (f"return volume.{_R}.std() / (volume + 1e-12)", ()),
    "WVMA": (
        "weighted = (close / close.shift(1) - 1).abs() * volume\n"
        f"return weighted.{_R}.std() / (weighted.{_R}.mean() + 1e-12)",
        (),
    ),
    "VSUMP": (_signed_sums("volume", "P"), ()),
    "VSUMN": (_signed_sums("volume", "N"), ()),
    "VSUMD": (_signed_sums("volume", "D"), ()),
}

_MAIN = """

def main():
    panel = pd.read_parquet("daily_pv.parquet")
    by_instrument = panel.sort_index(level=["instrument", "datetime"])  # each group by date
    pieces = [compute(rows) for _, rows in by_instrument.groupby(level="instrument", sort=False)]
    factor = pd.concat(pieces).reindex(panel.index)
    factor = factor.where(panel["close"].notna())  # NaN on suspended days
    factor.to_frame(NAME).to_parquet("result.parquet")


if __name__ == "__main__":
    main()
"""

_FIELD_VAR = {"open": "open_", "high": "high", "low": "low", "close": "close"}
_FIELD_VAR.update({"volume": "volume", "vwap": "vwap"})


def ground_truth_code(spec: FeatureSpec) -> str:
    """The standalone ``main.py`` text computing ``spec`` (the candidate contract)."""
    helpers: tuple[str, ...] = ()
    if spec.family == "KBAR":
        body = _KBAR_BODY[spec.name]
    elif spec.family == "PRICE":
        body = f"return {_FIELD_VAR[spec.name[:-1].lower()]} / close"
    else:
        body, helpers = _ROLLING_BODY[spec.family]
    _, _, fields = describe(spec)
    used = [f for f in ("open", "high", "low", "close", "volume", "vwap") if f in fields]
    loads = "\n".join(f'    {_FIELD_VAR[f]} = df["{f}"]' for f in used)
    indented = "\n".join("    " + line for line in body.splitlines())
    header = (
        f'"""Alpha158 {spec.name}: {spec.formula}\n\n'
        "Reads daily_pv.parquet, computes the factor per instrument and writes result.parquet.\n"
        '"""\n\nimport numpy as np\nimport pandas as pd\n\n'
        f'NAME = "{spec.name}"\n'
    )
    if spec.window:
        header += f"WINDOW = {spec.window}\n"
    helper_code = "".join("\n" + _HELPERS[h] for h in helpers)
    compute = (
        "\n\ndef compute(df):\n"
        '    """Factor values of one instrument (rows sorted by date)."""\n'
        f"{loads}\n{indented}\n"
    )
    return header + helper_code + compute + _MAIN
