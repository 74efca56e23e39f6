"""Bounded reading of a candidate's Parquet file in the trusted process.

``pandas.read_parquet`` trusts the file: a few hundred bytes of dictionary-encoded, compressed
data decode to gigabytes; a schema of thousands of (nested) columns is materialised before any
check; and the ``pandas`` metadata drives the conversion (a ``numpy_type`` of
``datetime64[ns, dateutil/<path>]`` makes it open a host path, and its error says whether the
path exists). :func:`read_frame` reads the file as untrusted input instead:

1. **Before parsing the footer**: the file ends in ``PAR1`` and a footer of at most
   :data:`~costeer_lab.evaluate._budget.MAX_FOOTER_BYTES`.
2. **Before decoding any data** (from the footer): at most ``MAX_COLUMNS`` flat columns of
   numbers, booleans, dates, timestamps or strings (no lists, structs, maps, binary...); at most
   ``max_rows`` rows and ``MAX_ROW_GROUPS`` row groups; a decoded size — fixed-width columns at
   their width per row, string columns *kept dictionary-encoded* (4 bytes per row plus the
   announced size of their pages) — of at most ``max_bytes``.
3. **While decoding**, batch by batch (one thread, :data:`~costeer_lab.evaluate._budget.BATCH_ROWS`
   rows at a time): the bytes decoded so far stay under ``max_bytes`` (a footer that lies is
   caught at the next batch), no string is longer than ``MAX_LABEL_BYTES``, and the CPU
   deadline holds.
4. **Conversion**: the ``pandas`` metadata is used for one thing only, the names of the index
   columns (a list of strings; anything else in it is ignored). Every column is converted by
   this module from its Arrow type; a time zone is taken only when it is ``UTC``, a fixed
   offset or the name of a zone of the system's tz database (never a path), and a refusal does
   not echo it.

Every refusal is a :class:`FactorFileError` whose message is feedback for the candidate.
"""

from __future__ import annotations

import datetime as _dt
import functools
import io
import json
import re
import struct
import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from costeer_lab.evaluate._budget import (
    BATCH_ROWS,
    MAX_COLUMNS,
    MAX_DECODED_BYTES,
    MAX_FOOTER_BYTES,
    MAX_LABEL_BYTES,
    MAX_ROW_GROUPS,
    TRUSTED_CPU_S,
    CpuDeadline,
)

__all__ = ["FactorFileError", "ParsedFrame", "read_frame"]

_MAGIC = b"PAR1"
_INDEX_LEVEL = re.compile(r"__index_level_\d+__")
_OFFSET = re.compile(r"([+-])(\d\d):(\d\d)")
_MAX_NAME_CHARS = 200


class FactorFileError(ValueError):
    """The candidate's file is refused; the message says why (feedback for the candidate)."""


@dataclass
class ParsedFrame:
    """What :func:`read_frame` returns: the frame (as ``pandas.read_parquet`` would shape it)
    and notes about conversions it made."""

    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def short(text: object, limit: int = 80) -> str:
    """``repr``-free bounded text of a name the candidate chose (for messages)."""
    s = str(text)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _footer_size(data: bytes, name: str) -> int:
    """The footer length; refuses non-Parquet data and footers over the budget."""
    if len(data) < 12 or data[:4] != _MAGIC or data[-4:] != _MAGIC:
        raise FactorFileError(
            f"output: {name} could not be read as parquet (not a Parquet file: "
            "it does not start and end with PAR1)"
        )
    size = int(struct.unpack("<I", data[-8:-4])[0])
    if size > MAX_FOOTER_BYTES or size > len(data) - 12:
        raise FactorFileError(
            f"output: {name} has a Parquet footer of {size} bytes; at most "
            f"{MAX_FOOTER_BYTES} are read (a factor file needs a few kilobytes)"
        )
    return size


