"""Red team: every hostile candidate of ``costeer_lab.testing.ATTACKS`` must be contained.

Each attack goes through the public path — ``suite.evaluator().evaluate(...)`` of the humaneval
and alpha158 suites, a few through ``MultiEvaluator(suite.evaluators())``, and a handful
through ``run_experiment`` with the scripted coder — and the harness checks the verdict, the
feedback, what is left on the host and whether a host writer is blocked
(see :mod:`costeer_lab.testing._redteam`). A failure message says exactly what leaked.

The harness is tested too: benign correct solutions must come back as successes (so
"contained" really depends on the verdict), a leaky toy evaluator must be caught on every
attack, each host check must see a planted leftover, the trusted process's *peak* memory and
its feedback's fingerprints are bounded, and adaptive attacks see the earlier feedback.

The second-round attacks (issue 22) that still leak on this branch are expected failures
(``xfail``, not strict) until the fixes of the sandbox, factor-acceptance and trusted-parsing
branches land; ``python -m benchmarks.integrity`` shows them as LEAKED with what leaked.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab import SingleFeedback, Task, Workspace
from costeer_lab.testing import (
    ATTACKS,
    AlwaysPassEvaluator,
    Attack,
    RedTeam,
    _redteam,
    benign_controls,
    run_experiment_attacks,
)
from costeer_lab.testing._redteam_host import clean_up, left_run_dirs, leftovers, snapshot

BY_NAME = {a.name: a for a in ATTACKS}


@pytest.fixture(scope="module")
def team() -> Iterator[RedTeam]:
    """One harness session (bait, suites, one evaluator per suite) for the whole module."""
    with RedTeam() as session:
        yield session


def _param(attack: Attack) -> object:
    marks: list[pytest.MarkDecorator] = [pytest.mark.slow] if attack.slow else []
    return pytest.param(attack, id=attack.name, marks=marks)


@pytest.mark.parametrize("attack", [_param(a) for a in ATTACKS])
def test_attack_is_contained(team: RedTeam, attack: Attack) -> None:
    result = team.run(attack)
    assert result.contained, f"{attack.name} ({attack.route}): {result.detail}"


MULTI = ["result_file_forge", "status_pipe_forge_crash", "project_reference_code", "sqlite_lock"]


@pytest.mark.slow
@pytest.mark.parametrize("name", MULTI)
def test_attack_is_contained_through_multi_evaluator(team: RedTeam, name: str) -> None:
    result = team.run(BY_NAME[name], via="multi")
    assert result.contained, f"{name} via MultiEvaluator: {result.detail}"


#: Attacks handed to run_experiment, each on a task of its own (their code is task-agnostic).
EXPERIMENT = {
    "result_file_forge": "humaneval/1",
    "always_equal_object": "humaneval/0",
    "workdir_answer_key": "humaneval/13",
    "installed_reference_solutions": "humaneval/16",
    "shared_tmp_files": "humaneval/23",
    "daemon_process": "humaneval/27",
}


@pytest.mark.slow
def test_run_experiment_gives_attacks_no_success(team: RedTeam, tmp_path: Path) -> None:
    attacks = [dataclasses.replace(BY_NAME[n], task_id=t) for n, t in EXPERIMENT.items()]
    results = run_experiment_attacks(attacks, team=team, out=tmp_path / "run")
    assert len(results) == len(attacks)
    leaked = [f"{r.name}: {r.detail}" for r in results if not r.contained]
    assert not leaked, "\n".join(leaked)


# -- the harness cannot call a successful attack "contained" ----------------------------------
def test_benign_controls_succeed_through_the_same_harness(team: RedTeam) -> None:
    """Correct solutions, handed in like attacks, are judged successes — so they come back
    *not* contained, and for that reason only (no canary or host check fires on them)."""
    for control in benign_controls(team):
        result = team.run(control)
        assert result.final_decision is True, f"{control.name}: {result.detail}"
        assert not result.contained
        assert len(result.leaks) == 1 and "final_decision=True" in result.leaks[0], result.detail


def test_a_leaky_evaluator_is_caught_on_every_attack() -> None:
    """With a toy evaluator that accepts everything, no attack may be reported contained."""
    toy = AlwaysPassEvaluator()
    with RedTeam(evaluators={"humaneval": toy, "alpha158": toy}) as leaky:
        missed = [a.name for a in ATTACKS if not a.honest and leaky.run(a).contained]
    assert missed == []


class _EchoEvaluator:
    """A toy evaluator whose feedback quotes the hidden tests, the reference and the
    environment's API key (verdict: failure)."""

    def evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None = None
    ) -> SingleFeedback:
        files = {} if gt_implementation is None else gt_implementation.files
        text = files.get("tests.py", "") + files.get("main.py", "")
        text += os.environ.get("OPENAI_API_KEY", "")
        return SingleFeedback(execution=text, final_decision=False)


def test_a_leaking_feedback_is_caught() -> None:
    """A failing verdict is not enough: secrets in the feedback are reported by name."""
    with RedTeam(evaluators={"humaneval": _EchoEvaluator()}) as echo:
        result = echo.run(BY_NAME["early_os_exit"])
    assert not result.contained and result.final_decision is False
    for what in ("a hidden-test marker", "a reference line", "the environment secret"):
        assert what in result.detail, result.detail


