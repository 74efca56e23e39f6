"""Knowledge-base benchmark: a synthetic V2 graph KB grown to 10k and 100k knowledge items.

Each knowledge item is one solved synthetic factor task (seeded random formula over ~40
operators and 6 data fields, one of 30 categories): a task-description node linked to its
components, a success node, and — for one item in five — a failed trace that hit one of 60 error
fingerprints first (so error nodes, error fixes and traces exist at scale). It measures

* insert throughput (items/s) of ``KnowledgeBaseV2.record_many`` in batches of 1000, with and
  without the time spent inside the embedder (hashing, dim 384);
* full V2 query latency per task (``RAGStrategyV2.query`` of one unseen task with a failing last
  feedback: former-trace + similar + component + error queries, query log written) p50/p99,
  with the exact FAISS index;
* open time: reopening the KB on the same store (exact index) with its persisted index files
  fresh (written by ``checkpoint``, timed too), then the first use of the graph and lookups
  that the open deferred; baselines: the same open and first use with no index files (every
  index rebuilt from the store's vectors, as every open did before issue 27), and decoding
  every stored node record once;
* at 100k, the same queries after reopening the store with an HNSW task-description index
  (build time, latency, and how often the similar top-3 equals the exact one);
* the naive baseline of the reference implementation: at each query, re-embed every stored task
  description and score them one by one in Python, then sort (similar query only). It is slow,
  so it runs on fewer queries (the count is printed as its own row). ``*_ratio`` = naive p50 /
  V2 p50.

Run: ``python -m benchmarks.knowledge [--quick] [--json PATH|-]`` (``--quick``: 10k only).

``--scale`` measures knowledge at scale instead (10k and 100k tasks of 2 attempts on average;
``--quick`` 2k and 10k; ``--full`` adds 1M; ``--sizes 100000`` only the sizes given): insert,
record, open, V2 query and peak RSS, each against a brute-force baseline (see
:mod:`benchmarks.knowledge_scale`).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from benchmarks._common import Results, finish, parse_args, percentile
from costeer_lab.embed import BaseEmbedder, get_embedder
from costeer_lab.knowledge import KnowledgeBaseV2, RAGSettings, RAGStrategyV2
from costeer_lab.knowledge._kb_v2 import AttemptInput
from costeer_lab.records import SingleFeedback, Task, Workspace
from costeer_lab.store import SQLiteStore

OPS = [
    "Mean", "Std", "Sum", "Max", "Min", "Rank", "Corr", "Slope", "Rsquare", "Resi", "Quantile",
    "Med", "Count", "Delta", "Ref", "Log", "Abs", "Sign", "EMA", "WMA", "IdxMax", "IdxMin",
    "Skew", "Kurt", "Cov", "Var", "Mad", "Greater", "Less", "Power", "Sqrt", "Exp", "Tanh",
    "Clip", "Zscore", "Demean", "Cumsum", "Diff", "Ratio", "Decay",
]  # fmt: skip
FIELDS = ["open", "high", "low", "close", "volume", "vwap"]
WORDS = [
    "rolling", "average", "ratio", "price", "relative", "window", "trend", "momentum",
    "reversal", "volatility", "spread", "intraday", "overnight", "gap", "signal", "smoothed",
    "normalized", "range", "breakout", "liquidity", "turnover", "strength", "drawdown", "peak",
]  # fmt: skip
ERRORS = [f"{e}: {m} {{}}" for e in ("KeyError", "ValueError", "TypeError", "IndexError",
          "AttributeError", "ZeroDivisionError") for m in (
          "column", "window too large for", "cannot align", "shape mismatch for", "bad level",
          "unsupported operand for", "no attribute", "index out of range in", "missing values in",
          "divide by zero in")]  # fmt: skip
BATCH = 1000


class TimedEmbedder(BaseEmbedder):
    """Wraps an embedder and accumulates the seconds spent embedding."""

    def __init__(self, inner: BaseEmbedder) -> None:
        super().__init__()
        self.inner = inner
        self.name, self.version, self.dim = inner.name, inner.version, inner.dim
        self.seconds = 0.0

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        start = time.perf_counter()
        out = self.inner.embed(texts)
        self.seconds += time.perf_counter() - start
        return out


def _task(rng: random.Random, i: int) -> Task:
    a, b = rng.sample(OPS, 2)
    f1, f2 = rng.sample(FIELDS, 2)
    d = rng.choice([5, 10, 20, 30, 60])
    formula = f"{a}({b}(${f1}, {d}), {rng.choice([5, 10, 20])})/${f2}"
    words = " ".join(rng.sample(WORDS, 6))
    desc = f"{words} of {f1} and {f2} over {d} days ({a.lower()} of {b.lower()})"
    return Task(f"syn/{i}", f"F{i}", desc, formula, category=f"C{rng.randrange(30)}")


def _items(n: int, seed: int, start: int = 0) -> list[AttemptInput]:
    rng = random.Random(seed * 1_000_003 + start)
    out: list[AttemptInput] = []
    for i in range(start, start + n):
        t = _task(rng, i)
        ws = Workspace({"main.py": f"# {t.name}\nresult = compute('{t.formulation}')\n"})
        if rng.random() < 0.2:
            err = rng.choice(ERRORS).format(f"'{rng.choice(FIELDS)}'")
            bad = SingleFeedback(execution=f"Traceback (most recent call last):\n{err}",
                                 final_decision=False)  # fmt: skip
            out.append(AttemptInput(t, Workspace({"main.py": f"bad {i}"}), bad, "grow", 1))
        out.append(AttemptInput(t, ws, SingleFeedback(final_decision=True), "grow", 2))
    return out


def _naive_similar(
    embedder: BaseEmbedder, descriptions: Sequence[str], query: str, k: int
) -> list[tuple[int, float]]:
    """The reference way: embed every stored description again, score each in Python."""
    stored = embedder.embed(list(descriptions))
    q = embedder.embed([query])[0]
    scored = [(i, float(np.dot(stored[i], q))) for i in range(len(descriptions))]
    scored.sort(key=lambda x: -x[1])
    return scored[:k]


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--n", "--sizes", dest="n", type=int, nargs="+", default=None, metavar="TASKS",
        help="sizes to measure instead of the defaults (e.g. --scale --sizes 100000)",
    )  # fmt: skip
    parser.add_argument("--queries", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--naive-queries", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--hnsw-from", type=int, default=100_000, help=argparse.SUPPRESS)
    parser.add_argument(
        "--scale", action="store_true", help="knowledge at scale: 10k and 100k tasks"
    )
    parser.add_argument("--full", action="store_true", help="with --scale: also 1M tasks")


def _run_size(results: Results, n: int, args: argparse.Namespace, tmp: Path) -> None:
    case = f"n={n // 1000}k" if n >= 1000 else f"n={n}"
    timed = TimedEmbedder(get_embedder("hashing"))
    store = SQLiteStore(tmp / f"kb{n}.db")
    kb = KnowledgeBaseV2(store, timed, index_kind="exact")  # HNSW measured in _hnsw
    items = _items(n, args.seed)
    n_items = n
    start = time.perf_counter()
    for lo in range(0, len(items), BATCH):
        kb.record_many(items[lo : lo + BATCH])
    total = time.perf_counter() - start
    results.add(case, "insert_items_per_s", n_items / total, "items/s")
    results.add(case, "insert_items_per_s_excl_embedding", n_items / (total - timed.seconds),
                "items/s")  # fmt: skip
    results.add(case, "kb_nodes", store.count_nodes(), "nodes")
    start = time.perf_counter()
    kb.checkpoint()
    results.add(case, "index_checkpoint_s", time.perf_counter() - start, "s")
    _open(results, case, store, timed)

    rag = RAGStrategyV2(RAGSettings())
    rng = random.Random(args.seed + 7)
    n_q = args.queries or (200 if n <= 10_000 else 300)
    queries = []
    for j in range(n_q):
        t = _task(rng, 10_000_000 + j)
        err = rng.choice(ERRORS).format(f"'{rng.choice(FIELDS)}'")
        fb = SingleFeedback(execution=f"Traceback (most recent call last):\n{err}",
                            final_decision=False)  # fmt: skip
        queries.append((t, fb))
    for t, fb in queries[:5]:  # warm up
        rag.query(kb, [t], {t.id: fb}, run_id="warm", attempt=1)
    lat = []
    hits = 0
    exact_similar: list[list[str]] = []
    for j, (t, fb) in enumerate(queries):
        s = time.perf_counter()
        qk = rag.query(kb, [t], {t.id: fb}, run_id="bench", attempt=j)
        lat.append(time.perf_counter() - s)
        hits += bool(qk.error_fixes[t.id]) and bool(qk.component_matches[t.id])
        exact_similar.append([x.knowledge.id for x in qk.similar_successful[t.id]])
    p50, p99 = percentile(lat, 50), percentile(lat, 99)
    results.add(case, "v2_query_p50", p50 * 1e3, "ms")
    results.add(case, "v2_query_p99", p99 * 1e3, "ms")
    results.add(case, "v2_queries", n_q, "queries")
    results.add(case, "v2_queries_with_error_and_component_hits", hits, "queries")

    plain = get_embedder("hashing")
    descriptions = [e.task.get_task_information() for e in items if e.feedback.succeeded]
    n_naive = args.naive_queries or (5 if n <= 10_000 else 2)
    naive = []
    for t, _ in queries[:n_naive]:
        s = time.perf_counter()
        _naive_similar(plain, descriptions, t.get_task_information(), 3)
        naive.append(time.perf_counter() - s)
    results.add(case, "naive_similar_p50", percentile(naive, 50) * 1e3, "ms")
    results.add(case, "naive_queries", n_naive, "queries")
    results.add_ratio(case, "naive_over_v2_query_ratio", percentile(naive, 50), p50)
    if n >= args.hnsw_from:
        _hnsw(results, case, store, timed, rag, queries, exact_similar, percentile(naive, 50))
    store.close()


def _open(results: Results, case: str, store: SQLiteStore, embedder: BaseEmbedder) -> None:
    """Reopen the KB on the same store (exact index, fresh index files), then use it once.

    Baselines: the same without index files (``persist_indexes=False``: every index rebuilt
    from the store's vectors) and decoding every stored node once (what an open that reads
    whole node records pays at least)."""
    start = time.perf_counter()
    kb = KnowledgeBaseV2(store, embedder, index_kind="exact")
    opened = time.perf_counter() - start
    assert {c.index.origin for c in kb.graph.collections.values()} == {"loaded"}
    start = time.perf_counter()
    kb.success.get("")  # the first use reads the graph and the attempt records
    first_use = time.perf_counter() - start
    start = time.perf_counter()
    KnowledgeBaseV2(store, embedder, index_kind="exact", persist_indexes=False)
    rebuilt = time.perf_counter() - start
    start = time.perf_counter()
    for _ in store.iter_nodes():
        pass
    decode = time.perf_counter() - start
    results.add(case, "open_exact_s", opened, "s")
    results.add(case, "open_first_use_s", first_use, "s")
    results.add(case, "open_rebuilding_indexes_s", rebuilt, "s")
    results.add_ratio(case, "open_rebuilding_indexes_over_open_ratio", rebuilt, opened)
    results.add(case, "decode_all_nodes_s", decode, "s")
    results.add_ratio(case, "decode_all_nodes_over_open_ratio", decode, opened)


def _hnsw(
    results: Results,
    case: str,
    store: SQLiteStore,
    embedder: BaseEmbedder,
    rag: RAGStrategyV2,
    queries: list[tuple[Task, SingleFeedback]],
    exact_similar: list[list[str]],
    naive_p50: float,
) -> None:
    """Reopen the same store with an HNSW task-description index and query again."""
    s = RAGSettings()
    start = time.perf_counter()
    kb = KnowledgeBaseV2(
        store, embedder, index_kind="hnsw",
        index_kw={"hnsw_m": s.hnsw_m, "ef_construction": s.hnsw_ef_construction,
                  "ef_search": s.hnsw_ef_search},
    )  # fmt: skip
    results.add(case, "hnsw_open_and_build_s", time.perf_counter() - start, "s")
    lat, same = [], 0
    for j, (t, fb) in enumerate(queries):
        s0 = time.perf_counter()
        qk = rag.query(kb, [t], {t.id: fb}, run_id="bench-hnsw", attempt=j)
        lat.append(time.perf_counter() - s0)
        same += [x.knowledge.id for x in qk.similar_successful[t.id]] == exact_similar[j]
    p50 = percentile(lat, 50)
    results.add(case, "v2_query_hnsw_p50", p50 * 1e3, "ms")
    results.add(case, "v2_query_hnsw_p99", percentile(lat, 99) * 1e3, "ms")
    results.add(case, "hnsw_similar_top3_same_as_exact", same / len(queries), "fraction")
    results.add_ratio(case, "naive_over_v2_query_hnsw_ratio", naive_p50, p50)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(
        "knowledge", "Graph knowledge base: insert throughput and V2 query latency.", argv,
        _options,
    )  # fmt: skip
    results = Results("knowledge")
    if args.scale:
        from benchmarks.knowledge_scale import run_scale

        full = [10_000, 100_000, 1_000_000] if args.full else [10_000, 100_000]
        run_scale(results, args.n or ([2_000, 10_000] if args.quick else full), args)
        return finish(results, args)
    sizes = args.n or ([10_000] if args.quick else [10_000, 100_000])
    with tempfile.TemporaryDirectory(prefix="costeer_kb_bench_") as tmp:
        for n in sizes:
            _run_size(results, n, args, Path(tmp))
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
