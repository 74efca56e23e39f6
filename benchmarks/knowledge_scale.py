"""Knowledge at scale (``python -m benchmarks.knowledge --scale``): a synthetic factor KB of N
tasks, each with 2 attempts on average (1-3; a failed attempt crashes with one of 60 error
fingerprints or returns wrong values; nine tasks in ten end solved), in 10 runs.

Per size, three fresh processes (so each peak RSS is its own):

* **build**: ``record_stream`` of the attempts generated 1,000 tasks at a time, in its default
  transactions (5,000 attempts, each written by its writer process)
  (``insert_items_per_s``; ``build_peak_rss_mb`` is read right after it, and
  ``build_writer_peak_rss_mb`` is the writer process's own peak; ``insert_parent_cpu_us`` and
  ``insert_writer_cpu_us``: CPU time, user and system, per attempt of this process and of the
  writer: the one near 1e6 / ``insert_items_per_s`` is the bottleneck); baseline: the first 500
  attempts recorded one ``record`` call (one transaction) each, on a fresh store
  (``insert_bulk_over_single_ratio``). Then single ``record`` calls on the full KB
  (``record_ms_p50``) against the same on an empty KB (``record_empty_over_full_ratio``: 1
  means recording is flat in N). ``close_s``: closing the
  KB, which saves its vector indexes (building the HNSW graph once when the default
  ``index_kind="auto"`` calls for one). Store bytes per task: every file of the store
  (database, WAL, shared memory; tables, indexes and free pages) while it is open
  (``store_bytes_per_task_open``) and after closing it (``store_bytes_per_task``).
* **serve**: open the KB with the default settings (``open_s``: the indexes read from the
  files the build's ``kb.close()`` saved; ``index_hnsw`` 1 when ``auto`` chose HNSW for the
  task descriptions), the lookups read on first use (``first_use_s``), V2 queries of unseen
  tasks with a failing last feedback (``v2_query_p50``/``p99``); baseline: the same four
  queries by brute force over in-memory copies (every solved task's components, every
  description vector scored, every attempt's errors scanned): ``brute_over_v2_query_ratio``.
  Baseline of the open: embedding every task description again and building a flat index
  (``reembed_over_open_ratio``). Then the former default, an exact index rebuilt from the
  store (``open_exact_s``, ``v2_query_exact_p50``/``p99``, ``exact_over_v2_query_ratio``).
* **rebuild**: a fresh process rebuilding the task-description exact index from the store,
  a page of rows at a time (``rebuild_s``, ``rebuild_peak_rss_mb``); baseline (up to 200k
  tasks): the former rebuild, every vector loaded at once (``load_vectors``) then added
  (``whole_over_paged_rebuild_rss_ratio``: the growth of peak RSS over the process's RSS
  before the rebuild, each at least 1 MB).
* **naive**: the peak RSS of loading every node and record into Python
  (``naive_over_serve_rss_ratio``) against the serve process's peak RSS after opening the KB
  and querying it (``serve_peak_rss_mb``, read before any baseline runs). Above
  ``NAIVE_ROWS`` rows only that many are loaded (the same share of each table) and the growth
  of RSS is scaled up to all of them (``naive_rows_share`` < 1: an extrapolation).

Sizes: ``--quick`` 2k and 10k; default 10k and 100k; ``--full`` adds 1M. Nothing here holds
a list of all N tasks: attempts are generated, and stored vectors and nodes read, a block at a
time, so 1M tasks run in bounded memory (what the KB itself holds aside).
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing as mp
import random
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import Results, percentile
from benchmarks.knowledge import ERRORS, FIELDS, _task
from costeer_lab.embed import get_embedder
from costeer_lab.graph import (
    COMPONENT,
    EDGE_HAS_COMPONENT,
    TASK_DESCRIPTION,
    collection_name,
    node_id,
)
from costeer_lab.index import FaissIndex
from costeer_lab.knowledge import KnowledgeBaseV2, RAGSettings, RAGStrategyV2
from costeer_lab.knowledge._attempts import attempt_errors
from costeer_lab.knowledge._kb_v2 import ATTEMPT_KIND, AttemptInput
from costeer_lab.records import SingleFeedback, Task, Workspace
from costeer_lab.store import SQLiteStore

__all__ = ["attempts", "run_scale"]

#: Tasks generated at a time (the stream never holds all N).
BATCH = 1000
RUNS = 10
#: The naive baseline loads at most this many rows (nodes, edges, records) and extrapolates.
NAIVE_ROWS = 2_000_000
#: The whole-collection rebuild baseline runs up to this many tasks (1M would hold ~8 GB).
WHOLE_REBUILD_MAX = 200_000


def _crash(rng: random.Random) -> SingleFeedback:
    err = rng.choice(ERRORS).format(f"'{rng.choice(FIELDS)}'")
    return SingleFeedback(
        execution=f"Traceback (most recent call last):\n{err}", final_decision=False
    )


def attempts(n: int, seed: int, start: int = 0) -> list[AttemptInput]:
    """Attempts of tasks ``start .. start+n`` (2 per task on average, seeded).

    Example:
        >>> len(attempts(100, 0)) > 150
        True
    """
    rng = random.Random(seed * 1_000_003 + start)
    out: list[AttemptInput] = []
    for i in range(start, start + n):
        t = _task(rng, i)
        run = f"run{i % RUNS}"
        k = rng.choice((1, 2, 3))
        solved = rng.random() < 0.9
        for a in range(1, k + 1):
            if a == k and solved:
                ws = Workspace({"main.py": f"# {t.name}\nresult = compute('{t.formulation}')\n"})
                out.append(AttemptInput(t, ws, SingleFeedback(final_decision=True), run, a))
            else:
                fb = _crash(rng) if rng.random() < 0.7 else SingleFeedback(
                    execution="ran", return_checking="IC too low", final_decision=False
                )  # fmt: skip
                out.append(AttemptInput(t, Workspace({"main.py": f"bad {i}.{a}"}), fb, run, a))
    return out


def _cpu_s() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its children that ended."""
    mine, ended = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return mine.ru_utime + mine.ru_stime, ended.ru_utime + ended.ru_stime


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _queries(n_q: int, seed: int) -> list[tuple[Task, SingleFeedback]]:
    rng = random.Random(seed + 7)
    return [(_task(rng, 50_000_000 + j), _crash(rng)) for j in range(n_q)]


