"""RD-Agent's factor benchmark format as a suite.

A benchmark file is a JSON object mapping task names to entries::

    {"ROC10": {"description": "...", "formulation": "...", "variables": {"$close": "..."},
               "Category": "Momentum", "Difficulty": "Easy", "gt_code": "import pandas ..."}}

``load_suite("path/to/file.json", data="synthetic_tick")`` (or ``suite:`` plus
``suite_options:`` in a spec) builds a :class:`Suite`: every task is a factor task whose
candidate reads the tables its reference reads — ``daily_pv.h5`` (daily bars), ``daily_f.h5``
(fundamentals), ``high_freq.h5`` (1-minute bars); synthetic ones (see
:mod:`._rdagent_inputs`) or the user's own (``data=``, ``daily_f=``, ``high_freq=``) — and
writes ``result.h5`` (RD-Agent's names; ``output_file`` changes it); the hidden ``gt_code`` is
the ground truth (a DataFrame or a Series written to ``result.h5``), category and difficulty
are kept for the benchmark metrics. The contract names the tables a task uses and their
columns. Loading needs PyTables (``pip install 'costeer-lab[hdf5]'``; one line says so when it
is missing); the ``rdagent`` extra adds statsmodels, which some published references import.
Optional per-entry keys of this project: ``scope``, ``acceptance`` (the acceptance rule) and
``output_file``. The same loader reads the full published file.

The scope the contract states is *inferred from the reference* by default (:mod:`._scope`):
the contract names the grouping the ground truth uses and lists its steps — including a
row-order step on the stacked (datetime, instrument) table that reaches other instruments, as
RD-Agent's published Volume&Price ground truths do (scope ``stacked_rows``). An explicit
``scope`` (``time_series``, ``cross_sectional``, ``both``, ``stacked_rows`` or
``elementwise``) wins; when it contradicts the reference the loader warns with
:class:`ScopeMismatchWarning` naming the task (a coder that follows such a contract is
rejected), and the contract then states the declared scope without the reference's steps.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from costeer_lab.errors import InvalidInputError, did_you_mean
from costeer_lab.evaluate._protocol import Evaluator, Runner
from costeer_lab.records import Task, Workspace
from costeer_lab.suites._factor_contract import factor_contract
from costeer_lab.suites._options import whole_number
from costeer_lab.suites._rdagent_inputs import InputOptions, prepare_inputs
from costeer_lab.suites._scope import ScopeMismatchWarning, analyse_scope, scope_conflict
from costeer_lab.suites._suite import Suite

__all__ = ["is_rdagent_document", "rdagent_suite", "task_scope"]

_REQUIRED = ("description", "formulation", "gt_code")


class RDAgentEntry(BaseModel):
    """One task of an RD-Agent benchmark file."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    description: str = Field(min_length=1)
    formulation: str = ""
    variables: dict[str, Any] = Field(default_factory=dict)
    category: str = Field(default="", alias="Category")
    difficulty: str = Field(default="", alias="Difficulty")
    gt_code: str = Field(min_length=1)
    scope: (
        Literal["time_series", "cross_sectional", "both", "stacked_rows", "elementwise"] | None
    ) = None  # inferred from gt_code
    acceptance: Literal["equal", "equal_or_scaled", "equal_or_correlated"] | None = None
    output_file: str | None = None


def is_rdagent_document(doc: Any) -> bool:
    """Whether a parsed JSON document looks like an RD-Agent factor benchmark file.

    Example:
        >>> is_rdagent_document({"A": {"description": "d", "formulation": "f", "gt_code": "x"}})
        True
        >>> is_rdagent_document({"tasks": []})
        False
    """
    if not isinstance(doc, dict) or not doc or "tasks" in doc:
        return False
    return all(isinstance(v, dict) and "gt_code" in v for v in doc.values())


def _entries(doc: dict[str, Any], source: str) -> dict[str, RDAgentEntry]:
    out = {}
    for name, raw in doc.items():
        missing = [k for k in _REQUIRED if k not in raw]
        if missing:
            raise InvalidInputError(f"benchmark file {source}: task {name!r} lacks {missing}")
        try:
            out[name] = RDAgentEntry.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise InvalidInputError(
                f"benchmark file {source}: task {name!r}, {loc}: {err['msg']}"
            ) from None
    return out


def task_scope(
    task: str, declared: str | None, gt_code: str, source: str = "<document>"
) -> tuple[str, list[str]]:
    """The scope a task's contract states and the reference's steps it lists.

    ``declared`` ``None``: the scope inferred from ``gt_code``. A declared scope wins; when it
    contradicts the reference a :class:`ScopeMismatchWarning` names the task and no step is
    listed (the steps would contradict the declared scope).

    Example:
        >>> code = "import pandas as pd\\nd = pd.read_hdf('daily_pv.h5')\\nf = d['$close'].diff(1)"
        >>> scope, steps = task_scope("D1", None, code)
        >>> scope, steps[0][:35]
        ('stacked_rows', 'diff(1) of the "$close" values over')
    """
    analysis = analyse_scope(gt_code)
    if declared is None:
        return analysis.scope, analysis.describe()
    conflict = scope_conflict(declared, analysis)
    if conflict is None:
        return declared, analysis.describe()
    warnings.warn(
        ScopeMismatchWarning(
            f"benchmark file {source}: task {task!r} declares scope {declared!r}, but {conflict}; "
            "a coder that follows this contract is rejected (drop the task's 'scope' to let "
            "the contract state what the reference does)"
        ),
        stacklevel=3,
    )
    return declared, []


