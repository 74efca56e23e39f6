"""Settings of the evaluators (thresholds, time limits, the optional LLM critic).

The ``evaluator`` section of :class:`costeer_lab.settings.Settings` (environment names like
``COSTEER_LAB_EVALUATOR__EQUAL_VALUE_THRESHOLD=0.95``).

Example:
    >>> EvaluatorSettings().equal_value_threshold
    0.99
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["EvaluatorSettings"]


class EvaluatorSettings(BaseModel):
    """Thresholds and limits of :class:`FactorEvaluator`, :class:`PythonFunctionEvaluator`
    and :class:`LLMCodeCritic`.

    Factor decision (with a ground truth): success when ``equal_value_ratio >
    equal_value_threshold``, or when ``index_overlap >= index_overlap_threshold``, the finite
    coverage of the ground truth is ``>= index_overlap_threshold``, the candidate is usable on a
    share ``>= ic_date_coverage_threshold`` of the scored dates and both mean IC and mean rank
    IC are ``> ic_threshold`` — unless the output equals the ground truth shifted by one day.
    (That is the ``equal_or_correlated`` acceptance rule; the default rule is
    ``factor_acceptance``, and every rule also requires the truth's NaN pattern.) The means run
    over every date where the truth has ``min_ic_instruments`` finite values that are not all
    equal; a date where the candidate is constant or too sparse counts as IC 0.

    Disclosure (``feedback_detail``; the table is in ``docs/evaluation.md``): ``verdict`` —
    pass/fail and format failures; ``diagnostics`` — factor metrics against the truth only as
    one-decimal bands next to their thresholds, no truth-dependent counts, sampled differing
    rows with the candidate's value only; python functions: the failing call and the
    candidate's result, except where the expected result is guessable (a bool, ``None``, a
    yes/no word), which gets one fixed line; ``full`` — everything, precisely, with expected
    values. ``SingleFeedback.details`` always keeps the precise metrics.
    """

    #: Absolute tolerance of the equal-value check ``|candidate - truth| <= atol + rtol*|truth|``
    #: for a factor of unit size or more; a smaller factor gets ``atol * m``, ``m`` the median
    #: of the truth's finite nonzero ``|values|``. A fixed 1e-6 made any factor of size 1e-10 (a
    #: turnover over a market value in raw units) equal to its negation, lag and all zeros. The
    #: median (not the mean or the largest value) so that a few huge values cannot lift a tiny
    #: factor's scale; zeros left out so that a sparse factor keeps its values' scale; from the
    #: truth only, so that nothing a candidate writes loosens its own test. The same tolerance
    #: decides every equality of a comparison (equal values, the one-day shift, the mismatch
    #: classes, the flat dates the IC does not score); see ``docs/evaluation.md``.
    equal_value_atol: float = Field(default=1e-6, ge=0)
    #: Relative tolerance of the equal-value check.
    equal_value_rtol: float = Field(default=1e-5, ge=0)
    #: Share of ground-truth rows with equal values above which the factor succeeds.
    equal_value_threshold: float = Field(default=0.99, ge=0, le=1)
    #: Minimum share of ground-truth index rows present in the candidate for the IC path.
    index_overlap_threshold: float = Field(default=0.99, ge=0, le=1)
    #: Mean per-date Pearson IC and Spearman rank IC above which the IC path succeeds.
    ic_threshold: float = Field(default=0.99, ge=-1, le=1)
    #: Minimum number of finite values on a date: the truth needs this many for the date to be
    #: scored by the mean IC, the candidate (paired with the truth) for it to be usable there.
    min_ic_instruments: int = Field(default=3, ge=2)
    #: Share of the scored dates (the truth has ``min_ic_instruments`` finite values there, not
    #: all equal) where the candidate must be usable — at least ``min_ic_instruments`` finite
    #: values, not constant — for the correlation path to accept it. An unusable date also
    #: counts as IC 0 in the means: a factor right on one date and constant on the others fails.
    ic_date_coverage_threshold: float = Field(default=0.99, ge=0, le=1)
    #: Default acceptance rule of factor tasks (a task's ``extra["acceptance"]`` wins):
    #: ``"equal"`` — only the equal-value ratio; ``"equal_or_scaled"`` (default) — equal values,
    #: or a per-date affine transform of the truth (mean IC >= ``scaled_ic_threshold``: a
    #: rescaled or demeaned factor; a wrong window is not one, however long the panel);
    #: ``"equal_or_correlated"`` — equal values, or mean IC and rank IC > ``ic_threshold``.
    factor_acceptance: Literal["equal", "equal_or_scaled", "equal_or_correlated"] = (
        "equal_or_scaled"
    )
    #: Mean per-date IC from which the ``equal_or_scaled`` rule takes the candidate for an affine
    #: transform of the truth.
    scaled_ic_threshold: float = Field(default=0.999999, ge=-1, le=1)
    #: Share of the truth's missing (NaN) rows where the candidate must be missing too (a
    #: candidate that fills suspended days with 0 fails; missing rows count as NaN).
    nan_match_threshold: float = Field(default=0.99, ge=0, le=1)
    #: How +-inf in the truth and in the candidate's output are treated: ``"as_nan"`` (default)
    #: — as missing values; ``"exact"`` — as values (an infinity equals one of the same sign).
    factor_infinite: Literal["as_nan", "exact"] = "as_nan"
    #: Wall-time limit of one candidate run (seconds).
    factor_timeout_s: float = Field(default=60.0, gt=0)
    #: Memory limit of one candidate run (MiB).
    memory_mb: int = Field(default=4096, gt=0)
    #: Wall-time limit of one HumanEval-style test run (seconds).
    pyfunc_timeout_s: float = Field(default=10.0, gt=0)
    #: Libraries a factor candidate may import besides the standard library (with what they
    #: require); every other installed package is invisible to it (see the sandbox).
    factor_packages: tuple[str, ...] = ("numpy", "pandas", "pyarrow", "tables", "statsmodels")
    #: Libraries a HumanEval-style candidate may import (their contract: the standard library).
    pyfunc_packages: tuple[str, ...] = ()
    #: Characters of stdout/stderr kept in the ``execution`` section.
    max_feedback_chars: int = Field(default=4000, ge=200)
    #: Most rows of a candidate's factor output that are decoded (Parquet files announcing
    #: more are refused unread; with a ground truth the cap is 4x its rows + 10,000).
    max_output_rows: int = Field(default=5_000_000, gt=0)
    #: How much feedback tells the coder about the hidden checks. ``"verdict"``: pass/fail and
    #: whether the code ran (load errors of the candidate's own code are still named; factor
    #: checks keep the decision line and format failures). ``"diagnostics"`` (default): also
    #: which hidden test call failed, its arguments and what the candidate returned or
    #: raised — never an expected value nor the assertion's text, and not the call when its
    #: expected result is a bool, None or a yes/no word (it would be the answer); factor
    #: metrics against the truth in one-decimal bands (a precise IC is an oracle an adaptive
    #: coder climbs). ``"full"`` (as RD-Agent, for researchers): also the failing assertion
    #: statement, its line and message, which may contain the expected value, and precise
    #: factor metrics and truth values.
    feedback_detail: Literal["verdict", "diagnostics", "full"] = "diagnostics"
    #: Whether ``Suite.evaluators()`` adds the LLM code critic (off by default).
    critic_enabled: bool = False
    #: Chat model used by the LLM code critic.
    critic_model: str = "gpt-4o-mini"
    #: Characters of code sent to the critic.
    critic_max_code_chars: int = Field(default=12000, ge=100)
