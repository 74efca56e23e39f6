"""Property-based checks: JSON round trips and SQL ``where`` filters against a Python reference."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costeer_lab.store import NodeRecord, SQLiteStore

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
SCALARS = st.one_of(st.none(), st.booleans(), INT64, FLOATS, TEXT)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
FIELDS = st.sampled_from(["a", "b", "a.b", "ü ✓", "$x"])
RECORD = st.one_of(st.dictionaries(FIELDS, SCALARS, max_size=4), JSON)
PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same_json(stored: Any, wanted: Any) -> bool:
    """``stored == wanted`` as JSON values: bool, null, number and string are distinct types."""
    if wanted is None or isinstance(wanted, bool):
        return stored is wanted
    if isinstance(wanted, str):
        return isinstance(stored, str) and stored == wanted
    return isinstance(stored, int | float) and not isinstance(stored, bool) and stored == wanted


def _matches(data: Any, where: dict[str, Any]) -> bool:
    if not where:
        return True  # no filter: every record
    return isinstance(data, dict) and all(
        field in data and _same_json(data[field], value) for field, value in where.items()
    )


@PROPS
@given(data=JSON)
def test_records_round_trip_any_json(data: Any) -> None:
    with SQLiteStore() as store:
        store.put_record("k", "key", data)
        assert store.get_record("k", "key") == data
        assert list(store.iter_records("k")) == [("key", data)]


@PROPS
@given(attrs=st.dictionaries(TEXT, JSON, max_size=5), content=TEXT)
def test_node_attrs_round_trip(attrs: dict[str, Any], content: str) -> None:
    with SQLiteStore() as store:
        store.put_nodes([NodeRecord("n", "k", content, attrs)])
        node = store.get_node("n")
        assert node is not None and node.attrs == attrs and node.content == content


@PROPS
@given(records=st.lists(RECORD, max_size=12), where=st.dictionaries(FIELDS, SCALARS, max_size=2))
def test_where_filters_agree_with_python(records: list[Any], where: dict[str, Any]) -> None:
    with SQLiteStore() as store:
        store.put_records("r", [(f"k{i}", data) for i, data in enumerate(records)])
        expected = [f"k{i}" for i, data in enumerate(records) if _matches(data, where)]
        assert [k for k, _ in store.iter_records("r", where=where)] == expected
        assert store.count_records("r", where=where) == len(expected)


@PROPS
@given(
    st.lists(
        st.lists(st.floats(width=32, allow_nan=False), min_size=3, max_size=3),
        min_size=1,
        max_size=8,
    )
)
def test_vectors_round_trip_bit_exact(rows: list[list[float]]) -> None:
    matrix = np.array(rows, dtype=np.float32)
    if not np.isfinite(matrix).all():
        return  # non-finite vectors are refused (tested in the suite)
    ids = [f"v{i}" for i in range(len(rows))]
    with SQLiteStore() as store:
        store.put_vectors("c", "e@1:3", ids, matrix)
        got_ids, got, _ = store.load_vectors("c")
        assert got_ids == ids and got.tobytes() == matrix.tobytes()
