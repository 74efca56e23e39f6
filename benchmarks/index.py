"""Vector index benchmark: FaissIndex (exact and HNSW) against a plain numpy scan.

For each size N (10k and 100k; ``--quick``: 10k) of seeded random 384-d unit vectors, uniform
and *clustered* (N/100 random centers, each point at cosine ~0.7 to its center: closer to real
embeddings, which have structure uniform vectors lack), it measures

* add throughput (vectors/s) of the exact and the HNSW index;
* single-query latency p50/p99 of exact, HNSW (``ef_search`` 64 and 256) and the numpy baseline
  (``matrix @ q`` then ``argpartition``), with ``*_ratio`` = numpy latency / index latency;
* HNSW recall@10 against the exact index;
* filtered single-query latency (filters matching 10% and 1% of ids, given as a set of string
  ids) against numpy scanning the matching rows (row numbers precomputed, so the baseline does
  less work than the index, which maps string ids itself).

Run: ``python -m benchmarks.index [--quick] [--json PATH|-]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from functools import partial

import faiss
import numpy as np
import numpy.typing as npt

from benchmarks._common import Results, finish, parse_args, percentile, time_calls
from costeer_lab.index import FaissIndex
from costeer_lab.index._faiss import IndexKind

K = 10
_Matrix = npt.NDArray[np.float32]


def _options(parser: argparse.ArgumentParser) -> None:
    # hidden knobs for tests: tiny sizes run in a second
    parser.add_argument("--n", type=int, nargs="+", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--dim", type=int, default=384, help=argparse.SUPPRESS)
    parser.add_argument("--queries", type=int, default=None, help=argparse.SUPPRESS)


def _unit(rng: np.random.Generator, n: int, dim: int) -> _Matrix:
    x = rng.standard_normal((n, dim), dtype=np.float32)
    out: _Matrix = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def _numpy_topk(matrix: _Matrix, q: _Matrix, k: int) -> npt.NDArray[np.intp]:
    scores = matrix @ q
    if k >= scores.size:
        return np.argsort(-scores)
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


def _latency(results: Results, case: str, name: str, times: list[float]) -> float:
    p50, p99 = percentile(times, 50), percentile(times, 99)
    results.add(case, f"{name}_p50", p50 * 1e3, "ms")
    results.add(case, f"{name}_p99", p99 * 1e3, "ms")
    return p50


def _per_query(fn_of_query: Callable[[_Matrix], object], queries: _Matrix) -> list[float]:
    """Latency of each query run once (after two warm-up queries)."""
    it = iter(range(len(queries)))

    def call() -> None:
        fn_of_query(queries[next(it)])

    for _ in range(2):
        fn_of_query(queries[0])
    return time_calls(call, repeat=len(queries), warmup=0)


def _numpy_filtered(matrix: _Matrix, rows: npt.NDArray[np.int64], q: _Matrix) -> object:
    """The baseline's pre-filtered scan: gather the matching rows, then scan them."""
    return rows[_numpy_topk(matrix[rows], q, K)]


def _filtered(index: FaissIndex, allowed: set[str], q: _Matrix) -> object:
    return index.search(q, K, filter=allowed)


def _clustered(rng: np.random.Generator, n: int, dim: int, centers: _Matrix) -> _Matrix:
    """Points around random ``centers`` (cosine to their center about 0.7), normalised."""
    noise = rng.standard_normal((n, dim), dtype=np.float32) / np.float32(np.sqrt(dim))
    x = centers[rng.integers(0, len(centers), size=n)] + noise
    out: _Matrix = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def run_size(
    results: Results, n: int, dim: int, n_queries: int, seed: int, *, clustered: bool = False
) -> None:
    """Measure one size N (uniform or clustered vectors) and add its rows to ``results``."""
    case = f"N={n:,}" + (" clustered" if clustered else "")
    rng = np.random.default_rng(seed)
    if clustered:
        centers = _unit(rng, max(2, n // 100), dim)
        matrix, queries = (
            _clustered(rng, n, dim, centers),
            _clustered(rng, n_queries, dim, centers),
        )
    else:
        matrix, queries = _unit(rng, n, dim), _unit(rng, n_queries, dim)
    ids = [f"v{i}" for i in range(n)]

    indexes: dict[str, FaissIndex] = {}
    kinds: tuple[IndexKind, ...] = ("exact", "hnsw")
    for kind in kinds:
        index = FaissIndex(dim, kind=kind)
        start = time.perf_counter()
        index.add(ids, matrix)
        results.add(case, f"{kind}_add_throughput", n / (time.perf_counter() - start), "vectors/s")
        indexes[kind] = index
    exact, hnsw = indexes["exact"], indexes["hnsw"]

    base = _latency(
        results, case, "numpy_scan", _per_query(lambda q: _numpy_topk(matrix, q, K), queries)
    )
    ex = _latency(results, case, "exact", _per_query(lambda q: exact.search(q, K), queries))
    results.add_ratio(case, "exact_vs_numpy_ratio", base, ex)
    truth = [set(r.ids) for r in exact.search_batch(queries, K)]
    for ef in (64, 256):
        hnsw.ef_search = ef
        lat = _latency(
            results, case, f"hnsw_ef{ef}", _per_query(lambda q: hnsw.search(q, K), queries)
        )
        results.add_ratio(case, f"hnsw_ef{ef}_vs_numpy_ratio", base, lat)
        found = hnsw.search_batch(queries, K)
        recall = np.mean([len(t & set(r.ids)) / K for t, r in zip(truth, found, strict=True)])
        results.add(case, f"hnsw_ef{ef}_recall@10", float(recall), "fraction")
    hnsw.ef_search = 64

    for share in (0.10, 0.01):
        rows = np.sort(rng.choice(n, size=max(K, int(n * share)), replace=False))
        allowed = {ids[i] for i in rows.tolist()}
        sub = f"filter{int(share * 100)}%"
        base_f = _latency(
            results,
            case,
            f"{sub}_numpy_scan",
            _per_query(partial(_numpy_filtered, matrix, rows), queries),
        )
        for name, idx in indexes.items():
            lat = _latency(
                results,
                case,
                f"{sub}_{name}",
                _per_query(partial(_filtered, idx, allowed), queries),
            )
            results.add_ratio(case, f"{sub}_{name}_vs_numpy_ratio", base_f, lat)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; see the module docstring."""
    args = parse_args("index", "FaissIndex vs a numpy scan.", argv, extra=_options)
    sizes = args.n or ([10_000] if args.quick else [10_000, 100_000])
    n_queries = args.queries or (100 if args.quick else 300)
    results = Results("index")
    FaissIndex(1)  # applies the library's faiss thread setting before anything is timed
    results.add("config", "faiss_omp_threads", faiss.omp_get_max_threads(), "threads")
    for i, n in enumerate(sizes):
        run_size(results, n, args.dim, n_queries, args.seed + 2 * i)
        run_size(results, n, args.dim, n_queries, args.seed + 2 * i + 1, clustered=True)
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
