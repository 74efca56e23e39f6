"""Following a running experiment: live rows from the step records equal the final results,
and the monitor redraws as steps are committed."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pandas as pd

from costeer_lab.experiment import live_results, load_results, run_experiment
from costeer_lab.viz import ResultsDashboard, follow_experiment

SPEC = {
    "name": "monitor",
    "suite": "humaneval",
    "suite_options": {"limit": 4},
    "arms": [{"name": "none"}, {"name": "v2", "rag": "v2"}],
    "max_loop": 3,
    "parallelism": {"executor": "serial"},
}
KEY = ["arm", "seed", "task_id", "attempt"]


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(KEY).reset_index(drop=True)


def test_monitor_follows_a_run_to_its_final_results(tmp_path: Path) -> None:
    out = tmp_path / "run"
    monitor = follow_experiment(out, interval_s=None, n_boot=20)
    assert monitor.poll() is False and monitor.dashboard is None
    seen: list[int] = []
    worker = threading.Thread(target=run_experiment, args=(SPEC, out), kwargs={"progress": False})
    worker.start()
    while worker.is_alive():
        monitor.poll()
        seen.append(monitor.n_rows)
        time.sleep(0.05)
    worker.join()
    monitor.poll()
    final = load_results(out)
    assert monitor.finished and monitor.n_rows == len(final) > 0
    assert seen == sorted(seen)  # rows only ever arrive
    assert isinstance(monitor.dashboard, ResultsDashboard)
    assert "<b>finished</b>: " in monitor.status.value
    assert monitor.status.value in monitor._repr_mimebundle_()["text/html"]
    live = _sorted(live_results(out))
    assert list(live.columns) == list(final.columns)
    # timings are rounded differently; a task's category/difficulty are filled in at the end
    later = ["duration_s", "coder_s", "evaluate_s", "category", "difficulty"]
    pd.testing.assert_frame_equal(
        live.drop(columns=later), _sorted(final).drop(columns=later), check_dtype=False
    )


def test_the_background_thread_stops_when_the_run_is_finished(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_experiment({**SPEC, "max_loop": 1}, out, progress=False)
    monitor = follow_experiment(out, interval_s=0.05, n_boot=20)
    deadline = time.monotonic() + 60
    while not monitor.finished and time.monotonic() < deadline:
        time.sleep(0.05)
    monitor.stop()
    assert monitor.finished and monitor.n_rows == len(load_results(out))
    monitor.dashboard.metric.value = "hit rate"  # type: ignore[union-attr]
    assert monitor.dashboard is not None and monitor.dashboard.renders == 2
