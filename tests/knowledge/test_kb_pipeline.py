"""``record_stream``'s pipeline: batches written by a writer process while the next one is
prepared end exactly as written one by one, and a failure anywhere keeps what committed."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from costeer_lab.embed import HashingEmbedder
from costeer_lab.errors import InvalidInputError, StoreError
from costeer_lab.knowledge import KnowledgeBaseV2
from costeer_lab.knowledge._kb_records import AttemptInput
from costeer_lab.store import SQLiteStore
from costeer_lab.store._writer import WriterProcess
from tests.knowledge.test_kb_bulk import _attempts, _interleaved, _queries, _state


class _Watched(SQLiteStore):
    """A store file noting the writer processes it starts and the batches they wrote."""

    def writer_process(self) -> WriterProcess | None:
        writer = super().writer_process()
        self.children = [*getattr(self, "children", []), writer]
        if writer is not None:
            submit = writer.submit
            writer.batches = 0  # type: ignore[attr-defined]

            def counted(batch: object) -> None:
                submit(batch)  # type: ignore[arg-type]
                writer.batches += 1  # type: ignore[attr-defined]

            writer.submit = counted  # type: ignore[method-assign]
        return writer


def _kb(path: Path) -> KnowledgeBaseV2:
    return KnowledgeBaseV2(_Watched(path), HashingEmbedder())


@pytest.mark.parametrize("batch_size", [1, 4, 23])
def test_pipelined_stream_ends_as_written_here(tmp_path: Path, batch_size: int) -> None:
    items = _interleaved(_attempts(40, seed=11))  # tasks' attempts across batch boundaries
    here = _kb(tmp_path / "here.db")
    assert here.record_stream(iter(items), batch_size=batch_size, pipelined=False) == len(items)
    piped = _kb(tmp_path / "piped.db")
    assert piped.record_stream(iter(items), batch_size=batch_size) == len(items)
    [writer] = piped.store.children  # type: ignore[attr-defined]
    assert writer is not None and writer._child.pid != os.getpid()
    assert writer.batches == -(-len(items) // batch_size)  # every batch, the first too
    assert writer._child.returncode == 0  # ended when the stream did
    assert not getattr(here.store, "children", [])
    assert _state(piped) == _state(here)
    assert _queries(piped) == _queries(here)
    for kb in (here, piped):  # the lookups read again from the store alone: the same
        kb.reload()
    assert _state(piped) == _state(here)
    piped.record_many(items[:3])  # and the knowledge base goes on as usual
    here.record_many(items[:3])
    assert _state(piped) == _state(here)


def test_a_short_stream_starts_no_writer(tmp_path: Path) -> None:
    kb = _kb(tmp_path / "kb.db")
    items = _attempts(5, seed=1)
    assert kb.record_stream(iter(items), batch_size=len(items) + 1) == len(items)
    assert not getattr(kb.store, "children", [])


def test_in_memory_every_batch_is_written_here() -> None:
    items = _attempts(20, seed=4)
    kb = KnowledgeBaseV2(SQLiteStore(":memory:"), HashingEmbedder())
    ref = KnowledgeBaseV2(SQLiteStore(":memory:"), HashingEmbedder())
    assert kb.record_stream(iter(items), batch_size=3) == len(items)
    ref.record_many(items)
    assert _state(kb) == _state(ref)


def _refusing(path: Path, task: str) -> None:
    """Make the store refuse the attempt records of ``task`` (a real failed transaction)."""
    store = SQLiteStore(path)
    store._connection().execute(
        "CREATE TRIGGER no_rec BEFORE INSERT ON records WHEN NEW.key LIKE "
        f"'%\x1f{task}\x1f%' BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END"
    )
    store.close()


def _committed_prefix(items: Sequence[AttemptInput], path: Path, batches: int, size: int) -> None:
    """The state after the first ``batches`` batches of ``size`` written one by one."""
    ref = KnowledgeBaseV2(SQLiteStore(path), HashingEmbedder())
    ref.record_many(items[: batches * size])


@pytest.mark.parametrize("failing", [0, 4])  # the first batch is written there too
def test_a_failing_write_in_the_writer_keeps_the_batches_before(
    tmp_path: Path, failing: int
) -> None:
    items = _attempts(40, seed=7)
    size = 6
    bad = items[failing * size + 2].task.id  # a task of the failing batch (none earlier)
    assert all(e.task.id != bad for e in items[: failing * size])
    _refusing(tmp_path / "kb.db", bad)
    kb = _kb(tmp_path / "kb.db")
    with pytest.raises(StoreError, match="refused by trigger"):
        kb.record_stream(iter(items), batch_size=size)
    assert kb.store.children[0].batches > failing  # type: ignore[attr-defined]
    assert kb.store.count_records("kg_attempt") == failing * size  # none after the failing one
    _committed_prefix(items, tmp_path / "ref.db", failing, size)
    ref = KnowledgeBaseV2(SQLiteStore(tmp_path / "ref.db"), HashingEmbedder())
    assert _state(kb) == _state(ref)  # store and lookups (read again after the failure)
    assert _queries(kb) == _queries(ref)


def _bad_from(items: Sequence[AttemptInput], at: int) -> Iterator[AttemptInput]:
    yield from items[:at]
    e = items[at]
    yield AttemptInput(e.task, e.workspace, e.feedback, e.run_id, e.attempt, {1, 2})  # type: ignore[arg-type]


def test_a_bad_entry_lets_the_write_in_flight_finish(tmp_path: Path) -> None:
    items = _attempts(40, seed=8)
    size = 5
    kb = _kb(tmp_path / "kb.db")
    with pytest.raises(InvalidInputError, match="JSON"):
        kb.record_stream(_bad_from(items, 3 * size + 1), batch_size=size)  # in batch 4
    assert kb.store.count_records("kg_attempt") == 3 * size  # batch 3 was in flight: kept
    _committed_prefix(items, tmp_path / "ref.db", 3, size)
    ref = KnowledgeBaseV2(SQLiteStore(tmp_path / "ref.db"), HashingEmbedder())
    assert _state(kb) == _state(ref)
    assert _queries(kb) == _queries(ref)


def test_a_snapshot_sees_what_the_writer_process_wrote(tmp_path: Path) -> None:
    """The child's writes go through the store's snapshot log like the parent's: a diff names
    every attempt, and a rollback returns to the snapshot."""
    first, rest = _attempts(10, seed=2), _attempts(40, seed=9)[10:]
    kb = _kb(tmp_path / "kb.db")
    kb.record_many(first)
    before = _state(kb)
    kb.snapshot("before")
    assert kb.record_stream(iter(rest), batch_size=4) == len(rest)
    assert kb.store.children[0] is not None  # type: ignore[attr-defined]
    added = {key for (key,) in kb.diff("before").records("kg_attempt").added}
    assert added == {key for key, _ in kb.store.iter_records("kg_attempt")} - {
        key for key, _ in before["records"]
    }
    keys = {f"{e.run_id}\x1f{e.task.id}\x1f{e.attempt}" for e in rest}
    assert added == keys - {key for key, _ in before["records"]} and len(added) > 40
    kb.rollback("before")
    assert _state(kb) == before


def test_no_process_to_start_writes_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("sys.executable", str(tmp_path / "no-such-python"))
    items = _attempts(20, seed=6)
    kb = _kb(tmp_path / "kb.db")
    assert kb.record_stream(iter(items), batch_size=4) == len(items)
    assert kb.store.children == [None]  # type: ignore[attr-defined]
    assert "no writer process" in caplog.text
    ref = KnowledgeBaseV2(SQLiteStore(tmp_path / "ref.db"), HashingEmbedder())
    ref.record_many(items)
    assert _state(kb) == _state(ref)


def test_two_processes_stream_into_one_file_and_lose_nothing(tmp_path: Path) -> None:
    """Two pipelined streams (two parents, two writer processes) into one SQLite file at once,
    sharing every task: each run's attempts all there, each shared node and vector once."""
    path, go = tmp_path / "kb.db", tmp_path / "go"
    SQLiteStore(path).close()  # created (and migrated) before either opens it
    script = Path(__file__).with_name("_stream_writer.py")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(path), run, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for run in ("runA", "runB")
    ]
    go.touch()
    try:
        outs = [proc.communicate(timeout=300) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    items = _attempts(60, seed=13)
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0 and out.strip() == str(len(items)), err
    kb = KnowledgeBaseV2(SQLiteStore(path), HashingEmbedder())
    keys = {key for key, _ in kb.store.iter_records("kg_attempt")}
    assert keys == {f"{r}\x1f{e.task.id}\x1f{e.attempt}" for r in ("runA", "runB") for e in items}
    one = KnowledgeBaseV2(SQLiteStore(tmp_path / "one.db"), HashingEmbedder())
    one.record_many(items)  # one run alone: the same nodes and vectors as both together
    assert sorted(n.id for n in kb.store.iter_nodes()) == sorted(
        n.id for n in one.store.iter_nodes()
    )
    for kind in ("task_description", "component", "error"):
        ids, _, _ = kb.store.load_vectors(f"kg:{kind}")
        assert len(ids) == len(set(ids)) == len(one.store.load_vectors(f"kg:{kind}")[0])
    assert _queries(kb) == _queries(one)  # the same knowledge found (answers of either run)
