"""Documented behaviour of the pattern memory, pinned: a pattern's id is its problem type and
template (the same code for another problem type is another pattern), and a pattern without a
recorded outcome has no success rate (``None``, not 0.0)."""

from __future__ import annotations

from costeer_lab.memory import PatternMemory

CODE = "def f(xs):\n    return sum(xs)\n"


def test_the_same_code_for_two_problem_types_is_two_patterns() -> None:
    memory = PatternMemory(":memory:", embedder="hashing")
    totals = memory.store_pattern("sum of a list", CODE)
    scores = memory.store_pattern("total score", CODE)
    assert totals != scores and len(memory) == 2
    assert memory.store_pattern("sum of a list", CODE) == totals  # same type and template
    assert len(memory) == 2


def test_no_outcome_yet_is_no_success_rate() -> None:
    memory = PatternMemory(":memory:", embedder="hashing")
    pid = memory.store_pattern("sum of a list", CODE)
    assert memory.stats(pid).success_rate is None
    assert memory.record_outcome(pid, success=False).success_rate == 0.0
    assert memory.record_outcome(pid, success=True).success_rate == 0.5
