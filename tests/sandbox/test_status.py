"""How a run's outcome becomes SandboxResult fields (``costeer_lab.sandbox._status``), pure.

The answers are shaped as the worker sends them (``_worker.py``, ``_Worker._finish``); the texts
are those a real run leaves. Which limit was hit comes from the answer, never from stderr.
"""

from __future__ import annotations

import signal
from typing import Any

import pytest

from costeer_lab.sandbox._limits import Limits, SandboxResult
from costeer_lab.sandbox._status import MEMORY_RE, error_text, failure, result, signal_name

LIM = Limits(wall_time_s=2.5, cpu_time_s=3, memory_mb=512, max_processes=16)


def answer(**changes: Any) -> dict[str, Any]:
    """A worker's answer for a clean run under a cgroup, with ``changes``."""
    base: dict[str, Any] = {
        "id": 7,
        "returncode": 0,
        "signal": None,
        "timed_out": False,
        "cpu_limit": False,
        "process_limit_hit": False,
        "memory_exceeded": False,
        "budget": "cgroup-v2",
        "budget_events": {"oom_kill": 0, "pids_max": 0, "memory_peak": 52428800},
        "budget_notes": [],
        "work_area": "tmpfs",
        "output_problems": {},
        "duration_s": 0.25,
        "cpu_s": 0.125,
        "maxrss_kb": 20480,
        "network_isolated": True,
        "isolation": "full",
        "verified": {"level": "full"},
        "error": None,
    }
    base.update(changes)
    return base


def run(
    ans: dict[str, Any],
    *,
    stdout: str = "",
    stderr: str = "",
    stdout_cut: bool = False,
    stderr_cut: bool = False,
    outputs: dict[str, bytes] | None = None,
    problems: list[str] | None = None,
    limits: Limits = LIM,
) -> SandboxResult:
    return result(
        ans,
        stdout=stdout,
        stderr=stderr,
        stdout_cut=stdout_cut,
        stderr_cut=stderr_cut,
        outputs=outputs or {},
        problems=problems or [],
        limits=limits,
    )


def test_a_clean_run_maps_every_field_of_the_answer() -> None:
    r = run(answer(), stdout="1\n", stderr="warn\n", outputs={"o.txt": b"hi"})
    assert r.ok
    assert r.error is None
    assert (r.returncode, r.killed_signal) == (0, None)
    assert (r.stdout, r.stderr, dict(r.outputs)) == ("1\n", "warn\n", {"o.txt": b"hi"})
    assert not (r.timed_out or r.memory_exceeded or r.process_limit_hit or r.output_truncated)
    assert r.network_isolated is True
    assert r.missing_outputs == ()
    assert (r.duration_s, r.cpu_time_s, r.max_rss_mb) == (0.25, 0.125, 20.0)
    assert (r.isolation, r.budget) == ("full", "cgroup-v2")
    assert r.extra == {
        "budget": {
            "mode": "cgroup-v2",
            "events": {"oom_kill": 0, "pids_max": 0, "memory_peak": 52428800},
            "work_area": "tmpfs",
            "notes": [],
        }
    }


def test_numbers_of_the_answer_are_converted() -> None:
    r = run(answer(duration_s=1, cpu_s=2, maxrss_kb=1536, network_isolated=0))
    assert isinstance(r.duration_s, float) and r.duration_s == 1.0
    assert isinstance(r.cpu_time_s, float) and r.cpu_time_s == 2.0
    assert r.max_rss_mb == 1.5
    assert r.network_isolated is False


def test_an_answer_without_the_optional_keys_gets_the_defaults() -> None:
    ans = answer(budget_events=None, budget_notes=None)
    for key in ("memory_exceeded", "budget", "work_area", "isolation"):
        del ans[key]
    r = run(ans)
    assert r.ok
    assert r.memory_exceeded is False
    assert (r.budget, r.isolation) == ("rlimit", "")
    assert r.extra == {
        "budget": {"mode": "rlimit", "events": {}, "work_area": "disk", "notes": []}
    }


def test_budget_counters_and_notes_are_copied() -> None:
    events = {"oom_kill": 0, "pids_max": 0}
    notes = ["no cgroup: rlimits"]
    r = run(answer(budget="rlimit", budget_events=events, budget_notes=notes, work_area="disk"))
    assert r.extra["budget"] == {
        "mode": "rlimit",
        "events": events,
        "work_area": "disk",
        "notes": notes,
    }
    events["oom_kill"] = 1
    notes.append("later")
    assert r.extra["budget"]["events"] == {"oom_kill": 0, "pids_max": 0}
    assert r.extra["budget"]["notes"] == ["no cgroup: rlimits"]


