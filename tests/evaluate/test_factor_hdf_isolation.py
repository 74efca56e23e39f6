"""An HDF5 output is decoded in the sandbox: a pickled object column never runs in the evaluator.

pandas stores object columns of HDF5 files as pickles, and reading them unpickles. A candidate
whose ``result.h5`` holds an object that writes a file when unpickled must not reach the host:
the decoder runs in the sandbox, so the write (if any) lands in the sandbox's private view.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.evaluate import FactorEvaluator
from costeer_lab.records import Workspace
from costeer_lab.suites import load_suite

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "rdagent_factor_example.json"

ATTACK = """\
import warnings
import pandas as pd

warnings.simplefilter("ignore")
df = pd.read_hdf("daily_pv.h5", key="data")


class Boom:
    def __reduce__(self):
        return (exec, ("open({canary!r}, 'w').write('unpickled')",))


values = pd.Series([Boom()] * len(df), index=df.index, dtype=object)
values.to_frame("ROC10").to_hdf("result.h5", key="data", format="fixed")
"""


@pytest.mark.timeout(120)
def test_a_pickled_object_column_is_never_unpickled_by_the_evaluator(tmp_path: Path) -> None:
    suite = load_suite(EXAMPLE, n_instruments=4, n_days=30, cache_dir=tmp_path / "cache")
    canary = tmp_path / "canary.txt"
    task = suite.task("ROC10")
    gt = suite.ground_truth(task.id)
    ev = suite.evaluator(gt_runner="inprocess")  # candidates (and their decoding): sandbox
    assert isinstance(ev, FactorEvaluator)
    try:
        fb = ev.evaluate(task, Workspace({"main.py": ATTACK.format(canary=str(canary))}), gt)
        assert fb.details["ran"] is True, fb.execution
        assert fb.final_decision is False
        assert not canary.exists()
        text = fb.return_checking or ""
        assert "[FAIL]" in text
        # the same object column, decoded by a trusted in-process runner, would have run
        trusting = suite.evaluator(runner="inprocess")
        assert isinstance(trusting, FactorEvaluator)
        trusting.evaluate(task, Workspace({"main.py": ATTACK.format(canary=str(canary))}), gt)
        assert canary.read_text() == "unpickled"
    finally:
        ev.close()
