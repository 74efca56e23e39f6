"""Ground-truth relevance of retrieved items: hand-built hits and misses per query kind."""

from __future__ import annotations

from costeer_lab.knowledge import (
    current_causes,
    fix_relevant,
    relevance_components,
    tasks_related,
    trace_relevant,
)
from costeer_lab.records import Knowledge, SingleFeedback, Task

from ._kb_helpers import code, crash, factor, ok, wrong

MA10 = factor("MA10", "Mean($close, 10)/$close", "average close over 10 days", "ma")
MA20 = factor("MA20", "Mean($close, 20)/$close", "average close over 20 days", "ma")
STD10 = factor("STD10", "Std($close, 10)/$close", "deviation of close", "std")
VMA10 = factor("VMA10", "Mean($volume, 10)/($volume+1e-12)", "volume average", "vma")
KMID = factor("KMID", "($close-$open)/$open", "body of the candle", "kbar")
KLEN = factor("KLEN", "($high-$low)/$open", "length of the candle", "kbar")
KUP = factor("KUP", "($high-Greater($open, $close))/$open", "upper shadow", "kbar")


def _he(n: int, prompt_words: str, signature: str) -> Task:
    return Task(f"he/{n}", f"f{n}", prompt_words, signature, category="python_function")


def test_same_operator_is_a_hit_disjoint_operators_a_miss() -> None:
    assert tasks_related(MA20, MA10) and tasks_related(VMA10, MA10)  # op:mean shared
    # STD10 shares the field close and nothing else: families share fields, that is no hit
    assert not tasks_related(STD10, MA10)
    assert relevance_components(MA10) >= {"op:mean"}
    assert not any(c.startswith(("field:", "category:")) for c in relevance_components(MA10))


def test_operator_free_tasks_relate_through_fields_only_to_each_other() -> None:
    assert tasks_related(KLEN, KMID)  # both plain field arithmetic sharing $open
    assert not tasks_related(KUP, KMID)  # KUP has an operator (max): another kind of task
    assert not tasks_related(MA10, KMID)


def test_humaneval_components_are_not_trivial() -> None:
    """The shared category and annotated types never relate two HumanEval tasks; operation
    words of the prompt do."""
    a = _he(1, "Return the sum of the digits of n.", "def f1(n: int) -> int:")
    b = _he(2, "Count the digits of n that are odd.", "def f2(n: int) -> int:")
    c = _he(3, "Return the longest string of the list.", "def f3(xs: List[str]) -> str:")
    d = _he(4, "Return the shortest string of the list.", "def f4(xs: List[str]) -> str:")
    assert tasks_related(a, b)  # op:digits
    assert not tasks_related(c, a)
    assert not tasks_related(d, c)  # same types and category only


def test_error_fix_of_the_same_fingerprint_is_a_hit() -> None:
    now = crash("KeyError: 'close'")
    same = crash("KeyError: 'open'", path="/other/main.py")  # masked: the same fingerprint
    other = crash("ZeroDivisionError: division by zero")
    assert current_causes(now) == current_causes(same)
    (fp,) = current_causes(now)
    assert fix_relevant(fp, now)
    assert not fix_relevant(next(iter(current_causes(other))), now)
    assert not fix_relevant(fp, None) and not fix_relevant(fp, ok())


def _trace(fb: SingleFeedback, text: str = "x = 1") -> Knowledge:
    return Knowledge(MA10, code(text), fb, id=f"trace:{text}")


def test_former_traces_own_last_failure_and_other_causes_are_misses() -> None:
    now = crash("KeyError: 'close'")
    # the task's own last failure came back (also an identical repeat of it): no hit
    assert not trace_relevant(_trace(now), now)
    assert not trace_relevant(_trace(crash("KeyError: 'close'")), now)
    # an earlier attempt of the same task with a different cause: miss
    assert not trace_relevant(_trace(crash("ZeroDivisionError: division by zero")), now)
    assert not trace_relevant(_trace(wrong(0.2)), now)  # ran but wrong: no error cause
    # an earlier attempt that hit the same cause with other code (another failure text): hit
    earlier = crash("KeyError: 'open'", path="/tmp/ws/other.py")
    assert trace_relevant(_trace(earlier, "y = 2"), now)
    assert not trace_relevant(_trace(earlier), None)  # no current failure: nothing to match
