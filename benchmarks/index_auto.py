"""Where ``index_kind="auto"`` switches to HNSW (``python -m benchmarks.index_auto``).

The data is the knowledge benchmark's: N synthetic factor task descriptions
(``benchmarks.knowledge._task``, the texts ``benchmarks.knowledge --scale`` stores) embedded by
the ``hashing`` embedder (384-d), and its 200 unseen query tasks. Per N (default 2k, 5k, 10k,
20k, 50k, 100k; ``--quick`` 2k and 10k) it measures

* the exact index's single-query latency p50 for the V2 query's first search, the ``k=64``
  unfiltered neighbour list (``knowledge._retrieve.NEAR_K``) — the baseline;
* for each HNSW configuration (the default ``M=32, efConstruction=80`` with ``efSearch`` 64,
  128 and 256, and the former default ``M=16, efConstruction=40``), its build time, its latency
  p50 (``exact_over_<cfg>_ratio`` > 1: HNSW is faster) and its recall@64, @12 and @3 against
  the exact index. Recall counts ties: a returned item scoring at least the exact k-th score
  counts as found (the synthetic texts repeat words, so many scores tie).

The threshold ``HNSW_ABOVE`` is the smallest measured N at which the default configuration is
faster than exact with recall@64 >= 0.99. One faiss thread (the library's default).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from benchmarks._common import Results, finish, parse_args, percentile
from benchmarks.knowledge import _task
from benchmarks.knowledge_scale import _queries
from costeer_lab.embed import get_embedder
from costeer_lab.index import FaissIndex, SearchResult

__all__ = ["main"]

K = 64
#: name -> (hnsw_m, ef_construction, ef_search); the first is the library's default.
CONFIGS = {
    "m32_ef128": (32, 80, 128),
    "m32_ef64": (32, 80, 64),
    "m32_ef256": (32, 80, 256),
    "m16_ef64": (16, 40, 64),
    "m16_ef256": (16, 40, 256),
}
_Matrix = npt.NDArray[np.float32]


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, nargs="+", default=None, help="sizes to measure")
    parser.add_argument("--queries", type=int, default=200, help=argparse.SUPPRESS)


def recall(exact: Sequence[SearchResult], found: Sequence[SearchResult], k: int) -> float:
    """Mean share of the exact top-``k`` that ``found`` returned, ties counted as found.

    Example:
        >>> r = SearchResult(("a", "b"), (0.9, 0.5), 2, 2)
        >>> recall([r], [SearchResult(("a", "c"), (0.9, 0.5), 2, 2)], 2)
        1.0
    """
    shares = []
    for e, f in zip(exact, found, strict=True):
        want = min(k, len(e.scores))
        if want == 0:
            continue
        kth = e.scores[want - 1]
        shares.append(min(want, sum(s >= kth - 1e-6 for s in f.scores[:k])) / want)
    return float(np.mean(shares)) if shares else 1.0


def _p50_ms(index: FaissIndex, queries: _Matrix) -> float:
    times = []
    for q in queries:
        start = time.perf_counter()
        index.search(q, K)
        times.append(time.perf_counter() - start)
    return percentile(times, 50) * 1e3


def run_size(results: Results, n: int, vectors: _Matrix, queries: _Matrix) -> None:
    """Measure one size (the first ``n`` rows of ``vectors``) into ``results``."""
    case = f"N={n:,}"
    ids = [str(i) for i in range(n)]
    exact = FaissIndex(vectors.shape[1])
    exact.add(ids, vectors[:n])
    truth = exact.search_batch(queries, K)
    base = _p50_ms(exact, queries)
    results.add(case, "exact_p50", base, "ms")
    built: dict[tuple[int, int], tuple[FaissIndex, float]] = {}
    for name, (m, efc, efs) in CONFIGS.items():
        if (m, efc) not in built:
            index = FaissIndex(vectors.shape[1], kind="hnsw", hnsw_m=m, ef_construction=efc)
            start = time.perf_counter()
            index.add(ids, vectors[:n])
            built[(m, efc)] = (index, time.perf_counter() - start)
            results.add(case, f"hnsw_m{m}_build_s", built[(m, efc)][1], "s")
        index = built[(m, efc)][0]
        index.ef_search = efs
        lat = _p50_ms(index, queries)
        results.add(case, f"{name}_p50", lat, "ms")
        results.add_ratio(case, f"exact_over_{name}_ratio", base, lat)
        found = index.search_batch(queries, K)
        for k in (K, 12, 3):
            results.add(case, f"{name}_recall@{k}", recall(truth, found, k), "fraction")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; see the module docstring."""
    args = parse_args("index_auto", "Exact vs HNSW on task descriptions.", argv, _options)
    sizes = args.n or ([2_000, 10_000] if args.quick else [2_000, 5_000, 10_000, 20_000, 50_000,
                                                          100_000])  # fmt: skip
    emb = get_embedder("hashing")
    rng = random.Random(args.seed)
    texts = [_task(rng, i).get_task_information() for i in range(max(sizes))]
    vectors = emb.embed(texts)
    del texts
    queries = emb.embed([t.get_task_information() for t, _ in _queries(args.queries, args.seed)])
    results = Results("index_auto")
    for n in sorted(sizes):
        run_size(results, n, vectors, queries)
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
