"""The bounded Parquet reader (``costeer_lab/evaluate/_factor_parquet.py``) pinned exactly:
each limit on its edge, the refusal messages (feedback for the candidate), the zones allowed,
and the frame it returns for each column type and index layout.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import struct
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from costeer_lab.evaluate._budget import MAX_COLUMNS, MAX_FOOTER_BYTES, MAX_LABEL_BYTES
from costeer_lab.evaluate._factor_parquet import FactorFileError, _zone, read_frame, short

NAME = "result.parquet"


def _table_bytes(table: pa.Table, **kw: Any) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **kw)
    return buf.getvalue()


def _frame_bytes(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf)
    return buf.getvalue()


def _refusal(data: bytes, **kw: Any) -> str:
    with pytest.raises(FactorFileError) as info:
        read_frame(data, NAME, **({"max_rows": 1000} | kw))
    return str(info.value)


# -- the footer ----------------------------------------------------------------------------------
NOT_PARQUET = (
    "output: result.parquet could not be read as parquet (not a Parquet file: it does not "
    "start and end with PAR1)"
)


def test_magic_bytes_and_the_minimum_size() -> None:
    good = _table_bytes(pa.table({"f": [1.0]}))
    for data in (
        b"",
        b"PAR1PAR1",
        b"PAR1" + b"\0" * 3 + b"PAR1",
        b"XAR1" + good[4:],
        good[:-4] + b"PAR2",
    ):
        assert _refusal(data) == NOT_PARQUET
    assert read_frame(good, NAME, max_rows=1).frame["f"].tolist() == [1.0]


def test_footer_size_limits() -> None:
    big = MAX_FOOTER_BYTES + 1
    assert _refusal(_with_footer(big, big)) == (
        f"output: result.parquet has a Parquet footer of {big} bytes; at most "
        f"{MAX_FOOTER_BYTES} are read (a factor file needs a few kilobytes)"
    )
    assert "footer of 5 bytes" in _refusal(_with_footer(5, 4))  # longer than the file
    # a footer of exactly the file's remaining bytes is parsed (and found invalid)
    assert _refusal(_with_footer(4, 4)).startswith(
        "output: result.parquet could not be read as parquet ("
    )


# -- shape and types from the footer -------------------------------------------------------------
def test_column_count_limit_is_inclusive() -> None:
    ok = pa.table({f"c{i}": [1.0] for i in range(MAX_COLUMNS)})
    assert read_frame(_table_bytes(ok), NAME, max_rows=1).frame.shape == (1, MAX_COLUMNS)
    wide = pa.table({f"c{i}": [1.0] for i in range(MAX_COLUMNS + 1)})
    assert _refusal(_table_bytes(wide)) == (
        f"output: result.parquet has {MAX_COLUMNS + 1} columns; at most {MAX_COLUMNS} are read "
        "(a factor file holds one value column and the (datetime, instrument) index)"
    )


def test_row_limit_is_inclusive() -> None:
    data = _table_bytes(pa.table({"f": [1.0, 2.0, 3.0]}))
    assert len(read_frame(data, NAME, max_rows=3).frame) == 3
    assert _refusal(data, max_rows=2) == ("output: result.parquet has 3 rows; at most 2 are read")


def test_nested_and_unsupported_columns() -> None:
    nested = pa.table({"s": pa.array([{"a": 1.0}])})
    assert _refusal(_table_bytes(nested)) == (
        "output: result.parquet has a nested column 's.a'; a factor file holds flat columns of "
        "numbers, dates and strings"
    )
    binary = pa.table({"b": pa.array([b"x"])})
    assert _refusal(_table_bytes(binary)) == (
        "output: result.parquet: column 'b' has type binary; a factor file holds flat columns "
        "of numbers, dates and strings"
    )


def test_column_names_limits() -> None:
    ok = "n" * 200
    assert list(read_frame(_table_bytes(pa.table({ok: [1.0]})), NAME, max_rows=1).frame) == [ok]
    long = pa.table({"n" * 201: [1.0]})
    assert _refusal(_table_bytes(long)) == (
        "output: result.parquet has a column name of 201 characters; at most 200"
    )
    dup = pa.Table.from_arrays([pa.array([1.0]), pa.array([2.0])], names=["a", "a"])
    assert _refusal(_table_bytes(dup)) == "output: result.parquet has duplicated column names"


def test_every_allowed_type_is_read() -> None:
    table = pa.table(
        {
            "i8": pa.array([1, 2], pa.int8()),
            "u64": pa.array([1, 2], pa.uint64()),
            "f32": pa.array([1.5, 2.5], pa.float32()),
            "b": pa.array([True, False]),
            "ts": pa.array([0, 86_400_000_000_000], pa.timestamp("ns")),
            "d": pa.array([dt.date(2020, 1, 2), dt.date(2020, 1, 3)]),
            "s": pa.array(["A", None]),
            "ls": pa.array(["x", "y"], pa.large_string()),
            "cat": pa.array(["p", "q"]).dictionary_encode(),
        }
    )
    parsed = read_frame(_table_bytes(table), NAME, max_rows=2)
    f = parsed.frame
    assert f["i8"].tolist() == [1, 2] and f["i8"].dtype == np.int8
    assert f["u64"].dtype == np.uint64 and f["f32"].dtype == np.float32
    assert f["b"].tolist() == [True, False]
    assert f["ts"].tolist() == [pd.Timestamp("1970-01-01"), pd.Timestamp("1970-01-02")]
    assert f["d"].tolist() == [pd.Timestamp("2020-01-02"), pd.Timestamp("2020-01-03")]
    assert f["s"].iloc[0] == "A" and pd.isna(f["s"].iloc[1])
    assert f["ls"].tolist() == ["x", "y"] and f["cat"].tolist() == ["p", "q"]
    assert parsed.notes == ["note: the d level held datetime.date objects; converted"]
    assert isinstance(f.index, pd.RangeIndex) and list(f.columns) == list(table.column_names)


# -- decoded size --------------------------------------------------------------------------------
def test_announced_size_is_checked_before_decoding() -> None:
    data = _table_bytes(pa.table({"f": pa.array(np.zeros(1000))}), compression="zstd")
    announced = 1000 * 8 + 1000 // 8 + 1  # width times rows plus validity, over the chunk
    assert len(read_frame(data, NAME, max_rows=1000, max_bytes=announced).frame) == 1000
    assert _refusal(data, max_rows=1000, max_bytes=announced - 1) == (
        f"output: result.parquet decodes to {announced} bytes; at most {announced - 1} are read"
    )
    flags = _table_bytes(pa.table({"b": pa.array([True] * 800)}))
    small = 800 + 800 // 8 + 1  # one byte per boolean
    assert len(read_frame(flags, NAME, max_rows=800, max_bytes=small).frame) == 800
    assert "decodes to" in _refusal(flags, max_rows=800, max_bytes=small - 1)


def test_strings_count_their_pages_on_top_of_the_index() -> None:
    table = pa.table({"s": pa.array(["abc"] * 100)})
    data = _table_bytes(table)
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    chunk = meta.row_group(0).column(0).total_uncompressed_size
    announced = 100 * 4 + 100 // 8 + 1 + chunk
    assert len(read_frame(data, NAME, max_rows=100, max_bytes=announced).frame) == 100
    assert _refusal(data, max_rows=100, max_bytes=announced - 1).startswith(
        f"output: result.parquet decodes to {announced} bytes"
    )


# -- labels --------------------------------------------------------------------------------------
def test_label_length_limit_is_inclusive() -> None:
    ok = pa.table({"s": ["x" * MAX_LABEL_BYTES]})
    assert read_frame(_table_bytes(ok), NAME, max_rows=1).frame["s"].tolist() == [
        "x" * MAX_LABEL_BYTES
    ]
    long = pa.table({"s": ["x", "x" * (MAX_LABEL_BYTES + 1)]})
    assert _refusal(_table_bytes(long)) == (
        f"output: result.parquet: column 's' holds a string of {MAX_LABEL_BYTES + 1} bytes; "
        f"at most {MAX_LABEL_BYTES} (instrument codes and dates are short)"
    )
    cat = pa.table({"c": pa.array(["é" * 129]).dictionary_encode()})  # 258 bytes, 129 chars
    assert "holds a string of 258 bytes" in _refusal(_table_bytes(cat))
    nulls = pa.table({"s": pa.array([None, None], pa.string())})
    assert read_frame(_table_bytes(nulls), NAME, max_rows=2).frame["s"].isna().all()


# -- the index from the pandas metadata ----------------------------------------------------------
def _with_pandas_meta(meta: Any) -> bytes:
    table = pa.table({"f": [1.0, 2.0], "instrument": ["A", "B"]})
    raw = meta if isinstance(meta, bytes) else json.dumps(meta).encode()
    return _table_bytes(table.replace_schema_metadata({b"pandas": raw}))


@pytest.mark.parametrize(
    ("meta", "index_name"),
    [
        ({"index_columns": ["instrument"]}, "instrument"),
        ({"index_columns": ["instrument", "instrument", 3, {"k": 1}, "absent"]}, "instrument"),
        ({"index_columns": "instrument"}, None),
        (["instrument"], None),
        (b"{not json", None),
        (b"", None),
        (b"[" * 100_000 + b"]" * 100_000, None),  # too deep for json
    ],
)
def test_index_columns_come_only_from_a_list_of_names(meta: Any, index_name: str | None) -> None:
    frame = read_frame(_with_pandas_meta(meta), NAME, max_rows=2).frame
    if index_name is None:
        assert isinstance(frame.index, pd.RangeIndex) and list(frame) == ["f", "instrument"]
    else:
        assert frame.index.name == index_name and frame.index.tolist() == ["A", "B"]
        assert list(frame) == ["f"]


def test_pandas_shapes_round_trip() -> None:
    idx = pd.MultiIndex.from_product(
        [pd.to_datetime(["2020-01-02", "2020-01-03"]), ["A", "B"]],
        names=["datetime", "instrument"],
    )
    frame = pd.DataFrame({"f": [1.0, 2.0, np.nan, 4.0]}, idx)
    back = read_frame(_frame_bytes(frame), NAME, max_rows=4).frame
    pd.testing.assert_frame_equal(back, frame, check_column_type=False)
    unnamed = pd.DataFrame({"f": [1.0, 2.0]}, pd.Index(["A", "B"]))
    got = read_frame(_frame_bytes(unnamed), NAME, max_rows=2).frame
    assert got.index.name is None and got.index.tolist() == ["A", "B"]
    assert list(got.columns) == ["f"] and got.columns.dtype == object


def test_an_empty_file_reads_as_an_empty_frame() -> None:
    empty = pa.table({"f": pa.array([], pa.float64()), "s": pa.array([], pa.string())})
    frame = read_frame(_table_bytes(empty), NAME, max_rows=0).frame
    assert frame.shape == (0, 2) and frame["s"].tolist() == []


# -- time zones ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "offset_minutes"),
    [
        ("UTC", 0),
        ("Z", 0),
        ("utc", 0),
        ("Etc/UTC", 0),
        ("+05:30", 330),
        ("-03:00", -180),
        ("+23:59", 23 * 60 + 59),
        ("-00:01", -1),
    ],
)
def test_allowed_zones(name: str, offset_minutes: int) -> None:
    zone = _zone(name)
    assert zone is not None
    assert zone.utcoffset(dt.datetime(2020, 1, 1)) == dt.timedelta(minutes=offset_minutes)


def test_utc_names_do_not_depend_on_the_tz_database() -> None:
    for name in ("UTC", "Z", "utc", "Etc/UTC"):
        assert _zone(name) is dt.UTC, name  # not a ZoneInfo read from the system's files


def test_refused_zones() -> None:
    for name in (
        "+24:00",
        "+5:30",
        "05:30",
        "+05:30x",
        "dateutil//etc/passwd",
        "/etc/passwd",
        "Not/AZone",
    ):
        assert _zone(name) is None, name
    assert str(_zone("Europe/Paris")) == "Europe/Paris"


def test_zoned_timestamps_are_converted_or_refused_without_echo() -> None:
    values = pa.array([0, 3_600_000_000_000], pa.timestamp("ns", tz="+01:00"))
    frame = read_frame(_table_bytes(pa.table({"t": values})), NAME, max_rows=2).frame
    assert frame["t"].tolist() == [
        pd.Timestamp("1970-01-01 01:00", tz=dt.timezone(dt.timedelta(hours=1))),
        pd.Timestamp("1970-01-01 02:00", tz=dt.timezone(dt.timedelta(hours=1))),
    ]
    bad = pa.array([0], pa.timestamp("ms", tz="Mars/Olympus"))
    assert _refusal(_table_bytes(pa.table({"t": bad}))) == (
        "index: the t column has a time zone that is not UTC, a fixed offset or a zone name "
        "of the tz database; write naive dates"
    )
    naive = read_frame(
        _table_bytes(pa.table({"t": pa.array([1000], pa.timestamp("s"))})), NAME, max_rows=1
    ).frame
    assert naive["t"].tolist() == [pd.Timestamp("1970-01-01 00:16:40")]


def test_short_names() -> None:
    assert short("x" * 80) == "x" * 80
    assert short("x" * 81) == "x" * 77 + "..."
    assert short(12345, limit=4) == "1..."


# -- written against the survivors of the first mutmut run --------------------------------------
def _chunk_bytes(data: bytes, column: int = 0) -> int:
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    return int(meta.row_group(0).column(column).total_uncompressed_size)


def test_a_one_byte_column_counts_one_byte_per_row() -> None:
    data = _table_bytes(pa.table({"i": pa.array([7] * 1000, pa.int8())}))
    announced = 1000 + 1000 // 8 + 1
    assert _chunk_bytes(data) < announced  # dictionary-encoded: the width decides
    assert len(read_frame(data, NAME, max_rows=1000, max_bytes=announced).frame) == 1000
    assert "decodes to 1126 bytes" in _refusal(data, max_rows=1000, max_bytes=announced - 1)


def test_an_empty_string_column_announces_its_pages_only() -> None:
    data = _table_bytes(pa.table({"s": pa.array([], pa.string())}))
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    assert meta.num_row_groups == 1 and meta.row_group(0).num_rows == 0
    announced = 0 * 4 + 0 // 8 + 1 + _chunk_bytes(data)
    assert read_frame(data, NAME, max_rows=0, max_bytes=announced).frame.shape == (0, 1)
    assert "decodes to" in _refusal(data, max_rows=0, max_bytes=announced - 1)


def _decoded_bytes(data: bytes) -> list[int]:
    """Buffer bytes of each batch as the reader decodes them (strings kept as dictionaries)."""
    pf = pq.ParquetFile(io.BytesIO(data), read_dictionary=["s"])
    return [b.get_total_buffer_size() for b in pf.iter_batches(batch_size=65_536)]


def test_decoded_bytes_add_up_over_batches() -> None:
    """Every batch repeats the string dictionary: the footer announces it once, the decoded
    batches together hold it three times; the running total is what is bounded."""
    labels = [f"{i:04d}" + "x" * 240 for i in range(2000)]
    rows = 3 * 65_536
    table = pa.table({"s": pa.array([labels[i % 2000] for i in range(rows)])})
    data = _table_bytes(table)
    per_batch = _decoded_bytes(data)
    total = sum(per_batch)
    assert len(per_batch) == 3 and max(per_batch) < total // 2
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    announced = rows * 4 + rows // 8 + 1 + meta.row_group(0).column(0).total_uncompressed_size
    assert announced < total - 1  # the footer's figure passes; the decoding does not
    assert len(read_frame(data, NAME, max_rows=rows, max_bytes=total).frame) == rows
    assert _refusal(data, max_rows=rows, max_bytes=total - 1) == (
        f"output: result.parquet decodes to more than {total - 1} bytes; at most {total - 1} "
        "are read"
    )


def test_the_cpu_deadline_is_checked_while_decoding_and_after() -> None:
    message = (
        "output: decoding result.parquet took more than -1 s of CPU; a factor file decodes in "
        "milliseconds"
    )
    rows = _table_bytes(pa.table({"f": [1.0]}))
    assert _refusal(rows, cpu_s=-1.0) == message  # at the first batch
    empty = _table_bytes(pa.table({"f": pa.array([], pa.float64())}))
    assert _refusal(empty, max_rows=0, cpu_s=-1.0) == message  # no batch: after converting


def test_labels_are_checked_after_other_columns() -> None:
    table = pa.table({"f": [1.0], "n": [2], "s": ["x" * (MAX_LABEL_BYTES + 1)]})
    assert "column 's' holds a string of 257 bytes" in _refusal(_table_bytes(table))


def _with_footer(size: int, body: int) -> bytes:
    return b"PAR1" + b"\0" * body + struct.pack("<I", size) + b"PAR1"


UNREADABLE = "output: result.parquet could not be read as parquet (OSError: "


def test_footer_edges() -> None:
    twelve = _refusal(_with_footer(0, 0))  # the smallest file that may be Parquet: parsed
    assert twelve.startswith(UNREADABLE) and twelve != NOT_PARQUET
    assert _refusal(_with_footer(0xFFFF_FFFF, 4)) == (
        "output: result.parquet has a Parquet footer of 4294967295 bytes; at most "
        f"{MAX_FOOTER_BYTES} are read (a factor file needs a few kilobytes)"
    )  # an unsigned size: not -1
    at_limit = _refusal(_with_footer(MAX_FOOTER_BYTES, MAX_FOOTER_BYTES))
    assert at_limit.startswith(UNREADABLE)  # a footer of exactly the limit is parsed


def test_row_group_limit_is_inclusive() -> None:
    ok = _table_bytes(pa.table({"f": [1.0] * 1024}), row_group_size=1)
    assert len(read_frame(ok, NAME, max_rows=2000).frame) == 1024
    over = _table_bytes(pa.table({"f": [1.0] * 1025}), row_group_size=1)
    assert _refusal(over, max_rows=2000) == (
        "output: result.parquet has 1025 row groups; at most 1024"
    )


def test_schema_depth_is_limited_while_parsing_the_footer() -> None:
    def nested(depth: int) -> bytes:
        v: pa.Array = pa.array([1.0])
        for _ in range(depth):
            v = pa.StructArray.from_arrays([v], ["x"])
        return _table_bytes(pa.table({"s": v}))

    assert "has a nested column 's.x.x'" in _refusal(nested(2))
    deep = _refusal(nested(3))  # refused by the parser, before any column is looked at
    assert deep.startswith(UNREADABLE + "Parquet schema too deeply nested")
    assert deep.endswith("(current limit is 4))")  # the reason is shown beyond 80 characters


def test_a_damaged_page_is_a_refusal_with_its_reason() -> None:
    good = _table_bytes(pa.table({"f": [float(i) for i in range(1000)]}), compression="snappy")
    header = bytearray(good)
    header[20:50] = b"\xff" * 30  # the first page's header
    message = _refusal(bytes(header))
    assert message.startswith(UNREADABLE + "Couldn't deserialize thrift")
    assert message.endswith("Deserializing page header failed.\n)")  # beyond 80 characters
    data = bytearray(good)
    data[200:230] = b"\xff" * 30  # inside the compressed values
    assert _refusal(bytes(data)) == UNREADABLE + "Corrupt snappy compressed data.)"
