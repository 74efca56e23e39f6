"""PostgresStore: the shared backend suite on a real PostgreSQL + pgvector, plus its specifics."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
import psycopg
import pytest

from costeer_lab.errors import (
    ConfigurationError,
    EmbedderMismatchError,
    InvalidInputError,
    SchemaVersionError,
    StoreError,
)
from costeer_lab.store import BaseStore, EdgeRecord, NodeRecord, PostgresStore, get_store
from costeer_lab.store._postgres_schema import PG_SCHEMA_VERSION
from costeer_lab.testing import StoreTestSuite


class TestPostgres(StoreTestSuite):
    """The suite with an HNSW index from the first vector on (``index_min_rows=1``), so the
    suite's searches go through the approximate index; exact scans are tested below."""

    @pytest.fixture
    def store(self, postgres_url: str) -> Iterator[PostgresStore]:
        with PostgresStore(postgres_url + "&index_min_rows=1") as store:
            yield store


def test_without_an_index_search_is_an_exact_sql_scan(postgres_url: str) -> None:
    rng = np.random.default_rng(3)
    data = rng.standard_normal((400, 16)).astype(np.float32)
    ids = [f"i{n}" for n in range(400)]
    with PostgresStore(postgres_url + "&vector_index=none") as store:
        store.put_vectors("c", "e@1:16", ids, data)
        for q in data[:5] + 0.1:
            got = store.search_vectors("c", q, 7, min_score=0.2)
            want = _exact(store, "c", q, 7, min_score=0.2)
            assert [i for i, _ in got] == [i for i, _ in want]
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-5)
        assert _hnsw_count(postgres_url) == 0


def test_get_store_opens_both_schemes_and_data_survives_reopening(postgres_url: str) -> None:
    with get_store(postgres_url) as store:
        assert isinstance(store, PostgresStore) and store.url == postgres_url
        store.put_nodes([NodeRecord("n", "component", "ünï", {"a": [1]})])
        store.put_edges([EdgeRecord("n", "m", "r")])
        store.put_record("rec", "k", {"z": 1, "a": 2.50, "big": 2**62})
        store.put_vectors("c", "e@1:2", ["x"], np.array([[0.5, -1.5]], dtype=np.float32))
        store.set_meta("owner", "me")
        version = store.collection_version("c")
    legacy = "postgres://" + postgres_url.split("://", 1)[1]
    with get_store(legacy) as store:
        node = store.get_node("n")
        assert node is not None and (node.kind, node.attrs) == ("component", {"a": [1]})
        assert store.count_edges() == 1
        data = store.get_record("rec", "k")
        assert data == {"z": 1, "a": 2.5, "big": 2**62} and list(data) == ["z", "a", "big"]
        assert store.load_vectors("c")[1].tolist() == [[0.5, -1.5]]
        assert store.collection_version("c") == version
        assert store.get_meta("owner") == "me"
        assert store.schema_version == PG_SCHEMA_VERSION


