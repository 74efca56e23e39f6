"""Snapshot benchmark: what snapshots of a store cost as the store grows.

For each size N (1k and 10k items; ``--full`` adds 100k) a store is filled with N synthetic
knowledge-base items (a ~1 KB attempt record, a graph node and a 64-d vector each), then:

* ``snapshot_ms``: one ``store.snapshot(name)`` (median of several), against the brute-force
  baseline ``file_copy_ms``: copying the SQLite file (what a snapshot by file copy costs);
  ``copy_vs_snapshot_ratio`` = copy / snapshot;
* ``write_ms`` of 100 item upserts with no snapshot and after one (the undo log's triggers),
  ``write_overhead_ratio`` = with / without;
* ``diff_ms``, ``rollback_ms`` after 100 changed items, and ``view_open_ms``
  (``at_snapshot``);
* case ``scaling``: ``snapshot_1k_vs_10k_ratio`` (and rollback, diff) = time at 1k / time at
  10k: about 1 when the cost does not grow with N (a file copy's ratio is about 0.1).

``--postgres`` runs the same on a PostgreSQL started for the run (the bundled test server),
where the baseline is a server-side copy of the four tables (``CREATE TABLE … AS SELECT``).

Run: ``python -m benchmarks.snapshots [--quick] [--full] [--postgres] [--json PATH|-]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import numpy as np

from benchmarks._common import Results, finish, parse_args
from costeer_lab.store import BaseStore, NodeRecord, get_store

DIM = 64
CHANGED = 100


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--full", action="store_true", help="also 100k items")
    parser.add_argument("--postgres", action="store_true", help="also on PostgreSQL")
    parser.add_argument("--n", type=int, nargs="+", default=None, help=argparse.SUPPRESS)


def _write(store: BaseStore, rng: np.random.Generator, start: int, n: int, tag: str) -> None:
    """Upsert items ``start .. start + n`` (a record, a node and a vector each)."""
    ids = [f"task{i}" for i in range(start, start + n)]
    records = [(i, {"task_id": i, "tag": tag, "trace": "x" * 900}) for i in ids]
    nodes = [NodeRecord(f"td:{i}", "task_description", f"{tag} {i}", {}) for i in ids]
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    with store.transaction():
        store.put_records("kg_attempt", records)
        store.put_nodes(nodes)
        store.put_vectors("td", "bench@1:64", ids, vectors)


def _ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def run_size(
    results: Results,
    backend: str,
    store: BaseStore,
    n: int,
    copy: Callable[[], object],
    seed: int,
) -> dict[str, float]:
    """Fill ``store`` with ``n`` items and measure; returns the times the scaling case needs."""
    case = f"{backend} N={n}"
    rng = np.random.default_rng(seed)
    for start in range(0, n, 5000):
        _write(store, rng, start, min(5000, n - start), "v0")
    without = statistics.median(_ms(lambda: _write(store, rng, 0, CHANGED, "w")) for _ in range(5))
    snapshot = statistics.median(_ms(partial(store.snapshot, f"s{k}")) for k in range(7))
    logged = []
    for k in range(5):  # the first change of each key after a snapshot logs its pre-image
        store.snapshot(f"w{k}")
        logged.append(_ms(partial(_write, store, rng, 0, CHANGED, f"w{k}")))
    with_log = statistics.median(logged)
    store.snapshot("base")
    _write(store, rng, n // 2, CHANGED, "changed")
    diff = _ms(lambda: store.diff("base"))
    view_open = _ms(lambda: store.at_snapshot("base").close())
    rollback = _ms(lambda: store.rollback("base"))
    file_copy = statistics.median(_ms(copy) for _ in range(3))
    results.add(case, "snapshot_ms", snapshot, "ms")
    results.add(case, "file_copy_ms", file_copy, "ms")
    results.add_ratio(case, "copy_vs_snapshot_ratio", file_copy, snapshot)
    results.add(case, "write_ms_no_snapshot", without, "ms")
    results.add(case, "write_ms_after_snapshot", with_log, "ms")
    results.add_ratio(case, "write_overhead_ratio", with_log, without)
    results.add(case, "diff_ms", diff, "ms")
    results.add(case, "view_open_ms", view_open, "ms")
    results.add(case, "rollback_ms", rollback, "ms")
    return {"snapshot": snapshot, "rollback": rollback, "diff": diff, "copy": file_copy}


def _size(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def _scaling(results: Results, backend: str, times: dict[int, dict[str, float]]) -> None:
    sizes = sorted(times)
    if len(sizes) < 2:
        return
    small, big = sizes[0], sizes[-1]
    label = f"{_size(small)}_vs_{_size(big)}"
    for metric in ("snapshot", "rollback", "diff", "copy"):
        results.add_ratio(
            f"{backend} scaling",
            f"{metric}_{label}_ratio",
            times[small][metric],
            times[big][metric],
        )


def _sqlite(results: Results, sizes: list[int], seed: int) -> None:
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"kb{n}.db"
            store = get_store(path)
            conn = store._connection()  # type: ignore[attr-defined]

            def copy(path: Path = path, conn: object = conn) -> None:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]
                shutil.copyfile(path, path.with_suffix(".copy"))

            try:
                times[n] = run_size(results, "sqlite", store, n, copy, seed)
            finally:
                store.close()
    _scaling(results, "sqlite", times)


def _postgres(results: Results, sizes: list[int], seed: int) -> None:
    from costeer_lab.testing._postgres import PostgresTestServer, PostgresUnavailable

    try:
        server = PostgresTestServer()
    except PostgresUnavailable as exc:
        results.skip("postgres", str(exc))
        return
    times = {}
    with server:
        for n in sizes:
            url = server.create_database(f"snap{n}")
            store = get_store(url)
            counter = iter(range(10**6))

            def copy(store: BaseStore = store, counter: Iterator[int] = counter) -> None:
                k = next(counter)
                conn = store._connection()  # type: ignore[attr-defined]
                for table in ("nodes", "edges", "vectors", "records"):
                    conn.execute(f"CREATE TABLE copy{k}_{table} AS SELECT * FROM {table}")

            try:
                times[n] = run_size(results, "postgres", store, n, copy, seed)
            finally:
                store.close()
    _scaling(results, "postgres", times)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; see the module docstring."""
    args = parse_args("snapshots", "Store snapshots vs a file copy.", argv, extra=_options)
    sizes = args.n or ([1_000, 10_000, 100_000] if args.full else [1_000, 10_000])
    results = Results("snapshots")
    _sqlite(results, sizes, args.seed)
    if args.postgres:
        _postgres(results, sizes, args.seed)
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
