"""Results with their JSON columns decoded: lists and dicts instead of JSON text.

The results table stores ``error_fingerprints``, ``used_knowledge_ids`` (JSON lists) and
``retrieved`` (a JSON object: query kind -> knowledge ids) as text, so Parquet and CSV files stay
simple and identical. For analysis in pandas, :func:`decode_json_columns` turns them into Python
objects on a copy.

Example:
    >>> from costeer_lab.testing import example_results
    >>> df = decode_json_columns(example_results())
    >>> type(df["error_fingerprints"].iloc[0]).__name__, type(df["retrieved"].iloc[0]).__name__
    ('list', 'dict')
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from costeer_lab.errors import InvalidInputError

__all__ = ["JSON_COLUMNS", "decode_json_columns"]

#: Columns of ``RESULT_COLUMNS`` that hold JSON text, and the type each decodes to.
JSON_COLUMNS: dict[str, type] = {
    "error_fingerprints": list,
    "used_knowledge_ids": list,
    "retrieved": dict,
}


def decode_json_columns(results: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``results`` whose JSON text columns hold lists / dicts (columns it lacks are
    skipped).

    Raises:
        InvalidInputError: a cell is not JSON of the expected type (names the column and row).
    """
    out = results.copy()
    for column, kind in JSON_COLUMNS.items():
        if column not in out.columns:
            continue
        values: list[Any] = []
        for row, text in zip(out.index, out[column], strict=True):
            try:
                value = json.loads(text) if isinstance(text, str) else text
            except json.JSONDecodeError as exc:
                raise InvalidInputError(
                    f"results column {column!r}, row {row!r}: not JSON ({exc}): {text!r:.80}"
                ) from None
            if not isinstance(value, kind):
                raise InvalidInputError(
                    f"results column {column!r}, row {row!r}: expected a JSON "
                    f"{'list' if kind is list else 'object'}, got {type(value).__name__}"
                )
            values.append(value)
        out[column] = pd.Series(values, index=out.index, dtype=object)
    return out
