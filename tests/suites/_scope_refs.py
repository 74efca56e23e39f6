"""References of the scope tests: written by this project in the published file's styles
(a reset_index frame, a column of the stacked table, the wide table of unstack)."""

from __future__ import annotations

from typing import Any

HEAD = 'import numpy as np\nimport pandas as pd\n\ndf = pd.read_hdf("daily_pv.h5", key="data")\n'
SAVE = 'result.to_hdf("result.h5", key="data")\n'


def _entry(
    desc: str, formulation: str, body: str, category: str = "Volume&Price"
) -> dict[str, Any]:
    return {"description": desc, "formulation": formulation, "Category": category,
            "Difficulty": "Easy", "gt_code": HEAD + body + SAVE}  # fmt: skip


#: name -> (entry, the kinds of its steps)
REFS: dict[str, tuple[dict[str, Any], frozenset[str]]] = {
    "STK_RATIO_DIFF9": (_entry(
        "Minus the 9-row change of the close's position in the high-low range.",
        "-Delta(($close - $low) / ($high - $low), 9)",
        "frame = df.reset_index()\n"
        'frame["pos"] = (frame["$close"] - frame["$low"]) / (frame["$high"] - frame["$low"])\n'
        'frame["out"] = -frame["pos"].diff(9)\n'
        'result = pd.DataFrame(frame["out"]).set_index(df.index)\n'
        'result.columns = ["STK_RATIO_DIFF9"]\n',
    ), frozenset({"stacked_rows"})),
    "STK_PCT5": (_entry(
        "Five-row percentage change of the close.", "$close / Ref($close, 5) - 1",
        'result = df["$close"].pct_change(5).to_frame("STK_PCT5")\n',
    ), frozenset({"stacked_rows"})),
    "STK_VMA5": (_entry(
        "Mean volume of the last five rows over today's volume.", "Mean($volume, 5) / $volume",
        'vol = df["$volume"]\n'
        'result = (vol.rolling(5).mean() / vol).to_frame("STK_VMA5")\n',
    ), frozenset({"stacked_rows"})),
    "CS_VZ": (_entry(
        "Z-score of the volume across the instruments of the date (sample std, ddof=1).",
        "($volume - CSMean($volume)) / CSStd($volume)",
        'g = df.groupby(level="datetime")["$volume"]\n'
        "z = g.transform(lambda x: (x - x.mean()) / x.std())\n"
        'result = z.to_frame("CS_VZ")\n',
    ), frozenset({"cross_sectional"})),
    "MIX_PCT_RANK": (_entry(
        "Percentile rank, per date, of the three-row percentage change of the close.",
        "Rank($close / Ref($close, 3) - 1)",
        'chg = df["$close"].pct_change(3)\n'
        'result = chg.groupby(level="datetime").rank(pct=True).to_frame("MIX_PCT_RANK")\n',
    ), frozenset({"stacked_rows", "cross_sectional"})),
    "MIX_SHIFT_DIFF": (_entry(
        "Row-to-row change of the daily return.", "Delta($close / Ref($close, 1) - 1, 1)",
        'c = df["$close"]\n'
        'ret = c / c.groupby(level="instrument").shift(1) - 1\n'
        'result = ret.diff(1).to_frame("MIX_SHIFT_DIFF")\n',
    ), frozenset({"stacked_rows", "time_series"})),
    "WIDE_RET5": (_entry(
        "Five-day return of the instrument.", "$close / Ref($close, 5) - 1",
        'wide = df["$close"].unstack()\n'
        "ret = wide.pct_change(5).stack()\n"
        'result = ret.reindex(df.index).to_frame("WIDE_RET5")\n',
    ), frozenset({"time_series"})),
    "ELEM_CO": (_entry(
        "Close over open.", "$close / $open",
        'result = (df["$close"] / df["$open"]).to_frame("ELEM_CO")\n',
    ), frozenset()),
}  # fmt: skip
