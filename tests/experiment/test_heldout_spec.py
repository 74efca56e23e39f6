"""The demo spec (held-out formula families): no target's formula family is in the seed
knowledge."""

from __future__ import annotations

from pathlib import Path

from costeer_lab.experiment._preflight import select_tasks
from costeer_lab.experiment._spec import load_spec
from costeer_lab.suites import alpha158_suite

SPEC = Path(__file__).resolve().parents[2] / "data" / "specs" / "demo.yaml"


def test_the_held_out_family_spec_seeds_no_target_family(tmp_path: Path) -> None:
    spec = load_spec(SPEC)
    held = spec.suite_options["holdout_families"]
    suite = alpha158_suite(4, 30, seed=7, cache_dir=tmp_path, holdout_families=held)
    _, seeds = select_tasks(suite, spec)
    families: set[str] = set()
    for stage in spec.stages:
        one = spec.model_copy(update={"tasks": stage.tasks, "stages": []})
        targets, _ = select_tasks(suite, one)
        assert len(targets) == 10
        families |= {t.category for t in targets}
    assert families == set(held)
    assert not families & {t.category for t in seeds}
    assert len(seeds) == 2 * (29 - 10)
