"""Adaptation substitutes windows only: positive whole numbers that both tasks use as windows.

Epsilons (``1e-12``), floats (``0.5``), quantile levels (``0.96633``) and exponents (``2``) are
never rewritten; each such rewrite once crashed or silently changed a borrowed implementation.
"""

from __future__ import annotations

import itertools

from costeer_lab.coders._adapt import adapt_code, derive_adaptation
from costeer_lab.coders._windows import window_values
from costeer_lab.records import Task
from costeer_lab.suites._alpha158 import make_task
from costeer_lab.suites._alpha158_code import ground_truth_code
from costeer_lab.suites._alpha158_defs import FEATURES, WINDOWS

SRC = "Power(Mean($close, 20), 2)/(Std($close, 20)+1e-12) + Quantile($close, 20, 0.96633)*0.5"
DST = "Power(Mean($close, 10), 3)/(Std($close, 10)+1e-9) + Quantile($close, 10, 0.8)*0.25"
CODE = (
    "m = x.rolling(20, min_periods=1).mean() ** 2\n"
    "s = x.rolling(20, min_periods=1).std() + 1e-12\n"
    "q = x.rolling(20, min_periods=1).quantile(0.96633) * 0.5\n"
    "y = m / s + q + 20.0\n"
)


def test_only_the_window_is_substituted() -> None:
    ad = derive_adaptation(
        Task("s", "A", "", formulation=SRC), Task("t", "B", "", formulation=DST)
    )
    assert dict(ad.numbers) == {20.0: "10"}
    assert adapt_code(CODE, ad) == CODE.replace("rolling(20", "rolling(10")


def test_constants_aligned_with_other_constants_are_left_alone() -> None:
    """The measured crashes: ``1e-12 → 3`` and ``5 → 0.96633`` from aligning two formulas."""
    src = Task("s", "A", "", formulation="Mean($close, 5)/($close+1e-12)")
    dst = Task("t", "B", "", formulation="Mean($close, 0.96633)/($close+3)")
    ad = derive_adaptation(src, dst)
    assert not ad.numbers
    code = "y = x.rolling(5).mean() / (x + 1e-12)\n"
    assert adapt_code(code, ad) == code


def test_window_values_of_a_formula() -> None:
    task = Task("t", "X", "", formulation=SRC + " + Ref($close, 1) + $close*2 + Log($volume+1)")
    assert window_values(task) == {20, 1}


def test_window_values_named_by_the_public_task_fields() -> None:
    named = Task(
        "t",
        "X",
        "Mean over the last 30 trading days; 0.5 weight",
        variables={"d": "window length: 15 trading days", "q": "quantile level 0.9"},
        extra={"window": 7},
    )
    assert window_values(named) == {7, 15, 30}
    assert window_values(Task("t", "HumanEval/12", "return x**2 + 3")) == frozenset()


def test_function_task_names_with_numbers_give_no_substitution() -> None:
    src, dst = Task("h/12", "HumanEval/12", ""), Task("h/13", "HumanEval/13", "")
    assert not derive_adaptation(src, dst).numbers


def test_alpha158_adaptations_only_ever_map_windows() -> None:
    tasks = [make_task(s) for s in FEATURES if s.window in (0, 5, 10)]
    allowed = {float(w) for w in WINDOWS} | {1.0}
    for a, b in itertools.permutations(tasks, 2):
        ad = derive_adaptation(a, b)
        bad = {k: v for k, v in ad.numbers.items() if k not in allowed or float(v) not in allowed}
        assert not bad, (a.name, b.name, bad)


def test_alpha158_same_family_adaptation_reproduces_the_reference() -> None:
    """A window change of a reference script is exact for every rolling family (this is why
    a split that keeps the same family in train and test is easy for the offline coder)."""
    by_name = {s.name: s for s in FEATURES}
    for spec in FEATURES:
        if spec.window != 20:
            continue
        target = by_name[f"{spec.family}10"]
        ad = derive_adaptation(make_task(spec), make_task(target))
        assert adapt_code(ground_truth_code(spec), ad) == ground_truth_code(target), spec.name


def test_a_name_carries_a_window_only_for_a_task_without_formulation() -> None:
    assert window_values(Task("a", "MA5", "")) == {5}
    assert window_values(Task("a", "alpha002", "", formulation="-1 * rank($volume)")) == set()
    fn = Task("h", "f12", "", extra={"prompt": "def f12():\n", "entry_point": "f12"})
    assert window_values(fn) == set()


def test_a_shift_is_never_mapped_to_a_window_length() -> None:
    """WVMA5 → CNTN10 once mapped Ref's ``1`` to ``10`` and made ``min_periods=10`` crash."""
    src = make_task(next(s for s in FEATURES if s.name == "WVMA5"))
    dst = make_task(next(s for s in FEATURES if s.name == "CNTN10"))
    ad = derive_adaptation(src, dst)
    assert 1.0 not in ad.numbers
    roc = derive_adaptation(
        Task("a", "ROC5", "", formulation="Ref($close, 5)/$close"),
        Task("b", "ROC10", "", formulation="Ref($close, 10)/$close"),
    )
    assert dict(roc.numbers) == {5.0: "10"}  # a shift to a shift
