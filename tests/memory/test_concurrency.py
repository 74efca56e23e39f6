"""Real processes writing one memory: 4 x 1,000 patterns, and a SIGKILLed writer."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from costeer_lab.memory import has_native_search, open_memory
from costeer_lab.memory._pattern import PATTERN_KIND
from tests._processes import kill_after_lines, spawn

from ._worker import code_of

WORKER = Path(__file__).with_name("_worker.py")


def _spawn(*args: str) -> subprocess.Popen[str]:
    return spawn(WORKER, *args)


@pytest.mark.slow
def test_four_processes_write_1000_patterns_each(store_url: str, tmp_path: Path) -> None:
    workers, n = 4, 1000
    go = tmp_path / "go"
    procs = [_spawn("patterns", store_url, str(w), str(n), str(go)) for w in range(workers)]
    go.touch()  # release all at once (on SQLite they race to create the file)
    outputs = [p.communicate(timeout=600) for p in procs]
    for w, (proc, (out, err)) in enumerate(zip(procs, outputs, strict=True)):
        assert proc.returncode == 0, f"worker {w} failed:\n{err}"
        assert out.strip() == f"worker {w} done" and err == ""
    with open_memory(store_url, embedder="hashing") as memory:
        assert len(memory.patterns) == workers * n
        ids, matrix, _ = memory.store.load_vectors("memory.patterns")
        assert len(set(ids)) == workers * n and matrix.shape[0] == workers * n
        assert set(ids) == {k for k, _ in memory.store.iter_records(PATTERN_KIND)}
        for w in range(workers):
            codes = {
                r["code"]
                for _, r in memory.store.iter_records(
                    PATTERN_KIND, {"problem_type": f"worker {w}"}
                )
            }
            assert codes == {code_of(w, i) for i in range(n)}
        hit = memory.patterns.search_patterns("worker 2 scale item 7", threshold=0.0, limit=50)
        assert hit and all(m.problem_type.startswith("worker ") for m in hit)


def test_concurrent_agents_lose_no_count(store_url: str, tmp_path: Path) -> None:
    with open_memory(store_url, embedder="hashing") as memory:
        pid = memory.patterns.store_pattern(
            "shared counter pattern", "def f(x):\n    return x\n", description="shared counter"
        )
    go = tmp_path / "go"
    procs = [_spawn("outcomes", store_url, pid, "150", str(go)) for _ in range(3)]
    go.touch()
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0 and out.strip() == "done", err
    with open_memory(store_url, embedder="hashing") as memory:
        st = memory.patterns.stats(pid)
        assert (st.usage_count, st.successes, st.failures) == (450, 300, 150)
        assert memory.stats()["pattern_searches"] == 450


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkilled_writer_keeps_every_returned_pattern(store_url: str) -> None:
    proc = _spawn("forever", store_url)
    printed = kill_after_lines(proc, 200)
    assert len(printed) >= 200
    with open_memory(store_url, embedder="hashing") as memory:
        stored = {k for k, _ in memory.store.iter_records(PATTERN_KIND)}
        ids, _, _ = memory.store.load_vectors("memory.patterns")
        assert [p for p in printed if p not in stored] == []
        assert [p for p in printed if p not in set(ids)] == []
        assert set(ids) == stored  # record and vector commit together
        if not has_native_search(memory.store):  # pgvector's HNSW search is approximate
            found = memory.patterns.search_patterns(
                "durable", threshold=-1, limit=len(stored), record=False
            )
            assert {m.id for m in found} == stored  # the index rebuilt from the store finds all
