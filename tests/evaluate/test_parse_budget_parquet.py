"""Issue 22 (3a, 4b): a candidate's Parquet file is parsed within the trusted budget.

Each test here failed on the code before the fix (see the issue's report): the dictionary bomb
grew the trusted process by > 1 GiB, wide and nested files were decoded by
``pandas.read_parquet`` before any check, pandas metadata naming a ``dateutil/<path>`` zone
made the trusted process open that host path, and a tz-aware level at a DST gap raised.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from costeer_lab.evaluate._factor_checks import read_factor

ROOT = Path(__file__).resolve().parents[2]

#: The bomb: one 1 MiB string, dictionary-encoded and zstd-compressed, in every row.
BOMB = """
import io
import pyarrow as pa, pyarrow.parquet as pq

def bomb(rows: int) -> bytes:
    value = "x" * (1 << 20)
    codes = pa.array([0] * rows, pa.int32())
    table = pa.table({
        "f": pa.array([1.0] * rows),
        "datetime": pa.array([0] * rows, pa.timestamp("ns")),
        "instrument": pa.DictionaryArray.from_arrays(codes, pa.array([value])),
    })
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", compression_level=22, store_schema=False,
                   write_statistics=False)
    return buf.getvalue()
"""


def _hwm_mb() -> str:
    """Python expression: this process's peak resident memory (MiB)."""
    status = "open('/proc/self/status')"
    return f"int([ln for ln in {status} if ln.startswith('VmHWM')][0].split()[1]) / 1024"


