"""``BatchWrite`` (one bulk-insert transaction as data, and as bytes) and the SQLite store's
writer process that runs such batches in a child process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from costeer_lab.errors import EmbedderMismatchError, InvalidInputError, StoreError
from costeer_lab.store import (
    BatchWrite,
    EdgeRecord,
    NodeRecord,
    SQLiteStore,
    VectorWrite,
    get_store,
)


def _batch(store: SQLiteStore, tag: str = "") -> BatchWrite:
    """Every part of a batch, with values that are easy to get wrong on the way: text with
    quotes, NUL, non-BMP and non-ASCII characters, JSON attributes, exact floats."""
    nodes = [
        NodeRecord(f"n1{tag}", "component", 'op "mean"\n\x00 π 𝔼', {"a": [1, 2.5, None]}),
        NodeRecord(f"n2{tag}", "error", "KeyError: 'x'", {}, created_at=0.1 + 0.2),
    ]
    vec = (np.arange(8, dtype=np.float32).reshape(2, 4) / 7).astype(np.float32)
    return BatchWrite(
        nodes=store.check_nodes(nodes),
        cached=[("emb@1:4", {"h" * 64: vec[0] * 3})],
        vectors=[
            VectorWrite("kg:component", "emb@1:4", [f"n1{tag}", f"n2{tag}"], vec, ["t" * 64, None])
        ],
        edges=store.check_edges([EdgeRecord(f"n1{tag}", f"n2{tag}", "hit", {"w": 1e-300})]),
        records=[("note", store.check_records("note", [(f"k{tag}", {"ok": True, "s": "é"})]))],
    )


def _content(store: SQLiteStore) -> tuple[Any, ...]:
    ids, matrix, emb = store.load_vectors("kg:component")
    return (
        [(n.id, n.kind, n.content, n.attrs) for n in store.iter_nodes()],
        [(e.src, e.dst, e.kind, e.attrs) for e in store.iter_edges()],
        list(store.iter_records("note")),
        (ids, matrix.tobytes(), emb),
        store.get_cached_embeddings("emb@1:4", ["h" * 64]),
    )


def test_a_batch_survives_bytes_exactly() -> None:
    store = get_store(":memory:")
    batch = _batch(store)  # type: ignore[arg-type]
    again = BatchWrite.from_bytes(batch.to_bytes())
    assert again.nodes == batch.nodes
    assert again.edges == batch.edges
    assert again.records == batch.records
    assert again.nodes is not None and again.nodes.rows[1][4] == 0.1 + 0.2  # float64 exact
    assert [v.ids for v in again.vectors] == [v.ids for v in batch.vectors]
    assert again.vectors[0].text_hashes == ["t" * 64, None]
    assert again.vectors[0].vectors.tobytes() == batch.vectors[0].vectors.tobytes()
    assert again.cached[0][1]["h" * 64].tobytes() == batch.cached[0][1]["h" * 64].tobytes()
    empty = BatchWrite.from_bytes(BatchWrite().to_bytes())
    assert (empty.nodes, empty.edges, list(empty.vectors), list(empty.records)) == (
        None, None, [], [],
    )  # fmt: skip


def test_a_column_of_mixed_values_goes_as_json() -> None:
    store = get_store(":memory:")
    rows = store.check_records("note", [("a", 1), ("b", None)])
    mixed = type(rows)("records", [("note", "a", "1", 1.0, 2), ("note", "b", None, 0.5, 3)])
    again = BatchWrite.from_bytes(BatchWrite(records=[("note", mixed)]).to_bytes())
    assert again.records[0][1].rows == mixed.rows


@pytest.mark.parametrize("cut", [1, 9, -1])
def test_bytes_that_are_not_a_batch_are_refused(cut: int) -> None:
    data = _batch(get_store(":memory:")).to_bytes()  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="not a batch write"):
        BatchWrite.from_bytes(data[:cut])
    with pytest.raises(InvalidInputError, match="left over"):
        BatchWrite.from_bytes(data + b"x")


def test_a_batch_is_sent_in_pieces_and_read_from_a_slice_of_the_frame() -> None:
    """The writer's frames: a batch written piece by piece (never joined) arrives as one body,
    and the batch is read from a slice of that body after the request byte, without a copy;
    a frame cut short is refused by name."""
    from costeer_lab.store._writer import BATCH, receive, send

    batch = _batch(get_store(":memory:"))  # type: ignore[arg-type]
    parts = batch.to_parts()
    assert len(parts) > 3 and b"".join(parts) == batch.to_bytes()
    read_fd, write_fd = os.pipe()
    with os.fdopen(write_fd, "wb") as out:
        send(out, BATCH, *parts)
        send(out, BATCH, *parts)
        out.write(b"\x05\x00\x00\x00\x00\x00\x00\x00ab")  # says 5 bytes, holds 2
    with os.fdopen(read_fd, "rb") as inp:
        for _ in range(2):
            body = receive(inp)
            assert body is not None and body[:1] == BATCH
            again = BatchWrite.from_bytes(memoryview(body)[1:])
            assert again.to_bytes() == batch.to_bytes()
            assert again.nodes == batch.nodes and again.edges == batch.edges
        with pytest.raises(StoreError, match="3 bytes short of a frame"):
            receive(inp)
        assert receive(inp) is None  # the end of the stream between frames


def test_the_writer_process_writes_what_write_batch_writes(tmp_path: Path) -> None:
    here, there = SQLiteStore(tmp_path / "here.db"), SQLiteStore(tmp_path / "there.db")
    states_here = here.write_batch(_batch(here))
    with there.writer_process() as writer:  # type: ignore[union-attr]
        assert writer._child.pid != os.getpid()
        writer.submit(_batch(there))
        states_there = writer.result()
        writer.submit(_batch(there, "b"))  # one after the other, same child
        writer.result()
    assert _content(there)[0][:2] == _content(here)[0]
    assert _content(there)[1:4] == (
        _content(here)[1] + [(e.src, e.dst, e.kind, e.attrs) for e in there.iter_edges()][1:],
        list(there.iter_records("note")),
        _content(there)[3],
    )
    assert there.get_node("n2").created_at == 0.1 + 0.2  # type: ignore[union-attr]
    assert _content(there)[4]["h" * 64].tobytes() == _content(here)[4]["h" * 64].tobytes()
    assert [s[1][0] for s in states_there] == [s[1][0] for s in states_here] == [1]
    assert [before[0] for before, _ in states_there] == [0]
    assert there.count_nodes() == 4 and there.count_records("note") == 2
    assert there.collection_state("kg:component")[0] == 2


def test_a_failure_stops_what_was_queued_behind_it(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "kb.db")
    store._connection().execute(
        "CREATE TRIGGER no_note BEFORE INSERT ON records WHEN NEW.key = 'kbad' "
        "BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END"
    )
    with store.writer_process() as writer:  # type: ignore[union-attr]
        writer.submit(_batch(store, "bad"))
        writer.submit(_batch(store, "queued"))  # handed over before the failure was read
        with pytest.raises(StoreError, match="refused by trigger"):
            writer.result()
        with pytest.raises(StoreError, match="not written: a batch before it failed"):
            writer.result()
        writer.submit(_batch(store))  # submitted after the failure was read: written
        writer.result()
    assert [n.id for n in store.iter_nodes()] == ["n1", "n2"]  # nothing of the other two
    assert store.count_vectors("kg:component") == 2
    assert [k for k, _ in store.iter_records("note")] == ["k"]


def test_an_error_of_the_library_keeps_its_type(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "kb.db")
    store.put_vectors("kg:component", "other@1:4", ["x"], np.ones((1, 4), dtype=np.float32))
    with store.writer_process() as writer:  # type: ignore[union-attr]
        writer.submit(_batch(store))
        with pytest.raises(EmbedderMismatchError, match="other@1:4"):
            writer.result()


def test_a_writer_that_dies_is_reported_with_its_exit_code(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "kb.db")
    writer = store.writer_process()
    assert writer is not None
    try:
        os.kill(writer._child.pid, signal.SIGKILL)
        writer._child.wait()
        with pytest.raises(StoreError, match=r"writer process .* ended \(exit code -9\)"):
            writer.submit(_batch(store))
            writer.result()
    finally:
        writer.close()
    assert store.count_nodes() == 0


def test_at_most_depth_batches_outstanding_answered_in_order(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "kb.db")
    with store.writer_process() as writer:  # type: ignore[union-attr]
        assert writer.depth == 2
        with pytest.raises(StoreError, match="no batch was submitted"):
            writer.result()
        writer.submit(_batch(store, "a"))
        writer.submit(_batch(store, "b"))
        with pytest.raises(StoreError, match="still writing 2 batches"):
            writer.submit(BatchWrite())
        first, second = writer.result(), writer.result()
    assert [(b[0], a[0]) for b, a in first + second] == [(0, 1), (1, 2)]  # in order
    assert [n.id for n in store.iter_nodes()] == ["n1a", "n2a", "n1b", "n2b"]


def test_no_writer_process_in_memory_or_read_only(tmp_path: Path) -> None:
    assert SQLiteStore(":memory:").writer_process() is None
    SQLiteStore(tmp_path / "kb.db").close()
    assert SQLiteStore(tmp_path / "kb.db", read_only=True).writer_process() is None
    closed = SQLiteStore(tmp_path / "kb.db")
    closed.close()
    with pytest.raises(StoreError, match="closed"):
        closed.writer_process()


def test_the_writer_process_starts_outside_the_checkout(tmp_path: Path) -> None:
    """The child finds the package from any working directory (a fresh clone anywhere)."""
    store = SQLiteStore(tmp_path / "kb.db")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with store.writer_process() as writer:  # type: ignore[union-attr]
            writer.submit(_batch(store))
            writer.result()
    finally:
        os.chdir(cwd)
    assert store.count_nodes() == 2


def test_the_writer_ends_when_its_parent_dies(tmp_path: Path) -> None:
    """A parent killed without closing its writer leaves no process behind: the child reads the
    end of its stdin and exits."""
    parent = subprocess.run(
        [sys.executable, "-c",
         "import os, sys; from costeer_lab.store import SQLiteStore; "
         "w = SQLiteStore(sys.argv[1]).writer_process(); print(w._child.pid, flush=True); "
         "os._exit(0)", str(tmp_path / "kb.db")],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )  # fmt: skip
    child = int(parent.stdout.strip())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def test_edge_keys_are_checked_as_edges_are() -> None:
    store = get_store(":memory:")
    keys = [("a", "b", "hit"), ("é 𝔼 'q'", "a", "has_component")]
    fast = store.check_edge_keys(keys).rows
    slow = store.check_edges([EdgeRecord(*k) for k in keys]).rows
    assert [r[:4] for r in fast] == [r[:4] for r in slow] == [(*k, "{}") for k in keys]
    store.put_edges(store.check_edge_keys(keys))
    assert list(store.iter_edge_keys()) == keys
    for bad, named in (
        ([("a", "b\x00", "hit")], "edge dst"),  # the store cannot keep a NUL
        ([("a\ud800", "b", "hit")], "edge src"),  # nor a lone surrogate
        ([("a", 7, "hit")], "edge dst"),
        ([("a", "b", None)], "kind"),
        ([("a", "b")], "triples"),
    ):
        with pytest.raises(InvalidInputError, match=named):
            store.check_edge_keys(bad)  # type: ignore[arg-type]
    assert store.count_edges() == 2