def _record_ms(kb: KnowledgeBaseV2, seed: int, start: int, n: int) -> float:
    lat = []
    for e in attempts(n, seed + 1, start)[:n]:
        s = time.perf_counter()
        kb.record(e.task, e.workspace, e.feedback, run_id=e.run_id, attempt=e.attempt)
        lat.append(time.perf_counter() - s)
    return percentile(lat, 50) * 1e3


def _stream(n: int, seed: int) -> Iterator[AttemptInput]:
    """The attempts of ``attempts(n, seed)``, generated a block of tasks at a time."""
    for lo in range(0, n, BATCH):
        yield from attempts(min(BATCH, n - lo), seed, lo)


def _disk_bytes(path: str) -> int:
    """Bytes of the store file with its WAL and shared-memory files (all pages: tables,
    indexes, free pages), read while the store is still open."""
    return sum(p.stat().st_size for p in Path(path).parent.glob(Path(path).name + "*"))


def _build(path: str, n: int, seed: int) -> dict[str, float]:
    """Child: insert N tasks in bulk, the one-by-one baseline, single-record costs."""
    emb = get_embedder("hashing")
    kb = KnowledgeBaseV2(SQLiteStore(path), emb)
    cpu = _cpu_s()
    s = time.perf_counter()
    count = kb.record_stream(_stream(n, seed))  # default batches; never all N in memory
    bulk = count / (time.perf_counter() - s)
    parent_cpu, writer_cpu = (after - before for after, before in zip(_cpu_s(), cpu, strict=True))
    build_rss = _peak_rss_mb()
    # the writer process record_stream started (ended with the stream): its own peak
    writer_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    record_full = _record_ms(kb, seed, 10**8, 50)
    open_size = _disk_bytes(path)
    s = time.perf_counter()
    kb.close()  # as a user closes it: the vector indexes are saved beside the store
    close_s = time.perf_counter() - s
    size = _disk_bytes(path)  # after the WAL is checkpointed into the file
    with tempfile.TemporaryDirectory() as tmp:
        single = KnowledgeBaseV2(SQLiteStore(f"{tmp}/one.db"), emb)
        few = list(itertools.islice(_stream(n, seed), 500))  # the first attempts, one by one
        s = time.perf_counter()
        for e in few:
            single.record(e.task, e.workspace, e.feedback, run_id=e.run_id, attempt=e.attempt)
        one = len(few) / (time.perf_counter() - s)
        record_empty = _record_ms(single, seed, 10**8, 50)
        single.store.close()
    return {
        "attempts": count,
        "insert_items_per_s": bulk,
        "insert_parent_cpu_us": parent_cpu / count * 1e6,
        "insert_writer_cpu_us": writer_cpu / count * 1e6,
        "store_bytes_per_task_open": open_size / n,
        "insert_single_items_per_s": one,
        "record_ms_p50": record_full,
        "record_empty_ms_p50": record_empty,
        "store_bytes_per_task": size / n,
        "build_peak_rss_mb": build_rss,
        "build_writer_peak_rss_mb": writer_rss,
        "close_s": close_s,
    }