def _open(data: bytes, name: str, **options: Any) -> pq.ParquetFile:
    """``ParquetFile`` with bounded Thrift decoding and no extension types."""
    try:
        return pq.ParquetFile(
            io.BytesIO(data),
            thrift_string_size_limit=MAX_FOOTER_BYTES,
            thrift_container_size_limit=64 * 1024,
            schema_depth_limit=4,
            arrow_extensions_enabled=False,
            pre_buffer=False,
            **options,
        )
    except Exception as exc:
        raise FactorFileError(
            f"output: {name} could not be read as parquet ({type(exc).__name__}: "
            f"{short(exc, 300)})"
        ) from None


def _check_shape(meta: pq.FileMetaData, name: str, max_rows: int) -> None:
    """Columns, nesting, rows and row groups, from the footer alone."""
    if meta.num_columns > MAX_COLUMNS:
        raise FactorFileError(
            f"output: {name} has {meta.num_columns} columns; at most {MAX_COLUMNS} are read "
            "(a factor file holds one value column and the (datetime, instrument) index)"
        )
    if meta.num_rows > max_rows:
        raise FactorFileError(
            f"output: {name} has {meta.num_rows} rows; at most {max_rows} are read"
        )
    if meta.num_row_groups > MAX_ROW_GROUPS:
        raise FactorFileError(
            f"output: {name} has {meta.num_row_groups} row groups; at most {MAX_ROW_GROUPS}"
        )
    schema = meta.schema
    for i in range(meta.num_columns):
        col = schema.column(i)
        if col.max_repetition_level > 0 or "." in col.path:
            raise FactorFileError(
                f"output: {name} has a nested column {short(col.path)!r}; a factor file holds "
                "flat columns of numbers, dates and strings"
            )


def _is_string(tp: pa.DataType) -> bool:
    return bool(pa.types.is_string(tp) or pa.types.is_large_string(tp))


def _allowed(tp: pa.DataType) -> bool:
    """Flat types a factor file may hold (dictionaries of strings: pandas categoricals)."""
    if pa.types.is_dictionary(tp):
        return bool(pa.types.is_integer(tp.index_type)) and _is_string(tp.value_type)
    return bool(
        pa.types.is_integer(tp)
        or pa.types.is_floating(tp)
        or pa.types.is_boolean(tp)
        or pa.types.is_timestamp(tp)
        or pa.types.is_date(tp)
        or _is_string(tp)
    )


def _check_types(schema: pa.Schema, meta: pq.FileMetaData, name: str) -> None:
    if len(schema) != meta.num_columns:
        raise FactorFileError(f"output: {name} has nested columns; a factor file is flat")
    names = [f.name for f in schema]
    if len(set(names)) != len(names):
        raise FactorFileError(f"output: {name} has duplicated column names")
    for f in schema:
        if len(f.name) > _MAX_NAME_CHARS:
            raise FactorFileError(
                f"output: {name} has a column name of {len(f.name)} characters; at most "
                f"{_MAX_NAME_CHARS}"
            )
        if not _allowed(f.type):
            raise FactorFileError(
                f"output: {name}: column {short(f.name)!r} has type {short(f.type, 60)}; a "
                "factor file holds flat columns of numbers, dates and strings"
            )


