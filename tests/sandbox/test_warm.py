"""The warm-up of waiting sandbox children (``_warm.py``): interruptible, side-effect free,
and never billed to the run that follows."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from costeer_lab import Workspace
from costeer_lab.evaluate import Limits, Sandbox, SandboxSettings
from costeer_lab.sandbox._warm import run_steps, warm_up_steps


def test_steps_stop_as_soon_as_asked() -> None:
    total = sum(1 for _ in warm_up_steps())
    assert total >= 5  # small steps: a request never waits for the whole warm-up
    for stop_at in (1, 3, total):
        asked: list[int] = []

        def stop(asked: list[int] = asked, stop_at: int = stop_at) -> bool:
            asked.append(1)
            return len(asked) >= stop_at

        run_steps(stop, rounds=2)
        assert len(asked) == stop_at


def test_warm_up_leaves_no_state_behind(tmp_path: os.PathLike[str]) -> None:
    """Global random state, pandas options, open files, threads of Python and the working
    directory are the same before and after (checked in a fresh interpreter)."""
    script = textwrap.dedent(
        """
        import os, threading
        import numpy as np, pandas as pd
        from costeer_lab.sandbox._warm import run_steps

        def snapshot():
            return (repr(np.random.get_state()[1][:8]), pd.get_option("display.max_rows"),
                    sorted(os.listdir(".")), sorted(os.listdir("/proc/self/fd")),
                    threading.active_count(), repr(np.geterr()))

        np.random.seed(7)
        before = snapshot()
        run_steps(lambda: False, rounds=2)
        assert snapshot() == before, (snapshot(), before)
        print("same")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and out.stdout.strip() == "same", out.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="spares warm up only as root")
def test_a_run_is_billed_only_its_own_cpu_time() -> None:
    """The spare's warm-up happens in the run's own process before the request comes; the
    reported CPU time (and the CPU limit) must not include it.

    The spares here warm up for many rounds, so the warm-up costs far more CPU than the run
    (about 0.5 s against 10-30 ms): were it billed, the figure would be off by a wide margin
    on any machine, not by a few milliseconds of noise."""
    rounds = 40
    run_steps(lambda: False)  # imports and first calls, so the next figure is the work alone
    start = time.process_time()
    run_steps(lambda: False, rounds=rounds)
    warm_cpu = time.process_time() - start
    for warm in (True, False):
        settings = SandboxSettings(warm_spares=warm, warm_up_rounds=rounds)
        with Sandbox(Limits(wall_time_s=30, cpu_time_s=1), settings=settings) as sandbox:
            sandbox.start()
            time.sleep(2 * warm_cpu + 0.5)  # the spare finishes its warm-up on an idle core
            result = sandbox.run(Workspace({"main.py": "print(1)"}))
        assert result.ok, result.describe()
        assert result.cpu_time_s < warm_cpu / 3, (warm, result.cpu_time_s, warm_cpu)