@pytest.mark.parametrize(
    ("stdout_cut", "stderr_cut", "truncated"),
    [(False, False, False), (True, False, True), (False, True, True), (True, True, True)],
)
def test_output_is_truncated_when_either_stream_was_cut(
    stdout_cut: bool, stderr_cut: bool, truncated: bool
) -> None:
    r = run(answer(), stdout_cut=stdout_cut, stderr_cut=stderr_cut)
    assert r.output_truncated is truncated


def test_the_workers_own_error_is_kept_over_any_limit() -> None:
    text = "sandbox: the run's isolation check failed: mount namespace shared"
    r = run(answer(returncode=71, timed_out=True, memory_exceeded=True, error=text))
    assert r.error == text
    assert r.timed_out and r.memory_exceeded
    assert not r.ok


def test_wall_clock_limit() -> None:
    r = run(answer(returncode=None, signal=signal.SIGKILL, timed_out=True, cpu_limit=True))
    assert r.error == "wall-clock limit of 2.5 s exceeded; the run was killed"
    assert r.timed_out
    assert r.killed_signal == signal.SIGKILL
    assert not r.ok


def test_cpu_limit_is_a_timeout_with_its_own_words() -> None:
    r = run(answer(returncode=None, signal=signal.SIGXCPU, cpu_limit=True))
    assert r.error == "CPU-time limit of 3 s exceeded; the run was killed"
    assert r.timed_out
    assert not r.ok


def test_memory_kill_by_the_kernel_names_the_signal() -> None:
    r = run(
        answer(
            returncode=None, signal=signal.SIGKILL, memory_exceeded=True, process_limit_hit=True
        ),
        stderr="Killed\n",
    )
    assert r.error == (
        "memory limit of 512 MB for the whole run exceeded; the kernel killed it (SIGKILL)"
    )
    assert r.memory_exceeded and r.process_limit_hit
    assert not r.timed_out
    assert not r.ok


def test_memory_kill_of_a_child_process_when_the_main_one_exited() -> None:
    r = run(answer(returncode=1, memory_exceeded=True))
    assert r.error == (
        "memory limit of 512 MB for the whole run exceeded; the kernel killed a process of it"
    )
    assert not r.ok


def test_the_kernels_memory_kill_is_reported_even_after_a_zero_exit() -> None:
    r = run(answer(memory_exceeded=True))
    assert r.error is not None and r.error.startswith("memory limit of 512 MB")
    assert not r.ok


@pytest.mark.parametrize(
    ("budget", "text"),
    [
        ("cgroup-v2", "process limit of 16 for the whole run reached"),
        ("cgroup-v1", "process limit of 16 for the whole run reached"),
        ("rlimit", "process limit of 16 reached"),
    ],
)
def test_process_limit_of_a_failed_run(budget: str, text: str) -> None:
    r = run(
        answer(returncode=1, process_limit_hit=True, budget=budget),
        stderr="BlockingIOError: [Errno 11] Resource temporarily unavailable\n",
    )
    assert r.error == text
    assert r.process_limit_hit
    assert r.budget == budget


def test_process_limit_of_a_run_killed_by_a_signal() -> None:
    r = run(answer(returncode=None, signal=signal.SIGSEGV, process_limit_hit=True))
    assert r.error == "process limit of 16 for the whole run reached"


def test_process_limit_hit_by_a_run_that_still_succeeded_is_no_error() -> None:
    r = run(answer(process_limit_hit=True), outputs={"o.txt": b"x"})
    assert r.process_limit_hit
    assert r.error is None
    assert r.ok


@pytest.mark.parametrize(
    "stderr",
    [
        "Traceback (most recent call last):\n  ...\nMemoryError\n",
        "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 8.00 GiB\n",
        "OSError: [Errno 12] Cannot allocate memory\n",
        "terminate called after throwing an instance of 'std::bad_alloc'\n",
        "RuntimeError: CUDA out of memory\n",
    ],
)
def test_a_reported_memory_error_is_worded_as_unconfirmed(stderr: str) -> None:
    r = run(answer(returncode=1, budget="rlimit"), stderr=stderr)
    assert r.error == (
        "the run reported a memory error that the kernel did not confirm: no process of it was "
        "killed for memory (limit 512 MB of address space per process; exit code 1)"
    )
    assert r.memory_exceeded is False


def test_a_reported_memory_error_under_a_cgroup_names_the_whole_run_bound() -> None:
    r = run(answer(returncode=3), stderr="MemoryError\n")
    assert r.error == (
        "the run reported a memory error that the kernel did not confirm: no process of it was "
        "killed for memory (limit 512 MB for the whole run; each process may also map at most "
        "that much more address space than it had at the start; exit code 3)"
    )
    assert r.memory_exceeded is False


