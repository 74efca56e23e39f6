# ruff: noqa: E501  (a data table: one feature family per line reads best)
"""The 158 Alpha158 feature definitions (formulas as in Qlib's ``Alpha158DL`` default config).

9 KBAR features, 4 price features (window 0) and 29 rolling operator families at windows
5, 10, 20, 30 and 60: 9 + 4 + 29 * 5 = 158. Descriptions are our own wording.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FAMILIES", "FEATURES", "WINDOWS", "FeatureSpec"]

WINDOWS = (5, 10, 20, 30, 60)


@dataclass(frozen=True)
class FeatureSpec:
    """One Alpha158 feature: ``name`` (``"MA5"``), ``family`` (``"MA"``), ``window`` (0 for
    KBAR and price features) and the Qlib ``formula``."""

    name: str
    family: str
    window: int
    formula: str


# family -> (formula template with {d}, description template, difficulty, fields used)
_ROLLING: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "ROC": ("Ref($close, {d})/$close", "Price {d} trading days ago relative to today's close: the inverse of the {d}-day rate of change.", "easy", ("close",)),
    "MA": ("Mean($close, {d})/$close", "Simple moving average of the close over the last {d} days, divided by today's close.", "easy", ("close",)),
    "STD": ("Std($close, {d})/$close", "Sample standard deviation of the close over the last {d} days, divided by today's close (a volatility measure without units).", "easy", ("close",)),
    "BETA": ("Slope($close, {d})/$close", "Slope of a least-squares line fitted to the last {d} closes against time, divided by today's close: the normalized price trend.", "hard", ("close",)),
    "RSQR": ("Rsquare($close, {d})", "R-squared of a least-squares line fitted to the last {d} closes against time: how linear the recent trend is.", "hard", ("close",)),
    "RESI": ("Resi($close, {d})/$close", "Residual of today's close from the least-squares line fitted to the last {d} closes against time, divided by today's close.", "hard", ("close",)),
    "MAX": ("Max($high, {d})/$close", "Highest high of the last {d} days relative to today's close.", "easy", ("high", "close")),
    "MIN": ("Min($low, {d})/$close", "Lowest low of the last {d} days relative to today's close.", "easy", ("low", "close")),
    "QTLU": ("Quantile($close, {d}, 0.8)/$close", "80% quantile (linear interpolation) of the last {d} closes relative to today's close: an upper resistance level.", "medium", ("close",)),
    "QTLD": ("Quantile($close, {d}, 0.2)/$close", "20% quantile (linear interpolation) of the last {d} closes relative to today's close: a lower support level.", "medium", ("close",)),
    "RANK": ("Rank($close, {d})", "Percentile rank of today's close among the last {d} closes (average rank of ties, divided by the number of values).", "hard", ("close",)),
    "RSV": ("($close-Min($low, {d}))/(Max($high, {d})-Min($low, {d})+1e-12)", "Position of today's close inside the range between the lowest low and the highest high of the last {d} days (a stochastic oscillator).", "medium", ("close", "high", "low")),
    "IMAX": ("IdxMax($high, {d})/{d}", "1-based position of the highest high inside the last {d} days (1 = oldest day of the window), divided by {d}: part of the Aroon indicator.", "medium", ("high",)),
    "IMIN": ("IdxMin($low, {d})/{d}", "1-based position of the lowest low inside the last {d} days (1 = oldest day of the window), divided by {d}: part of the Aroon indicator.", "medium", ("low",)),
    "IMXD": ("(IdxMax($high, {d})-IdxMin($low, {d}))/{d}", "Distance between the positions of the highest high and of the lowest low in the last {d} days, divided by {d}; large values suggest downward momentum.", "hard", ("high", "low")),
    "CORR": ("Corr($close, Log($volume+1), {d})", "Pearson correlation over the last {d} days between the close and the log of (volume + 1).", "medium", ("close", "volume")),
    "CORD": ("Corr($close/Ref($close,1), Log($volume/Ref($volume, 1)+1), {d})", "Pearson correlation over the last {d} days between the daily close ratio and the log of (volume ratio + 1).", "hard", ("close", "volume")),
    "CNTP": ("Mean($close>Ref($close, 1), {d})", "Share of the last {d} days on which the close went up.", "easy", ("close",)),
    "CNTN": ("Mean($close<Ref($close, 1), {d})", "Share of the last {d} days on which the close went down.", "easy", ("close",)),
    "CNTD": ("Mean($close>Ref($close, 1), {d})-Mean($close<Ref($close, 1), {d})", "Share of up days minus share of down days over the last {d} days.", "medium", ("close",)),
    "SUMP": ("Sum(Greater($close-Ref($close, 1), 0), {d})/(Sum(Abs($close-Ref($close, 1)), {d})+1e-12)", "Total gains divided by total absolute close changes over the last {d} days (an RSI-like ratio).", "medium", ("close",)),
    "SUMN": ("Sum(Greater(Ref($close, 1)-$close, 0), {d})/(Sum(Abs($close-Ref($close, 1)), {d})+1e-12)", "Total losses divided by total absolute close changes over the last {d} days.", "medium", ("close",)),
    "SUMD": ("(Sum(Greater($close-Ref($close, 1), 0), {d})-Sum(Greater(Ref($close, 1)-$close, 0), {d}))/(Sum(Abs($close-Ref($close, 1)), {d})+1e-12)", "Total gains minus total losses, divided by total absolute close changes over the last {d} days.", "medium", ("close",)),
    "VMA": ("Mean($volume, {d})/($volume+1e-12)", "Moving average of the volume over the last {d} days relative to today's volume.", "easy", ("volume",)),
    "VSTD": ("Std($volume, {d})/($volume+1e-12)", "Sample standard deviation of the volume over the last {d} days relative to today's volume.", "easy", ("volume",)),
    "WVMA": ("Std(Abs($close/Ref($close, 1)-1)*$volume, {d})/(Mean(Abs($close/Ref($close, 1)-1)*$volume, {d})+1e-12)", "Coefficient of variation over the last {d} days of the volume-weighted absolute daily return.", "medium", ("close", "volume")),
    "VSUMP": ("Sum(Greater($volume-Ref($volume, 1), 0), {d})/(Sum(Abs($volume-Ref($volume, 1)), {d})+1e-12)", "Total volume increases divided by total absolute volume changes over the last {d} days.", "medium", ("volume",)),
    "VSUMN": ("Sum(Greater(Ref($volume, 1)-$volume, 0), {d})/(Sum(Abs($volume-Ref($volume, 1)), {d})+1e-12)", "Total volume decreases divided by total absolute volume changes over the last {d} days.", "medium", ("volume",)),
    "VSUMD": ("(Sum(Greater($volume-Ref($volume, 1), 0), {d})-Sum(Greater(Ref($volume, 1)-$volume, 0), {d}))/(Sum(Abs($volume-Ref($volume, 1)), {d})+1e-12)", "Total volume increases minus total volume decreases, divided by total absolute volume changes over the last {d} days.", "medium", ("volume",)),
}  # fmt: skip

# name -> (formula, description, fields used)
_KBAR: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "KMID": ("($close-$open)/$open", "Body of today's candle (close minus open) relative to the open.", ("close", "open")),
    "KLEN": ("($high-$low)/$open", "Full range of today's candle (high minus low) relative to the open.", ("high", "low", "open")),
    "KMID2": ("($close-$open)/($high-$low+1e-12)", "Body of today's candle as a share of its full high-low range.", ("close", "open", "high", "low")),
    "KUP": ("($high-Greater($open, $close))/$open", "Upper shadow of today's candle (high minus the larger of open and close) relative to the open.", ("high", "open", "close")),
    "KUP2": ("($high-Greater($open, $close))/($high-$low+1e-12)", "Upper shadow of today's candle as a share of its high-low range.", ("high", "open", "close", "low")),
    "KLOW": ("(Less($open, $close)-$low)/$open", "Lower shadow of today's candle (the smaller of open and close minus the low) relative to the open.", ("open", "close", "low")),
    "KLOW2": ("(Less($open, $close)-$low)/($high-$low+1e-12)", "Lower shadow of today's candle as a share of its high-low range.", ("open", "close", "low", "high")),
    "KSFT": ("(2*$close-$high-$low)/$open", "Where the close sits relative to the middle of the day's range (2*close - high - low), relative to the open.", ("close", "high", "low", "open")),
    "KSFT2": ("(2*$close-$high-$low)/($high-$low+1e-12)", "Where the close sits relative to the middle of the day's range, as a share of the high-low range.", ("close", "high", "low")),
}  # fmt: skip

_PRICE = {"OPEN": "open", "HIGH": "high", "LOW": "low", "VWAP": "vwap"}

FIELD_MEANINGS = {
    "open": "$open: opening price of the day",
    "high": "$high: highest price of the day",
    "low": "$low: lowest price of the day",
    "close": "$close: closing price of the day",
    "volume": "$volume: traded volume of the day (shares)",
    "vwap": "$vwap: volume-weighted average price of the day",
}


def _build() -> tuple[FeatureSpec, ...]:
    out = [FeatureSpec(n, "KBAR", 0, f) for n, (f, _, _) in _KBAR.items()]
    out += [FeatureSpec(f"{p}0", "PRICE", 0, f"${c}/$close") for p, c in _PRICE.items()]
    for family, (template, _, _, _) in _ROLLING.items():
        out += [FeatureSpec(f"{family}{d}", family, d, template.format(d=d)) for d in WINDOWS]
    return tuple(out)


FEATURES: tuple[FeatureSpec, ...] = _build()
FAMILIES: tuple[str, ...] = ("KBAR", "PRICE", *_ROLLING)


def describe(spec: FeatureSpec) -> tuple[str, str, tuple[str, ...]]:
    """(description, difficulty, fields used) of a feature."""
    if spec.family == "KBAR":
        _, text, fields = _KBAR[spec.name]
        return text, "easy", fields
    if spec.family == "PRICE":
        col = _PRICE[spec.name[:-1]]
        return f"Today's {col} price relative to today's close.", "easy", (col, "close")
    _, text, level, fields = _ROLLING[spec.family]
    return text.format(d=spec.window), level, fields
