"""The candidate contract of a factor task from a task file or a benchmark file.

What a factor task states (``task.extra``): its input and output files (Parquet or HDF5, by
suffix), the output column, and its *scope*:

* ``time_series`` — computed per instrument over time (rolling windows, shifts); never mixes
  instruments;
* ``cross_sectional`` — computed per date across instruments (ranks, z-scores, demeaning as in
  the 101 Formulaic Alphas); never mixes dates;
* ``both`` — time-series steps per instrument combined with cross-sectional steps per date;
* ``stacked_rows`` — at least one row-order step (a shift, difference, window) runs on the
  stacked (datetime, instrument) table without grouping, so it reaches other instruments (what
  RD-Agent's published Volume&Price ground truths do);
* ``elementwise`` — every value uses only its own row.

A task whose reference was analysed (:mod:`._scope`) also lists the reference's steps, in order,
each with its grouping (:func:`scope_text`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from costeer_lab.errors import InvalidInputError

__all__ = ["SCOPES", "factor_contract", "files_text", "read_call", "scope_text", "write_call"]

SCOPES = ("time_series", "cross_sectional", "both", "stacked_rows", "elementwise")

_SCOPE_TEXT = {
    "time_series": (
        'Compute the factor per instrument over time: group by the "instrument" index level '
        "and sort each group by datetime so that rolling windows and shifts never mix "
        "instruments."
    ),
    "cross_sectional": (
        'Compute the factor per date across instruments: group by the "datetime" index level '
        "(ranks, z-scores, demeaning across the instruments of one date); never mix dates."
    ),
    "both": (
        "Time-series steps (rolling windows, shifts) go per instrument (group by "
        '"instrument", sorted by datetime); cross-sectional steps (ranks, z-scores across '
        'instruments) go per date (group by "datetime").'
    ),
    "stacked_rows": (
        "The reference does NOT group its row-order steps by instrument: it applies them to the "
        "stacked table as read, whose rows are sorted by (datetime, instrument), so the row n "
        "above a row belongs to another instrument (n rows up past the number of instruments, "
        "to an earlier date). Reproduce each step exactly as listed below: without grouping "
        "where it says so, in the input's row order (do not re-sort or unstack for those steps)."
    ),
    "elementwise": (
        "The reference works row by row: each value uses only the columns of its own row "
        "(no shifts, windows or ranks)."
    ),
}


def scope_text(scope: str, steps: Sequence[str] = ()) -> str:
    """The contract's sentence on grouping, with the reference's steps when they are known.

    Example:
        >>> print(scope_text("stacked_rows", ["diff(1) of $close"]).splitlines()[-2:])
        ["  The reference's steps, in order:", '  1. diff(1) of $close']
    """
    if scope not in _SCOPE_TEXT:
        raise InvalidInputError(f"scope {scope!r}; expected one of {SCOPES}")
    text = _SCOPE_TEXT[scope]
    if steps:
        listed = "".join(f"\n  {i}. {s}" for i, s in enumerate(steps, 1))
        text += f"\n  The reference's steps, in order:{listed}"
    return text


def _is_hdf(name: str) -> bool:
    return name.lower().endswith((".h5", ".hdf5", ".hdf"))


def read_call(path: str) -> str:
    """The pandas call that reads an input file.

    Example:
        >>> read_call("daily_pv.h5")
        'pd.read_hdf("daily_pv.h5", key="data")'
    """
    return f'pd.read_hdf("{path}", key="data")' if _is_hdf(path) else f'pd.read_parquet("{path}")'


def write_call(path: str) -> str:
    """The DataFrame method call that writes an output file.

    Example:
        >>> write_call("result.parquet")
        'to_parquet("result.parquet")'
    """
    return f'to_hdf("{path}", key="data")' if _is_hdf(path) else f'to_parquet("{path}")'


#: What each of RD-Agent's input tables holds (for :func:`files_text`).
_FILE_KINDS = {
    "daily_pv.h5": "daily price-volume bars",
    "daily_f.h5": "daily fundamentals",
    "high_freq.h5": "1-minute bars; datetime is the minute's end time",
}


def files_text(files: Mapping[str, Sequence[str]]) -> str:
    """The contract line naming the data files and their columns.

    Example:
        >>> files_text({"daily_f.h5": ["B/P", "ROE"]})  # doctest: +ELLIPSIS
        '- Data files ... daily_f.h5 (daily fundamentals) with columns "B/P", "ROE".'
    """
    parts = []
    for name, cols in files.items():
        kind = _FILE_KINDS.get(name)
        listed = ", ".join(f'"{c}"' for c in cols)
        parts.append(f"{name}{f' ({kind})' if kind else ''} with columns {listed}")
    return (
        "- Data files this factor uses, in the working directory (each a DataFrame indexed by "
        '(datetime, instrument), read with pd.read_hdf("<file>", key="data")): '
        + "; ".join(parts)
        + "."
    )


def factor_contract(
    name: str,
    input_file: str,
    output_file: str,
    scope: str,
    dollar: bool = False,
    steps: Sequence[str] = (),
    files: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The contract text of a factor task.

    Args:
        name: the output column.
        input_file: the price-volume table the candidate reads.
        output_file: the file it writes.
        scope: one of :data:`SCOPES`.
        dollar: whether the input's columns keep the ``$`` (``$close``, RD-Agent's layout).
        steps: the reference's steps in words (:meth:`._scope.ScopeAnalysis.describe`).
        files: data files the factor uses with their columns (a line of :func:`files_text`).

    Example:
        >>> text = factor_contract("R", "a.h5", "r.h5", "cross_sectional")
        >>> 'group by the "datetime"' in text and 'pd.read_hdf("a.h5", key="data")' in text
        True
    """
    columns = (
        'columns keep the "$" of the formulation ($close is column "$close"; $open, $close, '
        "$high, $low, $volume, $factor)"
        if dollar
        else 'columns are the data fields without the "$" ($close is column "close")'
    )
    names = list(files) if files else [input_file]
    daily = input_file in names and input_file not in ("daily_f.h5", "high_freq.h5")
    reads = (
        f"- Read the daily price-volume table: `df = {read_call(input_file)}`. Its index is a "
        f"MultiIndex (datetime, instrument); its float {columns}. Suspended days are rows whose "
        "values are all missing: the factor is NaN there (do not fill missing values).\n"
        if daily
        else ""
    )
    listed = f"{files_text(files)}\n" if files else ""
    minute = any(n.startswith("high_freq") for n in names)
    rows = (
        "indexed by (datetime, instrument) with one row per trading day and instrument: "
        "aggregate the 1-minute bars of high_freq.h5 to days (the date of each bar)"
        if minute
        else "indexed by the same (datetime, instrument) MultiIndex as the input"
    )
    packages = "numpy, pandas and statsmodels" if files else "numpy and pandas"
    return (
        f"Write main.py, a complete Python script; it runs as __main__ in a directory holding "
        f"{', '.join(names)}.\n"
        f"{reads}"
        f"{listed}"
        f"- {scope_text(scope, steps)}\n"
        f"- Write the result with `result.{write_call(output_file)}`: a DataFrame with exactly "
        f'one float column named "{name}", {rows}.\n'
        f"- Use only {packages}; no network, no other files, no plotting."
    )