def test_host_checks_see_planted_leftovers(team: RedTeam) -> None:
    """Files, processes and IPC objects carrying a marker are reported, then removed."""
    team.start()
    mark, key = "rtmkselftest" + str(os.getpid()), 0x5DFF0000 + os.getpid() % 65536
    before = snapshot(team.dirs)
    planted = Path(f"/dev/shm/costeer-selftest-{mark}")
    planted.write_text("x")
    sleep = shutil.which("sleep")
    assert sleep is not None
    proc = subprocess.Popen([f"costeer-selftest-{mark}", "60"], executable=sleep)
    ipc = subprocess.run(["ipcmk", "-M", "4096", "-K", str(key)], capture_output=True, check=False)
    try:
        found = leftovers(before, team.dirs, mark, key, wait_s=0.2)
        assert any(str(planted) in line for line in found), found
        assert any("process" in line and str(proc.pid) in line for line in found), found
        if ipc.returncode == 0:  # ipcmk may be missing
            assert any("SysV IPC" in line for line in found), found
    finally:
        clean_up(before, team.dirs, mark, key)
        proc.wait(10)
    assert not planted.exists()
    assert leftovers(before, team.dirs, mark, key, wait_s=0.2) == []


def test_host_checks_see_a_blocked_writer_and_connections(team: RedTeam) -> None:
    team.start()
    holder = sqlite3.connect(team.bait.db_path, isolation_level=None)
    holder.execute("BEGIN")
    holder.execute("SELECT count(*) FROM sqlite_master").fetchall()
    try:
        problem = team.bait.db_lock_problem(wait_s=0.3)
        assert problem is not None and "locked" in problem
    finally:
        holder.execute("COMMIT")
        holder.close()
    assert team.bait.db_lock_problem() is None

    import socket

    before = team.bait.connection_counts()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(str(team.bait.sock_path))
        s.sendall(b"selftest")
    deadline = time.monotonic() + 5
    while not team.bait.new_connections(before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "unix socket" in " ".join(team.bait.new_connections(before))


def test_attacks_are_well_formed() -> None:
    names = [a.name for a in ATTACKS]
    assert len(names) == len(set(names)) >= 30
    routes = {a.route for a in ATTACKS}
    assert {"forged_verdict", "read_ground_truth", "feedback_leak", "host_harm"} <= routes
    assert {"resource_escape", "trusted_process", "cross_run"} <= routes
    assert any(a.quick for a in ATTACKS)
    assert any(a.attempts > 1 for a in ATTACKS) and any(a.concurrent for a in ATTACKS)


# -- the second round's harness checks ---------------------------------------------------------
class _HungryEvaluator:
    """Allocates (and touches) ``mb`` MiB, frees it, then fails: only a peak measurement sees
    the memory."""

    def __init__(self, mb: int) -> None:
        self.mb = mb

    def evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None = None
    ) -> SingleFeedback:
        block = bytearray(self.mb << 20)
        for at in range(0, len(block), 4096):
            block[at] = 1
        del block
        return SingleFeedback(execution="ran", final_decision=False)


def test_the_trusted_peak_memory_is_measured_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_redteam, "TRUSTED_RSS_MB", 64.0)
    with RedTeam(evaluators={"humaneval": _HungryEvaluator(160)}) as hungry:
        result = hungry.run(BY_NAME["early_os_exit"])
    assert result.trusted_peak_rss_mb >= 100, result
    assert not result.contained and "peak memory grew" in result.detail, result.detail
    assert result.to_dict()["trusted_peak_rss_mb"] == result.trusted_peak_rss_mb


class _FingerprintEvaluator:
    """Fails with ``n`` error fingerprints."""

    def __init__(self, n: int) -> None:
        self.n = n

    def evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None = None
    ) -> SingleFeedback:
        fps = tuple(f"E{i}Error: x" for i in range(self.n))
        return SingleFeedback(execution="ran", final_decision=False, error_fingerprints=fps)


def test_error_fingerprints_are_bounded() -> None:
    with RedTeam(evaluators={"humaneval": _FingerprintEvaluator(3)}) as few:
        assert few.run(BY_NAME["early_os_exit"]).contained
    n = _redteam.MAX_FINGERPRINTS + 1
    with RedTeam(evaluators={"humaneval": _FingerprintEvaluator(n)}) as many:
        result = many.run(BY_NAME["early_os_exit"])
    assert not result.contained and f"{n} error fingerprints" in result.detail, result.detail


class _RiddleEvaluator:
    """Accepts code that contains the word its failing feedback names."""

    def __init__(self) -> None:
        self.calls = 0

    def evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None = None
    ) -> SingleFeedback:
        self.calls += 1
        solved = "xyzzy-word" in implementation.files["main.py"]
        return SingleFeedback(
            execution="ran", return_checking="say xyzzy-word", final_decision=solved
        )


def test_adaptive_attacks_see_the_earlier_feedback() -> None:
    riddle = _RiddleEvaluator()
    code = "print(@@FEEDBACK@@)"
    attack = Attack("riddle", "forged_verdict", "humaneval", "humaneval/0", "t", code, attempts=3)
    with RedTeam(evaluators={"humaneval": riddle}) as team:
        result = team.run(attack)
    assert riddle.calls == 2 and result.final_decision is True and not result.contained


def test_left_run_directories_are_found_and_removed(team: RedTeam) -> None:
    """A run directory holding the marker (unreadable subdirectory included) is reported."""
    team.start()
    mark = "rtmkrundir" + str(os.getpid())
    before = snapshot(team.dirs)
    run_dir = Path(tempfile.mkdtemp(prefix="costeer-sbx-", dir="/tmp"))
    locked = run_dir / "work" / f"locked-{mark}"
    (locked / "inner").mkdir(parents=True)
    locked.chmod(0)
    try:
        assert left_run_dirs(before, team.dirs, mark) == [str(run_dir)]
        assert any("run directories left" in p for p in leftovers(before, team.dirs, mark, -1))
    finally:
        clean_up(before, team.dirs, mark, -1)
    assert not run_dir.exists()