def test_dictionary_bomb_is_refused_with_bounded_trusted_memory() -> None:
    """~600 bytes that decode to 400 MiB of strings (old code: +1 GiB peak RSS); measured in a
    subprocess so that this process's own high-water mark does not matter."""
    script = BOMB + textwrap.dedent(
        f"""
        import json
        from costeer_lab.evaluate._factor_checks import read_factor
        data = bomb(400)
        before = {_hwm_mb()}
        rep = read_factor(data)
        after = {_hwm_mb()}
        print(json.dumps({{"size": len(data), "growth_mb": after - before,
                           "failures": rep.failures}}))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["size"] < 1024  # a tiny file...
    assert got["growth_mb"] < 64, got  # ...that may not cost the trusted process memory
    assert got["failures"] and "instrument" in got["failures"][0], got


def _frame(n: int = 4) -> pd.DataFrame:
    idx = pd.MultiIndex.from_product(
        [pd.bdate_range("2021-01-04", periods=n), ["A", "B"]], names=["datetime", "instrument"]
    )
    return pd.DataFrame({"f": np.arange(len(idx), dtype=float)}, idx)


def _bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Records every call that decodes a Parquet file's data."""
    calls: list[str] = []

    def spy(name: str, original: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return original(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(pd, "read_parquet", spy("pd.read_parquet", pd.read_parquet))
    monkeypatch.setattr(pq, "read_table", spy("pq.read_table", pq.read_table))
    for method in ("read", "read_row_group", "read_row_groups", "iter_batches"):
        monkeypatch.setattr(
            pq.ParquetFile, method, spy(f"ParquetFile.{method}", getattr(pq.ParquetFile, method))
        )
    yield calls


def test_many_columns_are_refused_before_any_data_is_decoded(decodes: list[str]) -> None:
    table = pa.table({f"c{i}": pa.array([1.0]) for i in range(2000)})
    rep = read_factor(_bytes(table))
    assert not rep.ok and "has 2000 columns" in rep.failures[0]
    assert decodes == []


@pytest.mark.parametrize(
    "column",
    [
        pa.array([[1.0, 2.0]] * 8, pa.list_(pa.float64())),
        pa.array([{"a": 1.0, "b": 2.0}] * 8),
        pa.array([{"k": 1.0}] * 8, pa.map_(pa.string(), pa.float64())),
    ],
    ids=["list", "struct", "map"],
)
def test_nested_columns_are_refused_before_any_data_is_decoded(
    decodes: list[str], column: pa.Array
) -> None:
    table = pa.Table.from_pandas(_frame()).set_column(0, "f", column)
    rep = read_factor(_bytes(table))
    assert not rep.ok and "nested" in rep.failures[0], rep.failures
    assert decodes == []


def test_a_footer_announcing_too_many_decoded_bytes_is_refused_unread(decodes: list[str]) -> None:
    rows = 2_000_000  # 48 MB of fixed-width columns, over a 16 MB budget; a ~20 kB file
    table = pa.table(
        {
            "f": pa.array(np.zeros(rows)),
            "g": pa.array(np.zeros(rows)),
            "h": pa.array(np.zeros(rows)),
        }
    )
    rep = read_factor(_bytes(table), max_bytes=16 * 1024 * 1024)
    assert not rep.ok and "decodes to" in rep.failures[0]
    assert decodes == []


_OPENED: list[str] = []
_MARK = "costeer-tz-probe"


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and args and _MARK in str(args[0]):
        _OPENED.append(str(args[0]))


sys.addaudithook(_audit)  # records only paths holding the marker (hooks cannot be removed)


def _tz_metadata_file(path: str) -> bytes:
    """A valid factor file whose pandas metadata names the zone ``dateutil/<path>`` (pandas
    resolves the column index's ``numpy_type``: dateutil opens the path)."""
    table = pa.Table.from_pandas(_frame())
    meta = json.loads(table.schema.metadata[b"pandas"])
    zone = f"dateutil/{path}"
    meta["column_indexes"] = [
        {"name": None, "field_name": None, "pandas_type": "unicode",
         "numpy_type": f"datetime64[ns, {zone}]", "metadata": None}
    ]  # fmt: skip
    return _bytes(table.replace_schema_metadata({b"pandas": json.dumps(meta).encode()}))


def _tz_arrow_file(path: str) -> bytes:
    """A factor file whose Arrow timestamp type names the zone ``dateutil/<path>``."""
    table = pa.Table.from_pandas(_frame())
    i = table.schema.get_field_index("datetime")
    tp = pa.timestamp("us", tz=f"dateutil/{path}")
    column = pa.chunked_array([c.view(tp) for c in table.column(i).chunks])
    return _bytes(table.set_column(i, pa.field("datetime", tp), column))


@pytest.mark.parametrize("make", [_tz_metadata_file, _tz_arrow_file], ids=["pandas", "arrow"])
def test_zone_paths_in_the_file_are_never_opened_nor_told_apart(tmp_path: Path, make: Any) -> None:
    existing = tmp_path / f"{_MARK}-exists"
    existing.write_text("TZif")
    missing = tmp_path / f"{_MARK}-missing"
    _OPENED.clear()
    texts = []
    for path in (existing, missing):
        rep = read_factor(make(str(path)))
        texts.append("\n".join(rep.lines).replace(str(path), "<path>"))
    assert _OPENED == []
    assert texts[0] == texts[1]
    assert str(tmp_path) not in texts[0]


def test_known_zones_are_still_read(decodes: list[str]) -> None:
    days = pd.bdate_range("2021-01-04", periods=4).tz_localize("Asia/Shanghai")
    idx = pd.MultiIndex.from_product([days, ["A", "B"]], names=["datetime", "instrument"])
    df = pd.DataFrame({"f": np.arange(8.0)}, idx)
    buf = io.BytesIO()
    df.to_parquet(buf)
    rep = read_factor(buf.getvalue())
    assert rep.ok, rep.lines
    assert rep.series is not None
    dates = rep.series.index.get_level_values("datetime")
    assert isinstance(dates, pd.DatetimeIndex) and str(dates.tz) == "Asia/Shanghai"


def _dst_gap_bytes() -> bytes:
    """A tz-aware level on the day São Paulo's clocks skipped midnight (2018-11-04)."""
    days = pd.DatetimeIndex(
        ["2018-11-02 12:00", "2018-11-03 12:00", "2018-11-04 12:00", "2018-11-05 12:00"]
    ).tz_localize("America/Sao_Paulo")
    idx = pd.MultiIndex.from_product([days, ["A", "B"]], names=["datetime", "instrument"])
    buf = io.BytesIO()
    pd.DataFrame({"f": np.arange(8.0)}, idx).to_parquet(buf)
    return buf.getvalue()


def test_a_dst_gap_in_a_tz_aware_level_is_a_format_failure_not_an_exception() -> None:
    rep = read_factor(_dst_gap_bytes())
    assert not rep.ok
    assert rep.failures == ["frequency: datetimes carry a time of day; expected daily dates"]


def test_the_bounded_reader_reads_what_pandas_wrote_as_before() -> None:
    """Common shapes read to the same frame as ``pandas.read_parquet`` gives."""
    df = _frame(6)
    df.index = pd.MultiIndex.from_arrays(
        [[d.date() for d in df.index.get_level_values(0)], df.index.get_level_values(1)],
        names=["datetime", "instrument"],
    )
    buf = io.BytesIO()
    df.to_parquet(buf)
    rep = read_factor(buf.getvalue())
    assert rep.ok and "note: the datetime level held datetime.date objects; converted" in rep.lines
    assert rep.series is not None
    expected = pd.read_parquet(io.BytesIO(_bytes(pa.Table.from_pandas(_frame(6)))))["f"]
    pd.testing.assert_series_equal(
        rep.series, expected.sort_index(), check_index_type=False, check_names=False
    )


def test_budget_constants_fit_the_red_team_bounds() -> None:
    from costeer_lab.evaluate import _budget
    from costeer_lab.testing import _redteam

    assert _budget.TRUSTED_CPU_S <= _redteam.TRUSTED_CPU_S
    assert _budget.TRUSTED_RSS_MB <= _redteam.TRUSTED_RSS_MB
    assert _budget.MAX_FEEDBACK_CHARS <= _redteam.MAX_FEEDBACK_CHARS
    assert _budget.MAX_DECODED_BYTES * 4 <= _budget.TRUSTED_RSS_MB * 1024 * 1024
    assert os.cpu_count()  # the CPU budget is per thread (time.thread_time)
