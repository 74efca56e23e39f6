"""The tidy results table of an experiment: schema, validation, Parquet/CSV persistence.

One row per (arm, seed, task, attempt) where the task was attempted. A task that succeeded is not
attempted again; a task may never succeed. JSON-valued columns hold text so the table stays flat:

- ``error_fingerprints``: JSON list of str.
- ``retrieved``: JSON object ``{query_kind: [{"id": str, "score": float}, ...]}`` whose keys are
  among :data:`QUERY_KINDS`; a key is present when that query ran; ``{}`` when the arm uses no
  knowledge.
- ``used_knowledge_ids``: JSON list of the knowledge ids the coder actually used.
- ``isolation``: how the attempt's code was isolated (``full``, ``partial``, ``none``,
  ``unverified``, ``inprocess``; ``""`` when no code ran).
- ``feedback_detail``: how much the coder was told (``verdict``, ``diagnostics``, ``full``).
- ``infra_error``: why the attempt was not evaluated (a failing reference), else ``""``;
  such rows say nothing about the code.
- ``memory_queried``: the attempt's arm asked the pattern memory (the "pattern memory" arm);
  ``memory_patterns``: JSON list of the pattern ids it returned (``[]``: a miss, or no query);
  ``memory_used``: the coder used a memory pattern or a memory failure fix.

Example:
    >>> import tempfile
    >>> from costeer_lab.experiment import load_results, save_results
    >>> from costeer_lab.testing import example_results
    >>> path = save_results(example_results(), tempfile.mkdtemp())
    >>> load_results(path).shape[0]
    6
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from costeer_lab._fs import atomic_write_bytes
from costeer_lab.errors import InvalidInputError

__all__ = [
    "QUERY_KINDS",
    "RESULT_COLUMNS",
    "load_results",
    "save_results",
    "validate_results",
]

#: Column name -> dtype of the results table, in canonical order.
RESULT_COLUMNS: dict[str, str] = {
    "run_id": "str",
    "arm": "str",
    "seed": "int64",
    "task_id": "str",
    "attempt": "int64",
    "success": "bool",
    "execution": "str",
    "return_checking": "str",
    "code_feedback": "str",
    "error_fingerprints": "str",
    "retrieved": "str",
    "duration_s": "float64",
    "coder_s": "float64",
    "evaluate_s": "float64",
    "prompt_tokens": "int64",
    "completion_tokens": "int64",
    "cost_usd": "float64",
    "kb_nodes": "int64",
    "used_knowledge_ids": "str",
    "isolation": "str",
    "feedback_detail": "str",
    "infra_error": "str",
    "memory_queried": "bool",
    "memory_patterns": "str",
    "memory_used": "bool",
}

#: Query kinds allowed as keys of the ``retrieved`` column.
QUERY_KINDS: tuple[str, ...] = ("similar", "former_trace", "component", "error")

_KEY = ["arm", "seed", "task_id", "attempt"]
RESULTS_BASENAME = "results"


def _fail(column: str, bad: pd.Series, expected: str) -> None:
    row = bad.index[0]
    raise InvalidInputError(
        f"results column {column!r}: {int(bad.sum())} bad value(s), first at row {row!r} "
        f"(expected {expected})"
    )


def _plain(row: pd.Series) -> tuple[object, ...]:
    """A row's values as plain Python scalars (for readable error messages)."""
    return tuple(v.item() if isinstance(v, np.generic) else v for v in row.tolist())


def _coerce(df: pd.DataFrame, column: str, kind: str) -> pd.Series:
    s = df[column]
    dtype, typed = s.dtype, s.dtype != np.dtype(object)  # object columns are checked per value
    if kind == "str" and typed and pd.api.types.is_string_dtype(dtype) and not s.isna().any():
        return s.astype("str")  # fast path: already text without missing values
    if kind == "bool" and typed and pd.api.types.is_bool_dtype(dtype):
        return s.astype(bool)
    numeric = typed and pd.api.types.is_numeric_dtype(dtype)
    if kind not in ("str", "bool") and numeric and not pd.api.types.is_bool_dtype(dtype):
        return _coerce_number(s, column, kind)
    if kind == "str":
        bad = ~s.map(lambda v: isinstance(v, str))
        if bad.any():
            _fail(column, bad, f"str, got {s[bad].iloc[0]!r}")
        return s.astype("str")
    if kind == "bool":
        bad = ~s.map(lambda v: isinstance(v, bool | np.bool_))
        if bad.any():
            _fail(column, bad, f"bool, got {s[bad].iloc[0]!r}")
        return s.astype(bool)
    flags = s.map(lambda v: isinstance(v, bool | np.bool_))
    if flags.any():
        _fail(column, flags, f"a finite number, got {s[flags].iloc[0]!r}")
    return _coerce_number(s, column, kind)


def _coerce_number(s: pd.Series, column: str, kind: str) -> pd.Series:
    num = pd.to_numeric(s, errors="coerce")
    bad = num.isna() | ~np.isfinite(num.astype("float64"))
    if bad.any():
        _fail(column, bad, f"a finite number, got {s[bad].iloc[0]!r}")
    if kind == "int64":
        frac = num != num.round()
        if frac.any():
            _fail(column, frac, f"an integer, got {s[frac].iloc[0]!r}")
        return num.astype("int64")
    return num.astype("float64")


def _check_json(s: pd.Series, column: str) -> None:
    # parse each distinct text once (most rows share "[]" or "{}"), report its first row
    first_rows = s.drop_duplicates()
    for row, text in first_rows.items():
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(
                f"results column {column!r}, row {row!r}: invalid JSON ({exc.msg}): {text[:80]!r}"
            ) from None
        _check_json_shape(value, column, row)