def _brute(kb: KnowledgeBaseV2) -> Any:
    """Brute-force V2 query over in-memory copies (no index, no postings): the solved task
    descriptions' vectors and component sets, read from the store a page at a time."""
    success = kb.success
    name = collection_name(TASK_DESCRIPTION)
    tds: list[str] = []
    matrix = np.empty(
        (kb.store.count_vectors(name), kb.graph.collections[TASK_DESCRIPTION].index.dim),
        dtype=np.float32,
    )  # filled in place: one copy
    for ids, page, _ in kb.store.iter_vectors(name):
        keep = [r for r, i in enumerate(ids) if i in success]
        matrix[len(tds) : len(tds) + len(keep)] = page[keep]
        tds.extend(ids[r] for r in keep)
    matrix = matrix[: len(tds)]
    matrix /= np.sqrt(np.einsum("ij,ij->i", matrix, matrix))[:, None]  # no squared copy
    comps: dict[str, set[str]] = {td: set() for td in tds}
    for src, dst, _ in kb.store.iter_edge_keys(EDGE_HAS_COMPONENT):
        if src in comps:
            comps[src].add(dst)
    attempts = kb.attempts

    def query(task: Task, fb: SingleFeedback, s: RAGSettings) -> None:
        vec = kb.query_vector(task.get_task_information())
        sims = matrix @ (vec / np.linalg.norm(vec))
        similar = sorted(zip(sims.tolist(), tds, strict=True), reverse=True)[: s.max_similar]
        mine = [node_id(COMPONENT, c) for c in kb.components_of(task)]
        by_tier: dict[int, list[tuple[float, str]]] = {}
        for j, td in enumerate(tds):
            m = sum(c in comps[td] for c in mine)
            if m:
                by_tier.setdefault(m, []).append((float(sims[j]), td))
        picks = [x for m in sorted(by_tier, reverse=True) for x in sorted(by_tier[m])[::-1]]
        fps = {fp for fp, _ in attempt_errors(fb)}
        fixes = [
            (t, a)
            for (_run, t), lst in attempts.items()
            for a in lst
            if any(fp in fps for fp, _ in a.errors)
        ]
        del similar, picks, fixes

    return query


