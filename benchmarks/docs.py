"""Document knowledge base benchmark: retrieval quality, ingestion throughput, query latency.

Quality. The corpus is the README (long description) of installed packages costeer_lab depends
on (openai, pandas, jupyterlab, httpx, faiss-cpu, pydantic, tqdm, networkx, matplotlib; Markdown
and reStructuredText), written out by :func:`costeer_lab.docs.write_package_readmes` and
ingested with ``source=<package>``, ``version=<installed version>``: public text, no network
(``--quick`` leaves out pydantic and its queries).
The labelled queries (``data/docs_kb/package_readme_queries.yaml``, written by the project) name
the sections answering each query. For the ``hashing`` and ``minilm`` embedders and the
``vector``, ``keyword`` and ``hybrid`` modes it reports recall@5 and MRR@10, and the ratios of
hybrid over the best single mode (``hybrid_vs_best_*_ratio``; > 1: fusion helps). Labels whose
section is missing from the installed READMEs are counted (``labels_missing``) and such
queries dropped, so another package version cannot silently lower the scores. Ranking quality
is measured with ``min_score=0`` (nothing dropped).

Relevance. For queries unrelated to the corpus (:data:`UNRELATED`) the highest score per mode
(``unrelated_max_score_<mode>``) and ``unrelated_below_min_score_ratio`` = ``min_score`` / the
highest hybrid score (> 1: every unrelated query falls below the default ``min_score`` and
returns nothing); ``relevant_kept_by_min_score`` is the fraction of relevant top-5 hybrid hits
scoring at least ``min_score``.

Reranker. Hybrid retrieval with the reranker (``rerank=True``: MiniLM re-scores the best 20
candidates, :mod:`costeer_lab.docs._rerank`): ``hybrid_rerank_recall@5`` / ``_mrr@10``, the
gains ``rerank_gain_recall@5_ratio`` / ``rerank_gain_mrr_ratio`` (reranked / hybrid alone; > 1:
the reranker helps), ``unrelated_max_score_hybrid_rerank`` (must stay below ``min_score``),
``relevant_kept_by_min_score_rerank`` and the p50 query time with and without it (the
reranker's candidate cache emptied first; ``rerank_query_time_ratio`` = with / without). Skipped
(with a line) when the ``minilm`` extra is not installed.

Ingestion. Chunks/s and MB/s of the first ingestion of each corpus, and the time of a second,
unchanged ingestion (``reingest_speedup_ratio`` = first / second).

Latency. A synthetic corpus of N chunks (100k; ``--quick``: 10k): files ``s<k>/v<m>/doc<j>.md``
of 100 sections of 60 Zipf-distributed words, 10 sources and 5 versions, embedded by a
benchmark-only bag-of-words embedder (384-d, word vectors summed: fast enough to embed 100k
chunks, and similar texts get similar vectors). Single-query p50/p99 of vector, keyword and
hybrid retrieval (5 results) with the exact and the HNSW index, hybrid with a ``where`` filter
matching 10% of the chunks, and ``hybrid_p50_target_ratio`` = 10 ms / hybrid p50 (> 1: the
target is met).

Run: ``python -m benchmarks.docs [--quick] [--json PATH|-]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks._common import Results, finish, parse_args, percentile, time_calls
from costeer_lab.docs import (
    DocumentKB,
    IngestReport,
    LabelledQuery,
    RetrievalScores,
    evaluate_retrieval,
    load_labelled_queries,
    write_package_readmes,
)
from costeer_lab.embed import BaseEmbedder

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ROOT / "data" / "docs_kb" / "package_readme_queries.yaml"
PACKAGES = (
    "openai",
    "pandas",
    "jupyterlab",
    "httpx",
    "faiss-cpu",
    "pydantic",
    "tqdm",
    "networkx",
    "matplotlib",
)
#: ``--quick`` leaves out pydantic, whose README holds a long changelog (over half the chunks).
QUICK_PACKAGES = tuple(p for p in PACKAGES if p != "pydantic")
MODES = ("vector", "keyword", "hybrid")
#: Queries about nothing in the corpus: their best hit must score below ``min_score``.
UNRELATED = (
    "bake a chocolate cake",
    "zzzz qqqq",
    "how do I train for a marathon",
    "best pizza recipe with mozzarella",
    "the history of the roman empire",
    "repair a flat bicycle tyre",
    "what is the capital of france",
    "knitting a wool scarf",
)
TARGET_MS = 10.0


def _options(parser: argparse.ArgumentParser) -> None:
    # hidden knobs for tests: tiny sizes run in seconds
    parser.add_argument("--n", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--queries", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--embedders", nargs="+", default=["hashing", "minilm"], help=argparse.SUPPRESS
    )


class BagOfWordsEmbedder(BaseEmbedder):
    """Benchmark-only embedder of the synthetic corpus: the normalised sum of seeded random
    vectors of the words ``w0 … w<vocab-1>`` (other words ignored)."""

    name = "bench-bow"
    version = "1"

    def __init__(self, vocab: int, dim: int, seed: int) -> None:
        super().__init__()
        self.dim = dim
        rng = np.random.default_rng(seed)
        self._table = rng.standard_normal((vocab, dim)).astype(np.float32)
        self._ids = {f"w{i}": i for i in range(vocab)}

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = [self._ids[w] for w in text.split() if w in self._ids]
            vec = self._table[ids].sum(axis=0) if ids else self._table[0]
            out[row] = vec / max(float(np.linalg.norm(vec)), 1e-12)
        return out


def _ingest_corpus(kb: DocumentKB, corpus: Path, versions: dict[str, str]) -> IngestReport:
    report = IngestReport()
    for pkg, version in versions.items():
        report = report.merge(kb.ingest(corpus / pkg, source=pkg, version=version))
    return report


def _usable(queries: list[LabelledQuery], kb: DocumentKB) -> tuple[list[LabelledQuery], int]:
    """Queries whose labels all exist in ``kb`` and the number of labels missing."""
    have = {(str(m.get("source")), str(m.get("section_title"))) for m in kb.view().metadata}
    missing = sum(1 for q in queries for r in q.relevant if r not in have)
    return [q for q in queries if all(r in have for r in q.relevant)], missing


def run_quality(
    results: Results, tmp: Path, embedders: Sequence[str], packages: Sequence[str] = PACKAGES
) -> None:
    """Recall@5 / MRR per embedder and mode, and ingestion throughput of the README corpus."""
    corpus = tmp / "readmes"
    versions = write_package_readmes(packages, corpus)
    queries = load_labelled_queries(QUERIES)
    for name in embedders:
        case = f"readmes {name}"
        try:
            kb = DocumentKB("readmes", tmp / f"quality-{name}.db", embedder=name)
        except Exception as exc:  # an optional embedder that is not installed
            print(f"skipping embedder {name!r}: {type(exc).__name__}: {exc}")
            continue
        start = time.perf_counter()
        report = _ingest_corpus(kb, corpus, versions)
        first = time.perf_counter() - start
        start = time.perf_counter()
        again = _ingest_corpus(kb, corpus, versions)
        second = time.perf_counter() - start
        assert again.unchanged == report.files and again.chunks_added == 0
        results.add(case, "chunks", report.chunks_added, "chunks")
        results.add(case, "ingest_chunks_per_s", report.chunks_added / first, "chunks/s")
        results.add(case, "ingest_mb_per_s", report.characters / 1e6 / first, "MB/s")
        results.add(case, "reingest_unchanged_s", second, "s")
        results.add_ratio(case, "reingest_speedup_ratio", first, second)
        usable, missing = _usable(
            [q for q in queries if all(src in versions for src, _ in q.relevant)], kb
        )
        results.add(case, "queries", len(usable), "queries")
        results.add(case, "labels_missing", missing, "labels")
        scores = {
            mode: evaluate_retrieval(kb, usable, k=5, depth=10, mode=mode, min_score=0.0)
            for mode in MODES
        }
        for mode, s in scores.items():
            results.add(case, f"{mode}_recall@5", s.recall, "fraction")
            results.add(case, f"{mode}_mrr@10", s.mrr, "fraction")
        best_recall = max(scores["vector"].recall, scores["keyword"].recall)
        best_mrr = max(scores["vector"].mrr, scores["keyword"].mrr)
        results.add_ratio(
            case, "hybrid_vs_best_recall@5_ratio", scores["hybrid"].recall, best_recall
        )
        results.add_ratio(case, "hybrid_vs_best_mrr_ratio", scores["hybrid"].mrr, best_mrr)
        _relevance(results, case, kb, usable)
        _rerank(results, case, kb, usable, scores["hybrid"])
        kb.close()


def _rerank(
    results: Results,
    case: str,
    kb: DocumentKB,
    usable: list[LabelledQuery],
    base: RetrievalScores,
) -> None:
    """Hybrid quality with the reranker against hybrid alone, unrelated scores, query time."""
    try:
        kb.reranker()
    except Exception as exc:  # the minilm extra is optional
        print(f"skipping the reranker: {type(exc).__name__}: {exc}")
        return
    s = evaluate_retrieval(kb, usable, k=5, depth=10, mode="hybrid", min_score=0.0, rerank=True)
    results.add(case, "hybrid_rerank_recall@5", s.recall, "fraction")
    results.add(case, "hybrid_rerank_mrr@10", s.mrr, "fraction")
    results.add_ratio(case, "rerank_gain_recall@5_ratio", s.recall, base.recall)
    results.add_ratio(case, "rerank_gain_mrr_ratio", s.mrr, base.mrr)
    top = max(
        max((h["relevance_score"] for h in hits), default=0.0)
        for hits in (kb.retrieve(q, n_results=1, min_score=0.0, rerank=True) for q in UNRELATED)
    )
    results.add(case, "unrelated_max_score_hybrid_rerank", top, "score")
    kept = total = 0
    for q in usable:
        wanted = set(q.relevant)
        for h in kb.retrieve(q.query, n_results=5, min_score=0.0, rerank=True):
            m = h["metadata"]
            if (str(m.get("source")), str(m.get("section_title"))) in wanted:
                total += 1
                kept += h["relevance_score"] >= kb.min_score
    results.add(
        case, "relevant_kept_by_min_score_rerank", kept / total if total else 0.0, "fraction"
    )
    texts = [q.query for q in usable]
    kb._reranker = None  # a fresh reranker: candidate vectors not cached yet
    kb.reranker()
    p50 = {}
    for on in (False, True):
        it = iter(texts * 2)

        def one(on: bool = on, it: Iterator[str] = it) -> object:
            return kb.retrieve(next(it), n_results=5, rerank=on)

        times = time_calls(one, repeat=len(texts))
        p50[on] = percentile(times, 50)
        results.add(case, f"hybrid{'_rerank' if on else ''}_query_p50", p50[on] * 1e3, "ms")
    results.add_ratio(case, "rerank_query_time_ratio", p50[True], p50[False])


def _relevance(results: Results, case: str, kb: DocumentKB, usable: list[LabelledQuery]) -> None:
    """Scores of unrelated queries per mode against ``min_score``, and the relevant hits kept."""
    top: dict[str, float] = {}
    for mode in MODES:
        top[mode] = max(
            max((h["relevance_score"] for h in hits), default=0.0)
            for hits in (
                kb.retrieve(q, n_results=1, mode=mode, min_score=0.0)  # type: ignore[arg-type]
                for q in UNRELATED
            )
        )
        results.add(case, f"unrelated_max_score_{mode}", top[mode], "score")
    results.add(case, "min_score", kb.min_score, "score")
    results.add_ratio(case, "unrelated_below_min_score_ratio", kb.min_score, top["hybrid"])
    kept = total = 0
    for q in usable:
        hits = kb.retrieve(q.query, n_results=5, mode="hybrid", min_score=0.0)
        wanted = set(q.relevant)
        for h in hits:
            m = h["metadata"]
            if (str(m.get("source")), str(m.get("section_title"))) in wanted:
                total += 1
                kept += h["relevance_score"] >= kb.min_score
    results.add(case, "relevant_kept_by_min_score", kept / total if total else 0.0, "fraction")


def _write_synthetic(root: Path, n: int, rng: np.random.Generator, vocab: int) -> None:
    """``n`` sections in files of 100, spread over sources s0-s9 and versions v1-v5."""
    weights = 1.0 / np.arange(1, vocab + 1) ** 1.1
    weights /= weights.sum()
    words = rng.choice(vocab, size=(n, 60), p=weights)
    per_file = 100
    for f, start in enumerate(range(0, n, per_file)):
        path = root / f"s{f % 10}" / f"v{f // 10 % 5 + 1}" / f"doc{f}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        sections = [
            f"## Topic {i}\n\n" + " ".join(f"w{w}" for w in words[i])
            for i in range(start, min(n, start + per_file))
        ]
        path.write_text("\n\n".join(sections) + "\n", encoding="utf-8")


def _latency(
    results: Results, case: str, name: str, fn: Callable[[str], object], queries: list[str]
) -> float:
    it = iter(queries)
    times = time_calls(lambda: fn(next(it)), repeat=len(queries) - 2, warmup=2)
    p50 = percentile(times, 50)
    results.add(case, f"{name}_p50", p50 * 1e3, "ms")
    results.add(case, f"{name}_p99", percentile(times, 99) * 1e3, "ms")
    return p50


def run_latency(results: Results, tmp: Path, n: int, n_queries: int, seed: int) -> None:
    """Ingest N synthetic chunks, then time single queries per mode and index kind."""
    rng = np.random.default_rng(seed)
    vocab = 20_000
    root = tmp / "synthetic"
    _write_synthetic(root, n, rng, vocab)
    embedder = BagOfWordsEmbedder(vocab, 384, seed)
    db = tmp / "synthetic.db"
    case = f"synthetic N={n:,}"
    kb = DocumentKB("synthetic", db, embedder=embedder, index_kind="exact")
    start = time.perf_counter()
    report = IngestReport()
    for folder in sorted(root.iterdir()):
        report = report.merge(kb.ingest(folder, source=folder.name, progress=False))
    seconds = time.perf_counter() - start
    results.add(case, "ingest_chunks_per_s", report.chunks_added / seconds, "chunks/s")
    results.add(case, "ingest_mb_per_s", report.characters / 1e6 / seconds, "MB/s")
    start = time.perf_counter()
    kb.retrieve("w1 w2", n_results=5, mode="hybrid")  # builds the BM25 index
    results.add(case, "first_query_s", time.perf_counter() - start, "s")
    queries = [" ".join(f"w{w}" for w in rng.integers(0, 2000, size=4)) for _ in range(n_queries)]
    hnsw = DocumentKB("synthetic", db, embedder=embedder, index_kind="hnsw")
    hnsw.view()  # shares nothing with kb: its own view, BM25 and HNSW index
    hnsw.retrieve("w1 w2", n_results=5, mode="hybrid")
    for kind, base in (("exact", kb), ("hnsw", hnsw)):
        lat: dict[str, float] = {}
        for mode in MODES:

            def one(q: str, base: DocumentKB = base, mode: Any = mode) -> object:
                return base.retrieve(q, n_results=5, mode=mode)

            lat[mode] = _latency(results, case, f"{kind}_{mode}", one, queries)

        def filtered(q: str, base: DocumentKB = base) -> object:
            return base.retrieve(q, n_results=5, mode="hybrid", where={"source": "s0"})

        _latency(results, case, f"{kind}_hybrid_filter10%", filtered, queries)
        results.add_ratio(
            case, f"{kind}_hybrid_vs_vector_latency_ratio", lat["vector"], lat["hybrid"]
        )
        results.add_ratio(case, f"{kind}_hybrid_p50_target_ratio", TARGET_MS / 1e3, lat["hybrid"])
    kb.close()
    hnsw.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; see the module docstring."""
    args = parse_args("docs", "Document knowledge base quality and speed.", argv, extra=_options)
    n = args.n or (10_000 if args.quick else 100_000)
    n_queries = args.queries or (60 if args.quick else 200)
    results = Results("docs")
    with tempfile.TemporaryDirectory(prefix="costeer-docs-bench-") as tmp:
        packages = QUICK_PACKAGES if args.quick else PACKAGES
        run_quality(results, Path(tmp), args.embedders, packages)
        run_latency(results, Path(tmp), n, n_queries, args.seed)
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