def rdagent_suite(
    doc: dict[str, Any],
    *,
    source: str = "<document>",
    name: str = "rdagent",
    data: str = "synthetic",
    daily_f: str | Path | None = None,
    high_freq: str | Path | None = None,
    n_instruments: int = 30,
    n_days: int = 250,
    seed: int = 0,
    hf_days: int = 10,
    hf_minutes: int = 240,
    tasks: list[str] | None = None,
    output_file: str = "result.h5",
    cache_dir: str | Path | None = None,
    evaluator_runner: str | Runner | None = None,
) -> Suite:
    """A :class:`Suite` of an RD-Agent benchmark document (see the module docstring).

    Args:
        doc: the parsed JSON file.
        source: where it came from (for error messages).
        name: the suite name.
        data: ``"synthetic"``, ``"synthetic_tick"`` or the path of the user's own daily_pv
            table (``.h5`` or ``.parquet``).
        daily_f: the path of the user's own ``daily_f.h5`` (default: synthetic fundamentals).
        high_freq: the path of the user's own ``high_freq.h5`` (default: synthetic minute bars).
        n_instruments, n_days, seed: size and seed of the synthetic panel.
        hf_days, hf_minutes: days (the last ones of the panel) and bars per day (2 to 240) of
            the synthetic minute bars.
        tasks: load only these tasks (default all); only the tables they read are generated.
        output_file: the file candidates write (``result.h5``; a task's ``output_file`` wins).
        cache_dir: where generated data goes (default the ``cache_dir`` setting).
        evaluator_runner: default runner of :meth:`Suite.evaluator`.

    Example:
        >>> doc = {"ROC1": {"description": "1-day return", "formulation": "$close/Ref($close,1)",
        ...        "Category": "Momentum", "Difficulty": "Easy", "gt_code": "..."}}
        >>> s = rdagent_suite(doc, n_instruments=3, n_days=10,
        ...                   cache_dir=__import__("tempfile").mkdtemp())
        >>> s.task("ROC1").category, s.task("ROC1").extra["output_file"], sorted(s.inputs)
        ('Momentum', 'result.h5', ['daily_pv.h5'])
    """
    if not is_rdagent_document(doc):
        raise InvalidInputError(
            f"benchmark file {source}: expected a JSON object mapping task names to entries "
            f"with {list(_REQUIRED)}"
        )
    entries = _entries(doc, source)
    if tasks is not None:
        unknown = [t for t in tasks if t not in entries]
        if unknown:
            raise InvalidInputError(
                f"benchmark file {source}: no task {unknown[0]!r}; "
                + did_you_mean(str(unknown[0]), list(entries))
            )
        entries = {t: entries[t] for t in entries if t in tasks}
    if cache_dir is None:
        from costeer_lab.settings import get_settings

        cache_dir = get_settings().cache_dir
    options = InputOptions(
        data=data,
        daily_f=None if daily_f is None else str(daily_f),
        high_freq=None if high_freq is None else str(high_freq),
        n_instruments=n_instruments,
        n_days=n_days,
        seed=seed,
        hf_days=whole_number("rdagent", "hf_days", hf_days, minimum=1),
        hf_minutes=whole_number("rdagent", "hf_minutes", hf_minutes, minimum=2, maximum=240),
    )
    prepared = prepare_inputs({n: e.gt_code for n, e in entries.items()}, options, cache_dir)
    inputs = prepared.paths
    suite_tasks = []
    for task_name, e in entries.items():
        out = e.output_file or output_file
        scope, steps = task_scope(task_name, e.scope, e.gt_code, source)
        reads = prepared.reads[task_name]
        files = {f: prepared.columns[f] for f in reads}
        extra: dict[str, Any] = {
            "family": "factor",
            "input_file": reads[0],
            "input_files": list(reads),
            "output_file": out,
            "output_column": task_name,
            "scope": scope,
            "reference_steps": steps,
            "field_prefix": "$",
            "contract": factor_contract(
                task_name, reads[0], out, scope, dollar=True, steps=steps, files=files
            ),
        }
        if e.acceptance is not None:
            extra["acceptance"] = e.acceptance
        variables = {str(k): str(v) for k, v in e.variables.items()}
        suite_tasks.append(
            Task(
                id=task_name,
                name=task_name,
                description=e.description,
                formulation=e.formulation,
                variables=variables,
                category=e.category,
                difficulty=e.difficulty,
                extra=extra,
            )
        )
    gts = {n: Workspace({"main.py": e.gt_code}) for n, e in entries.items()}

    def evaluator(**kwargs: Any) -> Evaluator:
        from costeer_lab.evaluate._factor import FactorEvaluator

        kwargs.setdefault("inputs", inputs)
        kwargs.setdefault("output_file", output_file)
        if evaluator_runner is not None:
            kwargs.setdefault("runner", evaluator_runner)
        return FactorEvaluator(**kwargs)

    return Suite(
        name,
        suite_tasks,
        gts,
        evaluator,
        inputs=inputs,
        splits={"train": [], "test": list(gts)},
        instructions=factor_contract(
            "<factor name>", "daily_pv.h5", output_file, "both", True, files=prepared.columns
        ),
    )