def _serve(path: str, seed: int, n_q: int, n_brute: int) -> dict[str, float]:
    """Child: open (default settings), V2 queries, the brute-force query and re-embed
    baselines, then the exact index rebuilt from the store and its V2 queries."""
    emb = get_embedder("hashing")
    s = time.perf_counter()
    kb = KnowledgeBaseV2(SQLiteStore(path), emb)
    kb.sync_indexes()
    out: dict[str, float] = {"open_s": time.perf_counter() - s}
    out["index_hnsw"] = float(kb.graph.collections[TASK_DESCRIPTION].kind == "hnsw")
    s = time.perf_counter()
    _ = kb.success  # the lookups are read on first use
    out["first_use_s"] = time.perf_counter() - s
    settings = RAGSettings(log_queries=False)
    rag = RAGStrategyV2(settings)
    qs = _queries(n_q + 5, seed)
    for t, fb in qs[:5]:
        rag.query(kb, [t], {t.id: fb}, run_id="warm", attempt=1)
    lat = []
    for j, (t, fb) in enumerate(qs[5:]):
        s = time.perf_counter()
        rag.query(kb, [t], {t.id: fb}, run_id="bench", attempt=j)
        lat.append(time.perf_counter() - s)
    out["v2_query_p50"], out["v2_query_p99"] = percentile(lat, 50), percentile(lat, 99)
    out["serve_peak_rss_mb"] = _peak_rss_mb()  # open + queries, before any baseline
    brute = _brute(kb)
    blat = []
    for t, fb in qs[5 : 5 + n_brute]:
        s = time.perf_counter()
        brute(t, fb, settings)
        blat.append(time.perf_counter() - s)
    out["brute_query_p50"] = percentile(blat, 50)
    del brute
    fresh = get_embedder("hashing")
    flat = FaissIndex(emb.dim)
    nodes = kb.store.iter_nodes(TASK_DESCRIPTION)
    s = time.perf_counter()
    while block := [r.content for r in itertools.islice(nodes, 20_000)]:  # a block at a time
        flat.add([str(len(flat) + i) for i in range(len(block))], fresh.embed(block))
    out["reembed_s"] = time.perf_counter() - s
    del flat
    kb.store.close()
    s = time.perf_counter()
    ek = KnowledgeBaseV2(SQLiteStore(path), emb, index_kind="exact", persist_indexes=False)
    ek.sync_indexes()
    out["open_exact_s"] = time.perf_counter() - s
    lat = []
    for j, (t, fb) in enumerate(qs[5:]):
        s = time.perf_counter()
        rag.query(ek, [t], {t.id: fb}, run_id="bench", attempt=j)
        lat.append(time.perf_counter() - s)
    out["v2_query_exact_p50"] = percentile(lat, 50)
    out["v2_query_exact_p99"] = percentile(lat, 99)
    ek.store.close()
    return out


def _rebuild(path: str, whole: bool) -> dict[str, float]:
    """Child: rebuild the task-description exact index from the store, paged (``whole``:
    every vector loaded at once, then added, as rebuilds did before)."""
    store = SQLiteStore(path)
    name = collection_name(TASK_DESCRIPTION)
    FaissIndex(1)  # faiss loaded before the base line is read
    base = _peak_rss_mb()
    s = time.perf_counter()
    if whole:
        ids, matrix, embedder_id = store.load_vectors(name)
        index = FaissIndex(int(matrix.shape[1]), embedder_id=embedder_id)
        index.add(ids, matrix)
        del ids, matrix
    else:
        index = FaissIndex.from_store(store, name, kind="exact", save=False)
    out = {"rebuild_s": time.perf_counter() - s, "rebuild_peak_rss_mb": _peak_rss_mb()}
    out["rebuild_base_rss_mb"], out["rebuild_vectors"] = base, float(len(index))
    store.close()
    return out


def _naive(path: str) -> dict[str, float]:
    """Child: every node and attempt record decoded into Python (what a naive KB holds); above
    ``NAIVE_ROWS`` rows, the same share of each table, the RSS growth scaled up to all."""
    store = SQLiteStore(path)
    counts = (store.count_nodes(), store.count_edges(), store.count_records(ATTEMPT_KIND))
    share = min(1.0, NAIVE_ROWS / max(1, sum(counts)))
    base = _peak_rss_mb()
    sources = (store.iter_nodes(), store.iter_edges(), store.iter_records(ATTEMPT_KIND))
    held = [
        list(itertools.islice(it, round(c * share))) for it, c in zip(sources, counts, strict=True)
    ]
    peak = _peak_rss_mb()
    out = {
        "naive_peak_rss_mb": base + (peak - base) / share,
        "naive_rows": float(sum(counts)),
        "naive_rows_share": share,
    }
    del held
    store.close()
    return out


def _child(job: str, args: tuple[Any, ...], conn: Any) -> None:
    jobs: dict[str, Callable[..., dict[str, float]]] = {
        "build": _build, "serve": _serve, "rebuild": _rebuild, "naive": _naive
    }  # fmt: skip
    conn.send(json.dumps(jobs[job](*args)))
    conn.close()


def _in_child(job: str, *args: Any) -> dict[str, float]:
    ctx = mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(job, args, send))
    proc.start()
    send.close()
    try:
        data = json.loads(recv.recv())
    except EOFError:
        data = None
    proc.join()
    if data is None or proc.exitcode != 0:
        raise RuntimeError(f"benchmark child {job!r} failed (exit code {proc.exitcode})")
    out: dict[str, float] = data
    return out


