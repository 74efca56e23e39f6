"""What integer keys would save on the knowledge base's writes (issue 27: insert at 100k).

Before schema 6 the store keyed edges by ``(src, dst, kind)`` and vectors by
``(collection, item_id)``, where the ids are 64-character sha256 hex strings: each new row
landed on a random leaf page of each index, and a batch dirtied about as many pages as it had
rows. This benchmark replays the knowledge
base's write pattern in plain ``sqlite3`` with the store's pragmas (WAL, ``synchronous=NORMAL``,
the 32 MiB bulk-write cache), per task: its description node, its vector and five
``has_component`` edges; per attempt (1-3 per task): a trace node, a ``trace_of`` and a
``hit_error`` edge and an attempt record; one transaction per 500 tasks. Two layouts, each in a
fresh file, in the same process (it sized the change that schema 6 then made, see
``store/_interned.py``; kept to show the effect of key layout alone):

* **text** (baseline, the schema before version 6): edges and vectors keyed by the text ids.
* **int**: the same rows, edges and vectors keyed by the nodes' integer ``seq`` (the
  ``nodes.id`` index stays: ids are still looked up), so new rows append.

Reported per size N: CPU µs per attempt over the last fifth of the tasks (the cost *at* N, what
grows with N) and over all of them, and ``text_over_int_cpu_ratio``. SQLite only; the Python of a
real ``record_many`` (embedding, JSON, lookups; about 115 µs per attempt at 100k) is not in it.

Sizes: ``--quick`` 2k and 10k tasks; default 20k and 100k; ``--n`` any.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sqlite3
import tempfile
import time
from pathlib import Path

from benchmarks._common import Results, finish, parse_args

__all__ = ["replay"]

BATCH_TASKS = 500
COMPONENTS = 75
ERRORS = 60

_SCHEMA = {
    "text": (
        "CREATE TABLE edges(seq INTEGER PRIMARY KEY, src TEXT, dst TEXT, kind TEXT,"
        " UNIQUE(src, dst, kind))",
        "CREATE TABLE vectors(seq INTEGER PRIMARY KEY, collection TEXT, item_id TEXT,"
        " text_sha256 TEXT, vector BLOB, UNIQUE(collection, item_id))",
    ),
    "int": (
        "CREATE TABLE edges(src INTEGER, dst INTEGER, kind INTEGER, PRIMARY KEY(src, dst, kind))"
        " WITHOUT ROWID",
        "CREATE TABLE vectors(node INTEGER, collection INTEGER, text_sha256 TEXT, vector BLOB,"
        " PRIMARY KEY(collection, node)) WITHOUT ROWID",
    ),
}
_COMMON = (
    "CREATE TABLE nodes(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, kind TEXT,"
    " content TEXT, attrs TEXT)",
    "CREATE INDEX edges_dst ON edges(dst)",
    "CREATE INDEX vectors_text ON vectors(text_sha256)",
    "CREATE TABLE records(seq INTEGER PRIMARY KEY, kind TEXT, key TEXT, data TEXT,"
    " UNIQUE(kind, key))",
)
_NODE = (
    "INSERT INTO nodes(id, kind, content, attrs) VALUES (?, ?, ?, ?) "
    "ON CONFLICT(id) DO UPDATE SET attrs = excluded.attrs RETURNING seq"
)
_EDGE = "INSERT INTO edges(src, dst, kind) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
_RECORD = (
    "INSERT INTO records(kind, key, data) VALUES (?, ?, ?) "
    "ON CONFLICT DO UPDATE SET data = excluded.data"
)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def replay(path: Path, layout: str, n_tasks: int, seed: int) -> tuple[float, float, int]:
    """Write ``n_tasks`` tasks in ``layout`` (``text`` / ``int``) into a new SQLite file;
    returns (CPU µs per attempt over all tasks, over the last fifth, attempts).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> replay(d / "a.db", "int", 600, 0)[2] > 600
        True
    """
    rng = random.Random(seed)  # the same tasks, attempts and choices in both layouts
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "cache_size=-32768"):
        db.execute(f"PRAGMA {pragma}")
    for statement in (*_SCHEMA[layout], *_COMMON):
        db.execute(statement)
    text = layout == "text"
    comps = [_sha(f"component {i}") for i in range(COMPONENTS)]
    errors = [_sha(f"error {i}") for i in range(ERRORS)]
    vector = rng.randbytes(384 * 4)
    tail_from = n_tasks - max(1, n_tasks // 5)
    cpu_all = cpu_tail = 0.0
    attempts = tail_attempts = 0
    for lo in range(0, n_tasks, BATCH_TASKS):
        hi = min(n_tasks, lo + BATCH_TASKS)
        start, made = time.process_time(), 0
        db.execute("BEGIN")
        for t in range(lo, hi):
            td = _sha(f"task {t}")
            td_seq = db.execute(_NODE, (td, "task_description", "d" * 200, "{}")).fetchone()[0]
            if text:
                db.execute(
                    "INSERT INTO vectors(collection, item_id, text_sha256, vector) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    ("kg:task_description", td, _sha(f"text {t}"), vector),
                )
            else:
                db.execute(
                    "INSERT INTO vectors(node, collection, text_sha256, vector) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (td_seq, 1, _sha(f"text {t}"), vector),
                )
            for c in rng.sample(range(COMPONENTS), 5):
                db.execute(_EDGE, (td, comps[c], "has_component") if text else (td_seq, c, 1))
            for a in range(rng.choice((1, 2, 3))):
                made += 1
                trace = _sha(f"trace {t}.{a}")
                row = (trace, "task_trace", "t" * 300, "{" + "w" * 400 + "}")
                trace_seq = db.execute(_NODE, row).fetchone()[0]
                e = rng.randrange(ERRORS)
                if text:
                    db.execute(_EDGE, (trace, td, "trace_of"))
                    db.execute(_EDGE, (trace, errors[e], "hit_error"))
                else:
                    db.execute(_EDGE, (trace_seq, td_seq, 2))
                    db.execute(_EDGE, (trace_seq, COMPONENTS + e, 3))
                key = f"run{t % 10}\x1ft{t}\x1f{a}"
                db.execute(_RECORD, ("kg_attempt", key, "{" + "r" * 200 + "}"))
        db.execute("COMMIT")
        spent = time.process_time() - start
        cpu_all, attempts = cpu_all + spent, attempts + made
        if hi > tail_from:  # the batches holding the last fifth
            cpu_tail, tail_attempts = cpu_tail + spent, tail_attempts + made
    db.close()
    return cpu_all / attempts * 1e6, cpu_tail / tail_attempts * 1e6, attempts


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--n", dest="n", type=int, nargs="+", default=None, metavar="TASKS",
        help="sizes in tasks instead of the defaults",
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = parse_args(
        "key_layout", "Text vs integer keys on the knowledge base's write pattern.", argv,
        _options,
    )  # fmt: skip
    sizes = args.n or ([2_000, 10_000] if args.quick else [20_000, 100_000])
    results = Results("key_layout")
    for n in sizes:
        case = f"sqlite N={n:,}"
        cost = {}
        with tempfile.TemporaryDirectory(prefix="costeer_keys_") as tmp:
            for layout in ("text", "int"):
                cost[layout] = replay(Path(tmp) / f"{layout}.db", layout, n, args.seed)
        results.add(case, "attempts", cost["text"][2], "attempts")
        for layout in ("text", "int"):
            results.add(case, f"{layout}_cpu_us_per_attempt", cost[layout][0], "us")
            results.add(case, f"{layout}_cpu_us_per_attempt_at_n", cost[layout][1], "us")
        results.add_ratio(case, "text_over_int_cpu_ratio", cost["text"][0], cost["int"][0])
        results.add_ratio(case, "text_over_int_cpu_at_n_ratio", cost["text"][1], cost["int"][1])
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