def _check_json_shape(value: Any, column: str, row: object) -> None:
    where = f"results column {column!r}, row {row!r}"
    if column != "retrieved":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InvalidInputError(f"{where}: expected a JSON list of str, got {value!r:.80}")
        return
    if not isinstance(value, dict):
        raise InvalidInputError(f"{where}: expected a JSON object, got {value!r:.80}")
    for kind, items in value.items():
        if kind not in QUERY_KINDS:
            raise InvalidInputError(f"{where}: query kind {kind!r} is not one of {QUERY_KINDS}")
        if not isinstance(items, list):
            raise InvalidInputError(f"{where}: {kind!r} must map to a list, got {items!r:.80}")
        for item in items:
            ok = (
                isinstance(item, dict)
                and isinstance(item.get("id"), str)
                and isinstance(item.get("score"), int | float)
                and not isinstance(item.get("score"), bool)
            )
            if not ok:
                raise InvalidInputError(
                    f"{where}: items must be {{'id': str, 'score': float}}, got {item!r:.80}"
                )


def validate_results(df: pd.DataFrame) -> pd.DataFrame:
    """Check ``df`` against :data:`RESULT_COLUMNS` and return a canonical copy.

    The copy has the schema columns first, in order, with canonical dtypes (extra columns are kept
    after them), sorted by (arm, seed, task_id, attempt) with a fresh index.

    Raises:
        InvalidInputError: naming missing columns, the first bad value of a column, malformed
            JSON, an attempt < 1, a duplicate (arm, seed, task_id, attempt) row, or a row after a
            success.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> list(validate_results(example_results()).columns)[:3]
        ['run_id', 'arm', 'seed']
    """
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"results must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in RESULT_COLUMNS if c not in df.columns]
    if missing:
        raise InvalidInputError(f"results table is missing column(s) {missing}")
    src = df.reset_index(drop=True)
    out = pd.DataFrame({c: _coerce(src, c, k) for c, k in RESULT_COLUMNS.items()})
    for c in df.columns:
        if c not in RESULT_COLUMNS:
            out[c] = src[c]
    for c in ("error_fingerprints", "retrieved", "used_knowledge_ids", "memory_patterns"):
        _check_json(out[c], c)
    low = out["attempt"] < 1
    if low.any():
        _fail("attempt", low, f"a 1-based step >= 1, got {int(out['attempt'][low].iloc[0])}")
    dup = out.duplicated(_KEY)
    if dup.any():
        key = _plain(out.loc[dup, _KEY].iloc[0])
        raise InvalidInputError(f"duplicate row for (arm, seed, task_id, attempt) = {key!r}")
    first_win = out[out["success"]].groupby(_KEY[:3])["attempt"].min().rename("_first_win")
    later = out.join(first_win, on=_KEY[:3])
    after = later["attempt"] > later["_first_win"]
    if after.any():
        key = _plain(out.loc[after, _KEY].iloc[0])
        raise InvalidInputError(
            f"row (arm, seed, task_id, attempt) = {key!r} comes after that task's success; "
            "a solved task must not be attempted again"
        )
    return out.sort_values(_KEY, kind="stable").reset_index(drop=True)


def save_results(
    df: pd.DataFrame,
    directory: str | os.PathLike[str],
    *,
    format: Literal["parquet", "csv"] = "parquet",
) -> Path:
    """Validate ``df`` and write it atomically to ``directory/results.parquet`` (or ``.csv``).

    Returns:
        The path written.

    Example:
        >>> import tempfile
        >>> from costeer_lab.testing import example_results
        >>> save_results(example_results(), tempfile.mkdtemp(), format="csv").name
        'results.csv'
    """
    if format not in ("parquet", "csv"):
        raise InvalidInputError(f"format must be 'parquet' or 'csv', got {format!r}")
    table = validate_results(df)
    target = Path(directory) / f"{RESULTS_BASENAME}.{format}"
    if format == "parquet":
        data = table.to_parquet(index=False, engine="pyarrow")
    else:
        # "\r\n" rows make the writer quote every field holding "\r" or "\n"
        data = table.to_csv(index=False, lineterminator="\r\n").encode("utf-8")
    return atomic_write_bytes(target, data)


def load_results(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a results table from a ``.parquet``/``.csv`` file or a directory holding one.

    In a directory ``results.parquet`` is preferred over ``results.csv``. The table is validated.

    Raises:
        InvalidInputError: when nothing readable is found or the table does not validate.
    """
    p = Path(path)
    if p.is_dir():
        found = [p / f"{RESULTS_BASENAME}.{ext}" for ext in ("parquet", "csv")]
        existing = [f for f in found if f.is_file()]
        if not existing:
            raise InvalidInputError(f"no results.parquet or results.csv in directory {str(p)!r}")
        p = existing[0]
    if not p.is_file():
        raise InvalidInputError(f"results file {str(p)!r} does not exist")
    if p.suffix not in (".parquet", ".csv"):
        raise InvalidInputError(f"results file {str(p)!r}: expected a .parquet or .csv suffix")
    try:
        if p.suffix == ".parquet":
            df = pd.read_parquet(p, engine="pyarrow")
        else:
            text_cols = {c: str for c, k in RESULT_COLUMNS.items() if k == "str"}
            df = pd.read_csv(p, dtype=text_cols, keep_default_na=False)
    except Exception as exc:  # pyarrow/pandas raise many types for a damaged file
        raise InvalidInputError(
            f"results file {str(p)!r} is unreadable ({type(exc).__name__}: {exc}); rerun "
            "`costeer-lab run` with the same spec and --out to rewrite it"
        ) from None
    try:
        return validate_results(df)
    except InvalidInputError as exc:
        raise InvalidInputError(f"results file {str(p)!r}: {exc}") from None
