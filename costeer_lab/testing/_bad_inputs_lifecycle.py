"""Bad inputs: the run's lifecycle and read-only commands
(locks, start_from, kb on a locked store).

Gathered by :mod:`costeer_lab.testing._bad_inputs` (see ``_bad_inputs_base`` for the shape).
A ``start_from`` is checked in preflight, before ``spec.json`` (or anything) is written. The
locked ``--out`` (a second run while the first holds ``<out>/.lock``) needs a live holder, which
a workspace file cannot be: ``tests/experiment/test_lifecycle.py`` covers it with two runs.
"""

from __future__ import annotations

from typing import Any

from costeer_lab.testing._bad_inputs_base import BadInput, run_case, spec_variant

_AREA = "run output"

#: The cases of this module.
CASES: tuple[BadInput, ...] = (
    run_case(
        "start_from_missing",
        "`start_from` names a folder that does not exist",
        "start_from 'runs/nope' does not exist",
        _AREA,
    ),
    run_case(
        "start_from_file",
        "`start_from` names a file, not a run folder",
        "start_from 'notes.txt' is a file",
        _AREA,
    ),
    run_case(
        "start_from_no_kb",
        "`start_from` names a folder without `kb/`",
        "start_from 'runs/empty' holds no kb/ folder",
        _AREA,
    ),
    run_case(
        "start_from_other_arms",
        "`start_from` is a run without this spec's arm",
        "has no knowledge base kb/other-seed0.db",
        _AREA,
    ),
    run_case(
        "stage_snapshot_unknown",
        "a stage starts from a snapshot its store does not hold (a typo)",
        "stages.0.start_from.snapshot: no snapshot named 'stage:lern' in store "
        "'runs/snapped.db'; known: 'stage:learn'; did you mean 'stage:learn'?",
        _AREA,
    ),
    run_case(
        "stage_snapshot_no_file",
        "a stage starts from a snapshot of a store file that does not exist",
        "stages.0.start_from.store: no store file at 'runs/nope.db'",
        _AREA,
    ),
    run_case(
        "stage_snapshot_not_taken",
        "a stage starts from a snapshot no earlier stage takes",
        "stages.1.start_from.snapshot: no snapshot named 'stage:b' in the store of stage 'a'; "
        "known: 'stage:a'; did you mean 'stage:a'?",
        _AREA,
    ),
)
#: Spec file stem -> spec document (written to ``specs/<stem>.yaml``).
SPECS: dict[str, Any] = {
    "start_from_missing": spec_variant("start-missing", start_from="runs/nope"),
    "start_from_file": spec_variant("start-file", start_from="notes.txt"),
    "start_from_no_kb": spec_variant("start-no-kb", start_from="runs/empty"),
    "start_from_other_arms": spec_variant(
        "start-other", arms=[{"name": "other", "rag": "v1"}], start_from="runs/good"
    ),
    "stage_snapshot_unknown": spec_variant(
        "snap-unknown",
        stages=[
            {"name": "a", "start_from": {"snapshot": "stage:lern", "store": "runs/snapped.db"}}
        ],
    ),
    "stage_snapshot_no_file": spec_variant(
        "snap-no-file",
        stages=[{"name": "a", "start_from": {"snapshot": "s", "store": "runs/nope.db"}}],
    ),
    "stage_snapshot_not_taken": spec_variant(
        "snap-not-taken",
        stages=[{"name": "a"}, {"name": "c", "start_from": {"snapshot": "stage:b"}}],
    ),
}
#: Workspace-relative path -> content (text, bytes, or a document written as YAML).
FILES: dict[str, Any] = {}


# -- KB_CASES: read-only `kb` commands (kept apart: appended to CASES below) -------------------
# A store locked by a writer needs a live second process, so it is tested in
# tests/store/test_sqlite_read_only.py, not here.

from costeer_lab.testing._bad_inputs_base import case  # noqa: E402 (this block stands apart)


def _empty_store_bytes() -> bytes:
    """A valid, empty costeer_lab SQLite store (rollback journal) as bytes."""
    import sqlite3

    from costeer_lab.store._migrations import migrate

    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        migrate(conn, ":memory:")
        return bytes(conn.serialize())
    finally:
        conn.close()


def _snapped_store_bytes() -> bytes:
    """A costeer_lab SQLite store holding one snapshot, ``stage:learn``."""
    import sqlite3

    from costeer_lab.store._migrations import migrate

    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        migrate(conn, ":memory:")
        conn.execute("UPDATE snapshot_clock SET epoch = 1")
        conn.execute(
            "INSERT INTO snapshots (epoch, name, parent, created_at) "
            "VALUES (1, 'stage:learn', NULL, 0)"
        )
        return bytes(conn.serialize())
    finally:
        conn.close()


FILES["runs/snapped.db"] = _snapped_store_bytes()
#: A staged run's layout: its KBs are in kb/<stage>/, not in kb/.
FILES["runs/staged/kb/learn/v2-seed0.db"] = _empty_store_bytes()
FILES["runs/staged/kb/transfer/v2-seed0.db"] = _empty_store_bytes()

KB_CASES: tuple[BadInput, ...] = (
    case(
        "kb-staged-run-path",
        "store",
        "`kb stats OUT/kb/<arm>-seed0.db` on a run with stages (its KBs are in kb/<stage>/)",
        ["kb", "stats", "runs/staged/kb/v2-seed0.db"],
        "the run has stages; try 'runs/staged/kb/learn/v2-seed0.db'",
    ),
    case(
        "kb-query-staged-run-path",
        "store",
        "`kb query OUT/kb/<arm>-seed0.db` on a run with stages",
        ["kb", "query", "runs/staged/kb/v2-seed0.db", "rolling mean"],
        "the run has stages",
    ),
    case(
        "kb-run-folder",
        "store",
        "`kb stats` on a run folder instead of one of its knowledge bases",
        ["kb", "stats", "runs/good"],
        "is a run folder; its knowledge bases are in",
    ),
    case(
        "kb-url-timeout",
        "store",
        "`kb stats` on a SQLite URL with a wordy busy_timeout_s",
        ["kb", "stats", "sqlite:///runs/good/kb/v2-seed0.db?busy_timeout_s=soon"],
        "busy_timeout_s must be a number of seconds",
    ),
)
CASES = (*CASES, *KB_CASES)