def test_printing_a_memory_error_does_not_fail_a_successful_run() -> None:
    r = run(answer(), stderr="MemoryError\nout of memory\n", outputs={"o.txt": b"x"})
    assert r.error is None
    assert r.ok
    assert not r.memory_exceeded


def test_a_failed_run_without_a_named_reason_has_no_sandbox_error() -> None:
    r = run(answer(returncode=1), stderr="ValueError: bad\n", problems=["o.txt (missing)"])
    assert r.error is None
    assert r.missing_outputs == ("o.txt",)
    assert r.returncode == 1
    assert not r.ok


@pytest.mark.parametrize(
    ("sig", "text"),
    [
        (signal.SIGSEGV, "killed by SIGSEGV"),
        (signal.SIGKILL, "killed by SIGKILL"),
        (200, "killed by signal 200"),
    ],
)
def test_a_signal_is_named(sig: int, text: str) -> None:
    r = run(answer(returncode=None, signal=sig))
    assert r.error == text
    assert r.killed_signal == sig
    assert not r.ok


def test_a_signal_wins_over_a_reported_memory_error_only_when_it_does_not_fail() -> None:
    # returncode None (killed) is a failure: the memory wording comes first
    r = run(answer(returncode=None, signal=signal.SIGABRT), stderr="std::bad_alloc\n")
    assert r.error is not None and r.error.startswith("the run reported a memory error")
    assert r.error.endswith("exit code None)")


def test_missing_and_refused_outputs_of_a_successful_run() -> None:
    problems = ["b.txt (missing)", "big.bin (refused: 300 bytes > cap 10)"]
    r = run(answer(), outputs={"a.txt": b"a"}, problems=problems)
    assert r.error == (
        "missing or refused output file(s): b.txt (missing), big.bin (refused: 300 bytes > cap 10)"
    )
    assert r.missing_outputs == ("b.txt", "big.bin")
    assert dict(r.outputs) == {"a.txt": b"a"}
    assert not r.ok


def test_error_text_order_of_reasons() -> None:
    both = answer(returncode=None, signal=signal.SIGKILL, timed_out=True, cpu_limit=True)
    assert error_text(both, LIM, True, True, "MemoryError", ["x (missing)"]) == (
        "wall-clock limit of 2.5 s exceeded; the run was killed"
    )
    cpu = answer(returncode=None, signal=signal.SIGKILL, cpu_limit=True)
    assert error_text(cpu, LIM, True, True, "", []) == (
        "CPU-time limit of 3 s exceeded; the run was killed"
    )
    mem = answer(returncode=1)
    assert error_text(mem, LIM, True, True, "", []) == (
        "memory limit of 512 MB for the whole run exceeded; the kernel killed a process of it"
    )
    assert error_text(mem, LIM, False, True, "MemoryError", []) == (
        "process limit of 16 for the whole run reached"
    )
    assert error_text(answer(), LIM, False, False, "", []) is None


def test_limits_are_printed_compactly() -> None:
    lim = Limits(wall_time_s=10, cpu_time_s=0.5)
    assert run(answer(timed_out=True), limits=lim).error == (
        "wall-clock limit of 10 s exceeded; the run was killed"
    )
    assert run(answer(cpu_limit=True), limits=lim).error == (
        "CPU-time limit of 0.5 s exceeded; the run was killed"
    )


def test_memory_pattern_is_anchored_to_a_line_start_and_a_word() -> None:
    assert MEMORY_RE.search("x\nMemoryError: boom")
    assert MEMORY_RE.search("pkg.mod._MyMemoryError\n")
    assert not MEMORY_RE.search("print('MemoryError')")
    assert not MEMORY_RE.search("MemoryErrorHandler installed\n")
    assert not MEMORY_RE.search("Cannot allocate\n")


def test_signal_name() -> None:
    assert signal_name(signal.SIGTERM) == "SIGTERM"
    assert signal_name(9) == "SIGKILL"
    assert signal_name(0) == "signal 0"
    assert signal_name(999) == "signal 999"


def test_failure_is_a_failed_result_with_nothing_captured() -> None:
    r = failure("sandbox worker 12 did not answer within 5 s; it was restarted", 5.5)
    assert r == SandboxResult(
        returncode=None,
        stdout="",
        stderr="",
        timed_out=False,
        memory_exceeded=False,
        process_limit_hit=False,
        killed_signal=None,
        output_truncated=False,
        network_isolated=False,
        duration_s=5.5,
        outputs={},
        error="sandbox worker 12 did not answer within 5 s; it was restarted",
    )
    assert not r.ok
    assert (r.isolation, r.budget, r.missing_outputs) == ("", "", ())


def test_missing_output_names_may_contain_spaces() -> None:
    r = run(answer(), problems=["my out.txt (missing)", "a b/c.csv (refused: too big)"])
    assert r.missing_outputs == ("my out.txt", "a b/c.csv")