def _width(tp: pa.DataType) -> int:
    """Decoded bytes per row of a column (strings: the dictionary index; their values are
    counted from the pages' announced size)."""
    if pa.types.is_boolean(tp):
        return 1
    if _is_string(tp) or pa.types.is_dictionary(tp):
        return 4
    return max(int(tp.bit_width) // 8, 1)


def _announced_bytes(meta: pq.FileMetaData, schema: pa.Schema) -> int:
    """Decoded size the footer implies: the larger of the rows times the width and the
    column chunk's uncompressed size, summed (plus a validity bit per row)."""
    total = 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for i, f in enumerate(schema):
            rows = max(group.num_rows, 0)
            chunk = max(group.column(i).total_uncompressed_size, 0)
            fixed = rows * _width(f.type) + rows // 8 + 1
            total += (
                fixed + chunk
                if _is_string(f.type) or pa.types.is_dictionary(f.type)
                else max(fixed, chunk)
            )
    return total


def _index_columns(schema: pa.Schema) -> list[str]:
    """Names of the index columns per the ``pandas`` metadata: a list of column names of the
    file; everything else in the metadata is ignored (see the module docstring)."""
    raw = (schema.metadata or {}).get(b"pandas")
    if not raw or len(raw) > MAX_FOOTER_BYTES:
        return []
    try:
        meta = json.loads(raw)
    except (ValueError, RecursionError):
        return []
    found = meta.get("index_columns") if isinstance(meta, dict) else None
    if not isinstance(found, list):
        return []
    names = set(schema.names)
    out = [c for c in found if isinstance(c, str) and c in names]
    return list(dict.fromkeys(out))


def _decode(pf: pq.ParquetFile, name: str, max_bytes: int, deadline: CpuDeadline) -> pa.Table:
    """The file's batches, decoded within the byte and CPU budgets."""
    batches: list[pa.RecordBatch] = []
    used = 0
    for batch in pf.iter_batches(
        batch_size=BATCH_ROWS, use_threads=False, use_pandas_metadata=False
    ):
        used += batch.get_total_buffer_size()
        if used > max_bytes:
            raise FactorFileError(
                f"output: {name} decodes to more than {max_bytes} bytes; at most "
                f"{max_bytes} are read"
            )
        if deadline.expired():
            raise FactorFileError(
                f"output: decoding {name} took more than {deadline.seconds:g} s of CPU; "
                "a factor file decodes in milliseconds"
            )
        _check_labels(batch, name)
        batches.append(batch)
    return pa.Table.from_batches(batches) if batches else pf.schema_arrow.empty_table()


def _check_labels(batch: pa.RecordBatch, name: str) -> None:
    """Refuses strings longer than ``MAX_LABEL_BYTES`` (they would be copied per row)."""
    for col_name, column in zip(batch.schema.names, batch.columns, strict=True):
        values = column.dictionary if pa.types.is_dictionary(column.type) else column
        if not _is_string(values.type) or len(values) == 0:
            continue
        longest = pc.max(pc.binary_length(values)).as_py()
        if longest is not None and longest > MAX_LABEL_BYTES:
            raise FactorFileError(
                f"output: {name}: column {short(col_name)!r} holds a string of {longest} bytes; "
                f"at most {MAX_LABEL_BYTES} (instrument codes and dates are short)"
            )


def read_frame(
    data: bytes,
    name: str,
    *,
    max_rows: int,
    max_bytes: int = MAX_DECODED_BYTES,
    cpu_s: float = TRUSTED_CPU_S,
) -> ParsedFrame:
    """The candidate's Parquet file as a DataFrame, read within the budget (module docstring).

    Raises:
        FactorFileError: the file is refused (the message is feedback for the candidate).

    Example:
        >>> buf = io.BytesIO()
        >>> pd.DataFrame({"f": [1.0]}, pd.Index(["A"], name="instrument")).to_parquet(buf)
        >>> read_frame(buf.getvalue(), "r.parquet", max_rows=10).frame["f"].tolist()
        [1.0]
    """
    deadline = CpuDeadline(cpu_s)
    _footer_size(data, name)
    pf = _open(data, name)
    meta = pf.metadata
    _check_shape(meta, name, max_rows)
    schema = pf.schema_arrow
    _check_types(schema, meta, name)
    size = _announced_bytes(meta, schema)
    if size > max_bytes:
        raise FactorFileError(
            f"output: {name} decodes to {size} bytes; at most {max_bytes} are read"
        )
    strings = [f.name for f in schema if _is_string(f.type)]
    pf = _open(data, name, metadata=meta, read_dictionary=strings)
    try:
        table = _decode(pf, name, max_bytes, deadline)
    except FactorFileError:
        raise
    except Exception as exc:  # a damaged page, a lying header: the candidate's file
        raise FactorFileError(
            f"output: {name} could not be read as parquet ({type(exc).__name__}: "
            f"{short(exc, 300)})"
        ) from None
    parsed = _to_frame(table, _index_columns(schema), name)
    if deadline.expired():
        raise FactorFileError(
            f"output: decoding {name} took more than {deadline.seconds:g} s of CPU; "
            "a factor file decodes in milliseconds"
        )
    return parsed


def _to_frame(table: pa.Table, index_cols: Sequence[str], name: str) -> ParsedFrame:
    """A DataFrame shaped as ``pandas.read_parquet`` would (index from ``index_cols``)."""
    notes: list[str] = []
    arrays = {c: _to_pandas(table.column(c), c, notes) for c in table.column_names}
    data_cols = [c for c in table.column_names if c not in index_cols]
    if index_cols:
        levels = [arrays[c] for c in index_cols]
        names = [None if _INDEX_LEVEL.fullmatch(c) else c for c in index_cols]
        index: pd.Index = (
            pd.Index(levels[0], name=names[0])
            if len(levels) == 1
            else pd.MultiIndex.from_arrays(levels, names=names)
        )
    else:
        index = pd.RangeIndex(table.num_rows)
    frame = pd.DataFrame({c: arrays[c] for c in data_cols}, index=index, copy=False)
    frame.columns = pd.Index(data_cols, dtype=object)
    return ParsedFrame(frame, notes)


def _to_pandas(column: pa.ChunkedArray, col: str, notes: list[str]) -> Any:
    """One column as a numpy or pandas array, converted from its Arrow type only."""
    tp = column.type
    if pa.types.is_dictionary(tp) or _is_string(tp):
        return _strings(column)
    if pa.types.is_timestamp(tp):
        return _timestamps(column, col)
    if pa.types.is_date(tp):
        notes.append(f"note: the {short(col)} level held datetime.date objects; converted")
        return pd.DatetimeIndex(column.cast(pa.timestamp("s")).to_numpy())
    return column.to_pandas().to_numpy()


def _strings(column: pa.ChunkedArray) -> np.ndarray:
    """Object array of ``str`` (``None`` for nulls); one Python string per distinct value of
    each chunk's dictionary, shared by the rows that hold it."""
    parts: list[np.ndarray] = []
    for chunk in column.chunks:
        if not pa.types.is_dictionary(chunk.type):
            chunk = pc.dictionary_encode(chunk)
        labels = np.array([*chunk.dictionary.to_pylist(), None], dtype=object)
        codes = chunk.indices.fill_null(len(chunk.dictionary)).to_numpy(zero_copy_only=False)
        parts.append(labels[codes.astype(np.int64)])
    return np.concatenate(parts) if parts else np.array([], dtype=object)


def _timestamps(column: pa.ChunkedArray, col: str) -> pd.DatetimeIndex:
    """Naive or tz-aware timestamps; the zone is validated, never looked up as a path."""
    tp = column.type
    naive = pa.timestamp(tp.unit)
    chunks = [c.view(naive) for c in column.chunks]
    values = (
        pa.chunked_array(chunks, type=naive).to_numpy()
        if chunks
        else np.array([], dtype=f"datetime64[{tp.unit}]")
    )
    index = pd.DatetimeIndex(values)
    if tp.tz is None:
        return index
    zone = _zone(tp.tz)
    if zone is None:
        raise FactorFileError(
            f"index: the {short(col)} column has a time zone that is not UTC, a fixed offset "
            "or a zone name of the tz database; write naive dates"
        )
    return index.tz_localize("UTC").tz_convert(zone)


def _zone(name: str) -> _dt.tzinfo | None:
    """The tzinfo of an allowed zone string, else ``None`` (no file is opened for others)."""
    if name in ("UTC", "Z", "utc", "Etc/UTC"):
        return _dt.UTC
    m = _OFFSET.fullmatch(name)
    if m is not None:
        minutes = int(m.group(2)) * 60 + int(m.group(3))
        if minutes >= 24 * 60:
            return None
        sign = -1 if m.group(1) == "-" else 1
        return _dt.timezone(_dt.timedelta(minutes=sign * minutes))
    if name in _zone_names():
        return zoneinfo.ZoneInfo(name)
    return None


@functools.cache
def _zone_names() -> frozenset[str]:
    """Zone names of the system's tz database (the candidate's string is only compared)."""
    return frozenset(zoneinfo.available_timezones())