def _hnsw_count(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM pg_indexes WHERE indexdef LIKE '%hnsw%'")
        return int(row.fetchone()[0])  # type: ignore[index]


#: what each index precision puts in the index definition and its name
_PRECISIONS = {
    "half": ("halfvec_cosine_ops", "l2_normalize", "vectors_hnswh_"),
    "single": ("vector_cosine_ops", "vector(8)", "vectors_hnsw_"),
}


@pytest.mark.parametrize("precision", ["half", "single"])
def test_vectors_use_a_per_collection_hnsw_index(
    postgres_url: str, precision: Literal["half", "single"]
) -> None:
    ops, expression, prefix = _PRECISIONS[precision]
    rng = np.random.default_rng(0)
    with PostgresStore(postgres_url, index_min_rows=40, index_precision=precision) as store:
        store.put_vectors(
            "a", "e@1:8", [f"a{i}" for i in range(30)], rng.random((30, 8), dtype=np.float32)
        )
        assert _hnsw_count(postgres_url) == 0  # small: scanned exactly, cheap inserts
        store.put_vectors(
            "a", "e@1:8", [f"b{i}" for i in range(20)], rng.random((20, 8), dtype=np.float32)
        )
        assert _hnsw_count(postgres_url) == 1  # the write crossing the threshold built it
        store.put_vectors(
            "b", "e@1:3", [f"b{i}" for i in range(40)], np.ones((40, 3), dtype=np.float32)
        )
        with psycopg.connect(postgres_url) as conn:
            indexes = [
                r[0]
                for r in conn.execute(
                    "SELECT indexdef FROM pg_indexes WHERE tablename = 'vectors' "
                    "AND indexdef LIKE '%hnsw%' ORDER BY indexname"
                )
            ]
            assert len(indexes) == 2
            assert any(expression in d and "'a'" in d for d in indexes)
            assert all(ops in d for d in indexes)
        # the store's own search walks the index (its statement, as the server plans it)
        plan = _plan_of_search(store, "a", rng.random(8, dtype=np.float32))
        assert prefix in plan and "Seq Scan" not in plan


def _plan_of_search(store: PostgresStore, collection: str, query: np.ndarray) -> str:
    """The plan the server chooses for ``store.search_vectors`` (``explain_search``), planned
    as for a large table."""
    conn: Any = store._connection()
    conn.execute("SET enable_seqscan = off")  # tiny tables: plan as a large one would be planned
    conn.execute("SET enable_sort = off")
    try:
        return store.explain_search(collection, query, 3, analyze=False)
    finally:
        conn.execute("RESET enable_seqscan")
        conn.execute("RESET enable_sort")


def _exact(store: BaseStore, *args: object, **kw: object) -> list[tuple[str, float]]:
    return BaseStore.search_vectors(store, *args, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("precision", ["half", "single"])
def test_search_agrees_with_the_exact_scan(
    postgres_url: str, precision: Literal["half", "single"]
) -> None:
    """HNSW results against the exact default on 3,000 clustered vectors, filters included;
    scores are the exact single-precision cosines with either index."""
    rng = np.random.default_rng(7)
    centers = rng.standard_normal((30, 32))
    data = (centers[rng.integers(0, 30, 3000)] + 0.3 * rng.standard_normal((3000, 32))).astype(
        np.float32
    )
    ids = [f"v{i:04d}" for i in range(3000)]
    queries = (centers[:20] + 0.3 * rng.standard_normal((20, 32))).astype(np.float32)
    with PostgresStore(postgres_url, index_precision=precision) as store:
        store.put_vectors("big", "e@1:32", ids, data)
        overlap = []
        for q in queries:
            got = store.search_vectors("big", q, 10)
            want = _exact(store, "big", q, 10)
            assert len(got) == 10 and [s for _, s in got] == sorted([s for _, s in got])[::-1]
            overlap.append(len({i for i, _ in got} & {i for i, _ in want}) / 10)
            # the threshold is applied before the cut: every hit qualifies, k come back
            floor = want[9][1] - 1e-4
            thresholded = store.search_vectors("big", q, 10, min_score=floor)
            assert len(thresholded) == 10 and all(s >= floor - 1e-6 for _, s in thresholded)
            # candidate ids: exactly ranked among them, k returned although they are far apart
            allowed = ids[::97]
            assert [i for i, _ in store.search_vectors("big", q, 5, ids=allowed)] == [
                i for i, _ in _exact(store, "big", q, 5, ids=allowed)
            ]
            got_scores = dict(got)
            for i, s in want:
                if i in got_scores:
                    assert got_scores[i] == pytest.approx(s, abs=1e-5)
        assert float(np.mean(overlap)) >= 0.95
        many = store.search_vectors("big", queries[0], 1500)  # beyond ef_search's limit: exact
        assert [i for i, _ in many] == [i for i, _ in _exact(store, "big", queries[0], 1500)]


def test_explain_search_reports_the_search_the_store_runs(postgres_url: str) -> None:
    """``explain_search`` executes the store's own ranking statement: the HNSW walk with its
    server time and buffers, an exact scan for a candidate list, and nothing for ``k=0``."""
    rng = np.random.default_rng(3)
    data = rng.standard_normal((2000, 16)).astype(np.float32)
    with PostgresStore(postgres_url, index_min_rows=1000) as store:
        store.put_vectors("x", "e@1:16", [f"v{i}" for i in range(2000)], data)
        plan = store.explain_search("x", data[5], 10)
        assert "Index Scan using vectors_hnsw" in plan
        assert "Execution Time:" in plan and "Buffers: shared hit=" in plan
        assert "actual time=" in plan and "rows=10" in plan
        narrow = store.explain_search("x", data[5], 3, ids=["v1", "v5", "v9"])
        assert "vectors_hnsw" not in narrow  # a candidate list is ranked exactly
        # the walk widens with ef_search: more index buffers touched at a larger beam
        hits = []
        for ef in (10, 400):
            text = store.explain_search("x", data[7], 10, ef_search=ef)
            hits.append(int(text.split("Buffers: shared hit=")[1].split()[0]))
        assert hits[1] > hits[0]
        with pytest.raises(InvalidInputError, match="k must be >= 1"):
            store.explain_search("x", data[5], 0)
        assert store.search_vectors("x", data[5], 1)[0][0] == "v5"  # nothing was changed


def test_a_search_may_set_its_own_beam(postgres_url: str) -> None:
    """``search_vectors(ef_search=…)`` sets ``hnsw.ef_search`` for that search (raised to
    ``k``) and leaves the store's own default for the others; a bad beam is refused."""
    rng = np.random.default_rng(4)
    data = rng.standard_normal((1500, 12)).astype(np.float32)
    with PostgresStore(postgres_url, index_min_rows=1000, ef_search=40) as store:
        store.put_vectors("y", "e@1:12", [f"v{i}" for i in range(1500)], data)
        conn: Any = store._connection()

        def beam() -> int:
            return int(conn.execute("SHOW hnsw.ef_search").fetchone()[0])

        wide = store.search_vectors("y", data[3], 10, ef_search=300)
        assert beam() == 300 and wide[0][0] == "v3"
        store.search_vectors("y", data[3], 10)
        assert beam() == 40  # the store's default again
        store.search_vectors("y", data[3], 60, ef_search=20)
        assert beam() == 60  # never below k
        exact = _exact(store, "y", data[9], 10)
        widest = store.search_vectors("y", data[9], 10, ef_search=1000)
        assert [h[0] for h in widest] == [h[0] for h in exact]
        for bad in (0, 1001, 2.5, True):
            with pytest.raises(InvalidInputError, match="ef_search must be an int"):
                store.search_vectors("y", data[3], 5, ef_search=bad)  # type: ignore[arg-type]


def test_a_collection_is_searched_through_the_index_it_has(postgres_url: str) -> None:
    """An index built with one precision serves a store opened with the other (the default
    changes with the server's pgvector), and no second index is built beside it."""
    rng = np.random.default_rng(5)
    data = rng.standard_normal((60, 8)).astype(np.float32)
    with PostgresStore(postgres_url, index_min_rows=50, index_precision="single") as store:
        store.put_vectors("c", "e@1:8", [f"i{n}" for n in range(60)], data)
    with PostgresStore(postgres_url, index_precision="half") as store:
        assert "vectors_hnsw_" in _plan_of_search(store, "c", data[0])
        assert store.search_vectors("c", data[3], 1)[0][0] == "i3"
    assert _hnsw_count(postgres_url) == 1


def test_half_precision_index_takes_any_magnitude(postgres_url: str) -> None:
    """Values beyond half precision's range (65,504) are normalised before the cast: stored,
    indexed and scored exactly."""
    data = np.array([[1e6, 2e6, -3e6], [1e-6, 0.0, 0.0], [1e18, 1.0, 1.0]], dtype=np.float32)
    with PostgresStore(postgres_url, index_min_rows=1, index_precision="half") as store:
        store.put_vectors("m", "e@1:3", ["big", "tiny", "huge"], data)
        query = np.array([1.0, 2.0, -3.0], dtype=np.float32)
        hits = store.search_vectors("m", query, 3)
        assert hits[0][0] == "big" and hits[0][1] == pytest.approx(1.0, abs=1e-6)
        assert dict(hits) == pytest.approx(dict(_exact(store, "m", query, 3)), abs=1e-6)


def test_index_precision_option(postgres_url: str) -> None:
    with PostgresStore(postgres_url) as store:  # auto: half where pgvector has halfvec
        with psycopg.connect(postgres_url) as conn:
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            version = tuple(int(x) for x in str(row.fetchone()[0]).split(".")[:2])  # type: ignore[index]
        assert store.index_precision == ("half" if version >= (0, 7) else "single")
    with pytest.raises(ConfigurationError, match="index_precision must be"):
        PostgresStore(postgres_url + "&index_precision=quarter")


def test_zero_query_and_bad_queries(postgres_url: str) -> None:
    with PostgresStore(postgres_url) as store:
        store.put_vectors("s", "e@1:3", ["a", "b"], np.eye(3, dtype=np.float32)[:2])
        hits = store.search_vectors("s", np.zeros(3, dtype=np.float32), 2)
        assert hits == [("a", 0.0), ("b", 0.0)]  # as the exact scan scores it
        with pytest.raises(InvalidInputError, match="1-D"):
            store.search_vectors("s", np.ones((1, 3), dtype=np.float32), 1)
        with pytest.raises(InvalidInputError, match="k must be"):
            store.search_vectors("s", np.ones(3, dtype=np.float32), -1)
        assert store.search_vectors("s", np.ones(3, dtype=np.float32), 3, ids=[]) == []


def test_two_stores_interleave_without_losing_versions(postgres_url: str) -> None:
    """A collection version read after lock_for_update holds until the transaction commits."""
    with PostgresStore(postgres_url) as one, PostgresStore(postgres_url) as two:
        one.put_vectors("c", "e@1:2", ["a"], np.ones((1, 2), dtype=np.float32))
        with one.transaction():
            one.lock_for_update()
            before = one.collection_version("c")
            # the other store's write waits for this transaction: it cannot slip in between
            child = subprocess.Popen(
                [sys.executable, "-c", _WRITE_ONE, postgres_url],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "open"  # it is about to write
            with pytest.raises(subprocess.TimeoutExpired):
                child.wait(timeout=1.5)
            one.put_vectors("c", "e@1:2", ["b"], np.ones((1, 2), dtype=np.float32))
            assert one.collection_version("c") == before + 1
        out, _ = child.communicate(timeout=60)
        assert child.returncode == 0
        assert out.strip() == str(before + 2)
        assert two.collection_version("c") == before + 2
        assert sorted(two.load_vectors("c")[0]) == ["a", "b", "z"]


def test_reading_a_version_in_a_transaction_takes_no_lock(postgres_url: str) -> None:
    """A getter stays a read: another store writes while this transaction is open."""
    with PostgresStore(postgres_url) as one:
        one.put_vectors("c", "e@1:2", ["a"], np.ones((1, 2), dtype=np.float32))
        with one.transaction():
            before = one.collection_version("c")
            child = subprocess.run(
                [sys.executable, "-c", _WRITE_ONE, postgres_url],
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            )
            assert child.stdout.split() == ["open", str(before + 1)]  # it committed meanwhile
        assert one.collection_version("c") == before + 1


_WRITE_ONE = """
import sys, numpy as np
from costeer_lab.store import PostgresStore
with PostgresStore(sys.argv[1]) as s:
    print("open", flush=True)
    s.put_vectors("c", "e@1:2", ["z"], np.ones((1, 2), dtype=np.float32))
    print(s.collection_version("c"))
"""


def test_embedder_race_is_decided_under_the_lock(postgres_url: str) -> None:
    """Two processes fill an empty collection with different embedders at once: the second
    waits for the first to commit, then sees its vectors and is refused (never a mix)."""
    with PostgresStore(postgres_url) as one:
        with one.transaction():
            one.put_vectors("c", "first@1:2", ["a"], np.ones((1, 2), dtype=np.float32))
            child = subprocess.Popen(
                [sys.executable, "-c", _WRITE_OTHER_EMBEDDER, postgres_url],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "open"
            with pytest.raises(subprocess.TimeoutExpired):  # it waits for this transaction
                child.wait(timeout=1.5)
        out, _ = child.communicate(timeout=60)
        assert child.returncode == 0
        assert out.strip() == EmbedderMismatchError.__name__
        assert one.load_vectors("c")[0] == ["a"] and one.collection_info("c") == ("first@1:2", 2)


_WRITE_OTHER_EMBEDDER = """
import sys, numpy as np
from costeer_lab.store import PostgresStore
with PostgresStore(sys.argv[1]) as s:
    print("open", flush=True)
    try:
        s.put_vectors("c", "second@1:2", ["b"], np.ones((1, 2), dtype=np.float32))
        print("stored")
    except Exception as exc:
        print(type(exc).__name__)
"""


def test_schema_option_keeps_stores_apart(postgres_url: str) -> None:
    with (
        PostgresStore(postgres_url + "&schema=lab_a") as a,
        PostgresStore(postgres_url, schema="lab_b") as b,
    ):
        a.put_record("rec", "k", "a")
        b.put_record("rec", "k", "b")
        assert (a.get_record("rec", "k"), b.get_record("rec", "k")) == ("a", "b")
        with a.transaction():  # different schemas: different write locks
            a.put_record("rec", "k2", 1)
            b.put_record("rec", "k2", 2)
    with get_store(postgres_url) as public:
        assert public.count_records("rec") == 0


def test_newer_schema_and_foreign_tables_are_refused(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
        conn.execute("CREATE SCHEMA other")
        conn.execute("CREATE TABLE other.nodes (id int)")
    with pytest.raises(SchemaVersionError, match="99"):
        PostgresStore(postgres_url)
    with pytest.raises(StoreError, match=r"not a costeer_lab store.*nodes"):
        PostgresStore(postgres_url, schema="other")


def test_concurrent_openers_migrate_once(postgres_url: str) -> None:
    code = "import sys; from costeer_lab.store import PostgresStore; PostgresStore(sys.argv[1])"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, postgres_url], stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    with PostgresStore(postgres_url) as store:
        assert store.schema_version == PG_SCHEMA_VERSION


def test_bad_urls_and_values_are_clear(postgres_url: str) -> None:
    with pytest.raises(ConfigurationError, match="vector_index"):
        PostgresStore(postgres_url + "&vector_index=ivf")
    with pytest.raises(ConfigurationError, match="ef_search"):
        PostgresStore(postgres_url + "&ef_search=0")
    with pytest.raises(ConfigurationError, match="schema"):
        PostgresStore(postgres_url, schema="Robert'); DROP")
    with pytest.raises(StoreError, match=r"cannot open store .*\*\*\*"):
        PostgresStore("postgresql://nobody:hunter2@/nodb?host=/nonexistent", connect_timeout_s=2)
    with PostgresStore(postgres_url) as store:
        with pytest.raises(InvalidInputError, match="must not contain a NUL character"):
            store.put_record("rec", "nul\x00key", 1)  # PostgreSQL text cannot hold NUL
        with pytest.raises(InvalidInputError, match="refused a value"):
            store.put_nodes([NodeRecord("n", "k", "nul\x00content")])  # nor in a text column
        assert store.count_records("rec") == 0
        with pytest.raises(InvalidInputError, match="reserved"):
            store.set_meta("schema_version", "2")


def test_without_psycopg_the_error_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from costeer_lab.store import get_store\n"
        "from costeer_lab.errors import ConfigurationError\n"
        "try:\n    get_store('postgresql://me:pw@db/lab')\n"
        "except ConfigurationError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "costeer-lab[postgres]" in out.stdout and "pw" not in out.stdout
