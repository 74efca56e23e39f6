"""Retrieval-quality benchmark: recall@k and MRR per embedder and query kind on labelled sets.

The labelled sets are built from the project's own suites, not guessed:

* **similar** (task → tasks sharing its solution structure): queries are the Alpha158 test-split
  features, the corpus is the train split (the demo's seed knowledge); a corpus task is relevant
  when its formulation has the same skeleton (numbers replaced by ``N``: ``MA10`` → ``MA5``,
  ``MA20``). Ranked by the embedder's cosine over the task text, as the similar query does.
  Queries with no relevant task (the K-bar features) are left out. **similar_prose**: the same
  with the query's description alone (no name or formula to match on).
* **component** (same labels): the V2 component query of a graph KB seeded with the train split
  (intersection tiers, the embedder breaks ties within a tier), top ``k``.
* **error** (error → errors with the same root cause): tracebacks of eight root causes met while
  adapting factor code (missing column, window 0, shape mismatch, ...), five variants each
  (different literals, paths, lines, wording). Each variant's fingerprint queries the other
  fingerprints (embedded, as the error query's similarity fallback does); relevant = same cause.

**Hard negatives** (without them every set was solved perfectly, MRR 1.000 for both
embedders, and the benchmark could not tell retrieval methods apart): the similar and
component corpora also hold two near-duplicates of every train task (:func:`decoy`: the
same name, description and variables, a formula whose first data field or first operator is
swapped, e.g. ``Mean($open, 5)/$close`` — same operator, another field — and
``Median($close, 5)/$close`` for MA5: another solution structure); the error corpus also
holds errors of other causes worded like the eight (:data:`ERROR_DECOYS`: negative values in
a log, ``None`` returned where a frame was expected, a name used before assignment, ...).
The similar-query threshold is calibrated on the original pairs (no decoys), as it was.

Per (kind, embedder): ``recall_at_k`` (share of a query's relevant items in its top ``k``,
averaged), ``mrr`` (mean reciprocal rank of the first relevant item; 0 beyond the ranking) and
the embedding time per text. Baseline: ``hashing`` (the demo's former default); ratios
``minilm`` / ``hashing`` for MRR and recall (> 1: MiniLM retrieves better) and embedding time.
The demo budget row states the embedding cost of the demo's texts (:data:`DEMO_TEXTS`) for
each embedder: the demo's default is the embedder whose quality here is not beaten by a
choice that fits the demo's time budget.

Run: ``python -m benchmarks.retrieval [--quick] [--json PATH|-]`` (``--quick``: k=3 only).
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from benchmarks._common import Results, finish, parse_args
from costeer_lab._fingerprint import error_fingerprint
from costeer_lab.embed import BaseEmbedder, get_embedder
from costeer_lab.knowledge import make_rag_strategy, open_kb
from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace

EMBEDDERS = ("hashing", "minilm")
_TB = 'Traceback (most recent call last):\n  File "/w/main.py", line 7, in <module>\n'
#: Texts the demo (data/specs/demo.yaml) embeds: rows of the embedding caches of its 20 stores
#: (measured on one run of the demo).
DEMO_TEXTS = 2254

#: Root causes and variants of the error set: (cause, [traceback last lines]).
ERRORS: list[tuple[str, list[str]]] = [
    ("missing column", [
        "KeyError: 'close'", "KeyError: 'volume'", "KeyError: '$open'",
        "KeyError: \"None of [Index(['vwap'], dtype='object')] are in the [columns]\"",
        "KeyError: 'high'",
    ]),
    ("window 0", [
        "ValueError: min_periods 1 must be <= window 0",
        "ValueError: min_periods 5 must be <= window 0",
        "ValueError: window must be an integer 0 or greater",
        "ValueError: min_periods 10 must be <= window 0",
        "ValueError: window must be an integer 0 or greater, got -1",
    ]),
    ("negative dimension", [
        "ValueError: negative dimensions are not allowed",
        "ValueError: negative dimensions are not allowed in shape (-1, 3)",
        "numpy.core._exceptions._ArrayMemoryError: negative dimensions are not allowed",
        "ValueError: negative dimensions are not allowed for array of size 0",
        "ValueError: negative dimensions are not allowed (got -5)",
    ]),
    ("length mismatch", [
        "ValueError: Length of values (300) does not match length of index (8864)",
        "ValueError: Length of values (10) does not match length of index (12)",
        "ValueError: Length mismatch: Expected axis has 5 elements, new values have 6 elements",
        "ValueError: Length of values (1) does not match length of index (30)",
        "ValueError: Length mismatch: Expected axis has 2 elements, new values have 1 elements",
    ]),
    ("undefined name", [
        "NameError: name 'Mean' is not defined", "NameError: name 'Ref' is not defined",
        "NameError: name 'np' is not defined", "NameError: name 'Slope' is not defined",
        "NameError: name 'window' is not defined",
    ]),
    ("bad operand", [
        "TypeError: unsupported operand type(s) for /: 'str' and 'float'",
        "TypeError: unsupported operand type(s) for -: 'NoneType' and 'int'",
        "TypeError: unsupported operand type(s) for *: 'method' and 'int'",
        "TypeError: unsupported operand type(s) for +: 'Rolling' and 'Series'",
        "TypeError: unsupported operand type(s) for /: 'DataFrameGroupBy' and 'int'",
    ]),
    ("division by zero", [
        "ZeroDivisionError: division by zero", "ZeroDivisionError: float division by zero",
        "ZeroDivisionError: integer division or modulo by zero",
        "FloatingPointError: divide by zero encountered in divide",
        "ZeroDivisionError: float division by zero in ratio",
    ]),
    ("missing attribute", [
        "AttributeError: 'Rolling' object has no attribute 'slope'",
        "AttributeError: 'Series' object has no attribute 'idxmax_'",
        "AttributeError: 'DataFrame' object has no attribute 'close'",
        "AttributeError: 'Rolling' object has no attribute 'rsquare'",
        "AttributeError: 'SeriesGroupBy' object has no attribute 'resi'",
    ]),
]  # fmt: skip


#: Errors of other causes worded like the causes of :data:`ERRORS` (corpus only, never queries).
ERROR_DECOYS: list[tuple[str, list[str]]] = [
    ("key of a settings dict", [
        "KeyError: 'window' not found in the parameters dict",
        "KeyError: 'alpha' not found in the parameters dict",
    ]),
    ("float window", [
        "ValueError: window must be an integer, got 2.5",
        "TypeError: window must be an integer 0 or greater, not float",
    ]),
    ("negative value in a log", [
        "ValueError: negative values are not allowed in log",
        "FloatingPointError: invalid value encountered in log (negative values)",
    ]),
    ("broadcast of shapes", [
        "ValueError: operands could not be broadcast together with shapes (300,) (299,)",
        "ValueError: Length of values (3) does not match the length of the broadcast shape",
    ]),
    ("name used before assignment", [
        "UnboundLocalError: local variable 'window' referenced before assignment",
        "NameError: free variable 'Mean' referenced before assignment in enclosing scope",
    ]),
    ("value called as a function", [
        "TypeError: 'Series' object is not callable",
        "TypeError: 'Rolling' object is not callable",
    ]),
    ("log of zero", [
        "FloatingPointError: divide by zero encountered in log",
        "RuntimeWarning: divide by zero encountered in log10",
    ]),
    ("function returned None", [
        "AttributeError: 'NoneType' object has no attribute 'rolling'",
        "AttributeError: 'NoneType' object has no attribute 'close'",
    ]),
]  # fmt: skip

_FIELD_SWAP = {"close": "open", "open": "close", "high": "low", "low": "high"}
_FIELD_SWAP |= {"volume": "vwap", "vwap": "volume"}
_OP_SWAP = {"Mean": "Median", "Std": "Mean", "Max": "Min", "Min": "Max", "Sum": "Mean"}
_OP_SWAP |= {"Ref": "Delta", "Corr": "Cov", "Slope": "Rsquare", "Rsquare": "Slope"}
_OP_SWAP |= {"Resi": "Slope", "Quantile": "Median", "Rank": "Quantile", "IdxMax": "IdxMin"}
_OP_SWAP |= {"IdxMin": "IdxMax", "Log": "Abs", "Greater": "Less", "Less": "Greater"}


def decoy(task: Task, swap: str = "field") -> Task:
    """A hard negative for ``task``: the same name, description and variables, but a formula
    whose first data field (``swap="field"``) or first operator (``swap="operator"``) is
    replaced — another solution structure that reads almost the same.

    Example:
        >>> t = Task("a/MA5", "MA5", "mean close", formulation="Mean($close, 5)/$close")
        >>> decoy(t).formulation, decoy(t, "operator").formulation
        ('Mean($open, 5)/$close', 'Median($close, 5)/$close')
    """
    if swap == "field":
        pattern, table, prefix = r"\$(" + "|".join(_FIELD_SWAP) + r")\b", _FIELD_SWAP, "$"
    else:
        pattern, table, prefix = r"\b(" + "|".join(_OP_SWAP) + r")\(", _OP_SWAP, ""
    formula = re.sub(
        pattern,
        lambda m: prefix + table[m.group(1)] + ("(" if swap != "field" else ""),
        task.formulation,
        count=1,
    )
    return Task(
        f"decoy-{swap}/{task.name}", task.name, task.description, formula,
        dict(task.variables), task.category,
    )  # fmt: skip


def decoys(train: list[Task]) -> list[Task]:
    """Both decoys of every train task whose formula they change."""
    out = [decoy(t, swap) for t in train for swap in ("field", "operator")]
    return [d for d, t in zip(out, [t for t in train for _ in (0, 1)], strict=True)
            if d.formulation != t.formulation]  # fmt: skip


def skeleton(formulation: str) -> str:
    """The solution structure of a formulation: numbers replaced by ``N``, spaces removed.

    Example:
        >>> skeleton("Mean($close, 10)/$close") == skeleton("Mean($close, 5)/$close")
        True
    """
    return re.sub(r"\d+(\.\d+)?", "N", formulation).replace(" ", "")


def _tasks() -> tuple[list[Task], list[Task]]:
    from costeer_lab.suites import load_suite

    suite = load_suite("alpha158", n_instruments=4, n_days=40, cache_dir=tempfile.mkdtemp())
    return [suite.task(i) for i in suite.split("test")], [
        suite.task(i) for i in suite.split("train")
    ]


def _ranks(
    ranked: Sequence[Sequence[int]], relevant: Sequence[set[int]], k: int
) -> tuple[float, float]:
    """``(mean recall@k, MRR)`` of ranked corpus indices against relevant sets."""
    recalls, rr = [], []
    for order, rel in zip(ranked, relevant, strict=True):
        recalls.append(len(rel.intersection(order[:k])) / len(rel))
        first = next((i for i, x in enumerate(order) if x in rel), None)
        rr.append(0.0 if first is None else 1.0 / (first + 1))
    return float(np.mean(recalls)), float(np.mean(rr))


def _cosine_order(
    emb: BaseEmbedder, queries: list[str], corpus: list[str]
) -> tuple[list[list[int]], float, int]:
    t0 = time.perf_counter()
    q = np.asarray(emb.embed(queries), dtype=np.float32)
    c = np.asarray(emb.embed(corpus), dtype=np.float32)
    seconds = time.perf_counter() - t0
    sims: npt.NDArray[np.float32] = q @ c.T
    return (
        [list(np.argsort(-row, kind="stable")) for row in sims],
        seconds,
        len(queries) + len(corpus),
    )


def similar_case(
    emb: BaseEmbedder, test: list[Task], train: list[Task], k: int, *, description_only: bool
) -> tuple[float, float, float]:
    """Recall@k, MRR and seconds per embedded text of the similar query's ranking; with
    ``description_only`` the query is the task's prose alone (no name, no formulation), as a
    task written by a person or an LLM would read. ``train`` is the corpus (decoys included
    by the caller)."""
    shapes = [skeleton(t.formulation) for t in train]
    pairs = [(t, {i for i, s in enumerate(shapes) if s == skeleton(t.formulation)}) for t in test]
    pairs = [(t, rel) for t, rel in pairs if rel]
    queries = [t.description if description_only else t.get_task_information() for t, _ in pairs]
    order, seconds, n = _cosine_order(emb, queries, [t.get_task_information() for t in train])
    recall, mrr = _ranks(order, [rel for _, rel in pairs], k)
    return recall, mrr, seconds / n


def similar_threshold(emb: BaseEmbedder, test: list[Task], train: list[Task]) -> float:
    """The cosine that best separates relevant from irrelevant (query, corpus) pairs of the
    similar set (Youden's J: the largest true-positive minus false-positive rate), rounded
    down to two decimals: the calibrated hit threshold of the similar query for ``emb``."""
    q = np.asarray(emb.embed([t.get_task_information() for t in test]), dtype=np.float32)
    c = np.asarray(emb.embed([t.get_task_information() for t in train]), dtype=np.float32)
    sims = (q @ c.T).ravel()
    rel = np.array(
        [skeleton(a.formulation) == skeleton(b.formulation) for a in test for b in train]
    )
    best, best_j = 1.0, -1.0
    for cut in np.unique(np.round(sims, 2)):
        j = float((sims[rel] >= cut).mean() - (sims[~rel] >= cut).mean())
        if j > best_j:
            best, best_j = round(float(cut), 2), j
    return best


def component_case(
    emb: BaseEmbedder, test: list[Task], train: list[Task], k: int
) -> tuple[float, float]:
    """Recall@k and MRR of the V2 component query (top ``k``) on a KB seeded with ``train``
    (decoys included by the caller)."""
    kb = open_kb(store=":memory:", version="v2", embedder=emb)
    ok = SingleFeedback(execution="ground truth", final_decision=True)
    kb.add_seed_knowledge([Knowledge(t, _dummy(t), ok, id=f"seed:{t.id}") for t in train])
    rag = make_rag_strategy(
        "v2", max_component_matches=k, component_gt_ratio=1.0, similar_query=False,
        former_trace_query=False, error_query=False, log_queries=False,
    )  # fmt: skip
    shapes = {t.id: skeleton(t.formulation) for t in train}
    index = {t.id: i for i, t in enumerate(train)}
    ranked, relevant = [], []
    for t in test:
        rel = {index[tid] for tid, s in shapes.items() if s == skeleton(t.formulation)}
        if not rel:
            continue
        qk = rag.query(kb, [t], {}, run_id="bench", attempt=1)
        ranked.append([index[x.knowledge.task.id] for x in qk.component_matches[t.id]])
        relevant.append(rel)
    kb.close()
    return _ranks(ranked, relevant, k)


def _dummy(task: Task) -> Workspace:
    return Workspace({"main.py": f"# {task.name}\n"})


def error_case(emb: BaseEmbedder, k: int) -> tuple[float, float]:
    """Recall@k and MRR of fingerprint similarity: each variant against all other variants and
    the decoys of :data:`ERROR_DECOYS`."""
    texts, causes = [], []
    for cause, lines in ERRORS + ERROR_DECOYS:
        for line in lines:
            texts.append(error_fingerprint(f"{_TB}{line}"))
            causes.append(cause)
    vecs = np.asarray(emb.embed(texts), dtype=np.float32)
    sims = vecs @ vecs.T
    ranked, relevant = [], []
    for i in range(sum(len(lines) for _, lines in ERRORS)):
        order = [j for j in np.argsort(-sims[i], kind="stable") if j != i]
        ranked.append(order)
        relevant.append({j for j in range(len(texts)) if j != i and causes[j] == causes[i]})
    return _ranks(ranked, relevant, k)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(
        "retrieval", "Retrieval quality (recall@k, MRR) per embedder and kind.", argv
    )
    results = Results("retrieval")
    test, train = _tasks()
    corpus = train + decoys(train)
    ks = (3,) if args.quick else (1, 3, 5)
    scores: dict[tuple[str, str, int], tuple[float, float]] = {}
    per_text: dict[str, float] = {}
    for name in EMBEDDERS:
        t0 = time.perf_counter()
        emb = get_embedder(name)
        emb.embed(["warm up"])
        results.add(f"{name}", "load_s", time.perf_counter() - t0, "s")
        for k in ks:
            recall, mrr, sec = similar_case(emb, test, corpus, k, description_only=False)
            per_text[name] = sec
            scores[("similar", name, k)] = (recall, mrr)
            recall, mrr, _ = similar_case(emb, test, corpus, k, description_only=True)
            scores[("similar_prose", name, k)] = (recall, mrr)
            scores[("component", name, k)] = component_case(emb, test, corpus, k)
            scores[("error", name, k)] = error_case(emb, k)
        results.add(f"{name}", "embed_ms_per_text", per_text[name] * 1e3, "ms")
        results.add(f"{name}", "similar_hit_threshold", similar_threshold(emb, test, train), "cos")
    for (kind, name, k), (recall, mrr) in scores.items():
        results.add(f"{kind}/{name}", f"recall_at_{k}", recall, "share")
        results.add(f"{kind}/{name}", f"mrr_at_{k}" if kind == "component" else "mrr", mrr, "rr")
    for kind in ("similar", "similar_prose", "component", "error"):
        k = 3
        (r_h, m_h), (r_m, m_m) = scores[(kind, "hashing", k)], scores[(kind, "minilm", k)]
        results.add_ratio(f"{kind}", "minilm_vs_hashing_mrr_ratio", m_m, m_h)
        results.add_ratio(f"{kind}", "minilm_vs_hashing_recall_at_3_ratio", r_m, r_h)
    results.add_ratio(
        "embed", "minilm_vs_hashing_time_ratio", per_text["minilm"], per_text["hashing"]
    )
    for name in EMBEDDERS:
        results.add("demo budget", f"{name}_embed_s", per_text[name] * DEMO_TEXTS, "s")
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