def run_scale(results: Results, sizes: list[int], args: argparse.Namespace) -> None:
    """Measure every size in ``sizes`` into ``results`` (see the module docstring)."""
    n_q = args.queries or 200
    for n in sizes:
        case = f"scale n={n // 1000}k" if n >= 1000 else f"scale n={n}"
        with tempfile.TemporaryDirectory(prefix="costeer_kb_scale_") as tmp:
            path = f"{tmp}/kb.db"
            b = _in_child("build", path, n, args.seed)
            v = _in_child("serve", path, args.seed, n_q, args.naive_queries or 5)
            rb = _in_child("rebuild", path, False)
            wh = _in_child("rebuild", path, True) if n <= WHOLE_REBUILD_MAX else None
            nv = _in_child("naive", path)
        add = results.add
        add(case, "tasks", n, "tasks")
        add(case, "attempts", b["attempts"], "attempts")
        add(case, "insert_items_per_s", b["insert_items_per_s"], "items/s")
        add(case, "insert_parent_cpu_us", b["insert_parent_cpu_us"], "us/attempt")
        add(case, "insert_writer_cpu_us", b["insert_writer_cpu_us"], "us/attempt")
        add(case, "insert_single_items_per_s", b["insert_single_items_per_s"], "items/s")
        results.add_ratio(case, "insert_bulk_over_single_ratio", b["insert_items_per_s"],
                          b["insert_single_items_per_s"])  # fmt: skip
        add(case, "record_ms_p50", b["record_ms_p50"], "ms")
        add(case, "record_empty_ms_p50", b["record_empty_ms_p50"], "ms")
        results.add_ratio(case, "record_empty_over_full_ratio", b["record_empty_ms_p50"],
                          b["record_ms_p50"])  # fmt: skip
        add(case, "store_bytes_per_task", b["store_bytes_per_task"], "B")
        add(case, "store_bytes_per_task_open", b["store_bytes_per_task_open"], "B")
        add(case, "build_peak_rss_mb", b["build_peak_rss_mb"], "MB")
        add(case, "build_writer_peak_rss_mb", b["build_writer_peak_rss_mb"], "MB")
        add(case, "close_s", b["close_s"], "s")
        add(case, "open_s", v["open_s"], "s")
        add(case, "index_hnsw", v["index_hnsw"], "bool")
        add(case, "open_exact_s", v["open_exact_s"], "s")
        add(case, "first_use_s", v["first_use_s"], "s")
        add(case, "reembed_s", v["reembed_s"], "s")
        results.add_ratio(case, "reembed_over_open_ratio", v["reembed_s"], v["open_s"])
        for kind in ("", "_exact"):
            add(case, f"v2_query{kind}_p50", v[f"v2_query{kind}_p50"] * 1e3, "ms")
            add(case, f"v2_query{kind}_p99", v[f"v2_query{kind}_p99"] * 1e3, "ms")
        results.add_ratio(case, "exact_over_v2_query_ratio", v["v2_query_exact_p50"],
                          v["v2_query_p50"])  # fmt: skip
        add(case, "v2_queries", n_q, "queries")
        add(case, "brute_query_p50", v["brute_query_p50"] * 1e3, "ms")
        add(case, "brute_queries", args.naive_queries or 5, "queries")
        results.add_ratio(case, "brute_over_v2_query_ratio", v["brute_query_p50"],
                          v["v2_query_p50"])  # fmt: skip
        add(case, "rebuild_s", rb["rebuild_s"], "s")
        add(case, "rebuild_peak_rss_mb", rb["rebuild_peak_rss_mb"], "MB")
        add(case, "rebuild_base_rss_mb", rb["rebuild_base_rss_mb"], "MB")
        if wh is not None:
            add(case, "rebuild_whole_peak_rss_mb", wh["rebuild_peak_rss_mb"], "MB")
            whole = max(1.0, wh["rebuild_peak_rss_mb"] - wh["rebuild_base_rss_mb"])
            paged = max(1.0, rb["rebuild_peak_rss_mb"] - rb["rebuild_base_rss_mb"])
            results.add_ratio(case, "whole_over_paged_rebuild_rss_ratio", whole, paged)
        add(case, "serve_peak_rss_mb", v["serve_peak_rss_mb"], "MB")
        add(case, "naive_peak_rss_mb", nv["naive_peak_rss_mb"], "MB")
        add(case, "naive_rows_share", nv["naive_rows_share"], "fraction")
        results.add_ratio(case, "naive_over_serve_rss_ratio", nv["naive_peak_rss_mb"],
                          v["serve_peak_rss_mb"])  # fmt: skip
