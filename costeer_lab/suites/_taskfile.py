"""User task files (JSON or YAML) → :class:`Suite`, validated with errors naming the bad field.

Format (``kind`` picks the evaluator)::

    name: my_factors              # suite name (default: the file stem)
    kind: factor                  # "factor" (FactorEvaluator) or "python_function"
    inputs:                       # factor only: files the candidate gets (relative to the file)
      daily_pv.parquet: data/daily_pv.parquet   # or the word "alpha158" for the synthetic panel
                                  # ("rdagent" / "rdagent_tick": RD-Agent's daily_pv.h5 layout)
    output_file: result.parquet   # factor only: what candidates write (.parquet or .h5)
    splits: {train: [t1], test: [t2]}           # optional
    tasks:
      - id: t1                                  # required, unique
        name: MOM5                              # required
        description: Five-day momentum.         # required
        formulation: Ref($close, 5)/$close      # optional: variables, category, difficulty
        scope: time_series                      # or cross_sectional / both (factor only)
        acceptance: equal_or_scaled             # optional acceptance rule; output_file
        ground_truth: "import pandas as pd ..." # factor: main.py text (or ground_truth_file)
      - id: t2
        name: add
        description: Add two numbers.
        entry_point: add                        # python_function: required
        prompt: "def add(a, b):\\n"               # optional, shown to coders
        tests: "def check(f): assert f(1, 2) == 3"  # hidden; canonical_solution: optional

Beyond the types, the checks of :mod:`~costeer_lab.suites._taskfile_checks` run on load: unique
names, ids and names on one line, file names inside the work directory, and for
``python_function`` an identifier entry point defined by a reference that compiles, and tests
that compile and define ``check(candidate)``. Running each reference against its tests is the
experiment preflight's (:mod:`costeer_lab.experiment._reference_check`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from costeer_lab.errors import InvalidInputError
from costeer_lab.evaluate._protocol import Evaluator
from costeer_lab.records import Task, Workspace
from costeer_lab.suites._document import parse_document, read_utf8
from costeer_lab.suites._factor_contract import factor_contract
from costeer_lab.suites._suite import Suite
from costeer_lab.suites._taskfile_checks import (
    check_entry_point,
    check_file_name,
    check_label,
    check_reference,
    check_tests,
    check_unique_names,
)

__all__ = ["TaskFile", "load_task_file", "parse_error_text", "parse_task_document"]


class TaskEntry(BaseModel):
    """One task of a task file."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    formulation: str = ""
    variables: dict[str, str] = Field(default_factory=dict)
    category: str = ""
    difficulty: str = ""
    scope: Literal["time_series", "cross_sectional", "both"] = "time_series"
    acceptance: Literal["equal", "equal_or_scaled", "equal_or_correlated"] | None = None
    output_file: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    ground_truth: str | None = None
    ground_truth_file: str | None = None
    entry_point: str | None = None
    prompt: str | None = None
    tests: str | None = None
    canonical_solution: str | None = None


class TaskFile(BaseModel):
    """A whole task file."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    kind: Literal["factor", "python_function"] = "factor"
    inputs: dict[str, str] = Field(default_factory=dict)
    output_file: str = "result.parquet"
    splits: dict[str, list[str]] = Field(default_factory=dict)
    tasks: list[TaskEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> TaskFile:
        ids = [t.id for t in self.tasks]
        for i, t in enumerate(self.tasks):
            if ids.index(t.id) != i:
                raise ValueError(f"tasks[{i}].id: duplicate task id {t.id!r}")
            if self.kind == "python_function" and not t.entry_point:
                raise ValueError(f"tasks[{i}].entry_point: required for kind 'python_function'")
            if t.ground_truth is not None and t.ground_truth_file is not None:
                raise ValueError(f"tasks[{i}]: give ground_truth or ground_truth_file, not both")
        check_unique_names([t.name for t in self.tasks])
        self._check_fields()
        for split, members in self.splits.items():
            for j, tid in enumerate(members):
                if tid not in ids:
                    raise ValueError(f"splits.{split}[{j}]: unknown task id {tid!r}")
        return self

    def _check_fields(self) -> None:
        """Labels on one line, file names inside the work directory, and for
        ``python_function`` tasks an identifier entry point, tests defining ``check()`` and a
        reference that compiles and defines the entry point (see ``_taskfile_checks``)."""
        for name in self.inputs:
            check_file_name(name, f"inputs.{name}")
        check_file_name(self.output_file, "output_file")
        for i, t in enumerate(self.tasks):
            check_label(t.id, f"tasks[{i}].id")
            check_label(t.name, f"tasks[{i}].name")
            if t.output_file is not None:
                check_file_name(t.output_file, f"tasks[{i}].output_file")
            if self.kind != "python_function" or t.entry_point is None:
                continue
            check_entry_point(t.entry_point, f"tasks[{i}]", t.id)
            if t.tests is not None:
                check_tests(t.tests, f"tasks[{i}]", t.id)
            parts = _reference_parts(t)
            if parts:
                check_reference(parts, t.entry_point, f"tasks[{i}]", t.id)


def _reference_parts(entry: TaskEntry) -> list[tuple[str, str]]:
    """The fields a ``python_function`` task's inline reference is made of (none when it has
    no inline reference): ``ground_truth``, or ``prompt`` + ``canonical_solution``."""
    if entry.ground_truth is not None:
        return [("ground_truth", entry.ground_truth)]
    if entry.canonical_solution is None:
        return []
    return [("prompt", entry.prompt or ""), ("canonical_solution", entry.canonical_solution)]


def parse_error_text(exc: Exception) -> str:
    """A one-line description of a YAML/JSON parse error: ``line 3, column 7: <problem>``.

    Example:
        >>> import yaml
        >>> try:
        ...     yaml.safe_load("a: [1,\\n")
        ... except yaml.YAMLError as exc:
        ...     parse_error_text(exc)
        "line 2, column 1: expected the node content, but found '<stream end>'"
    """
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return " ".join(str(exc).split())


def _format_error(exc: ValidationError, source: str) -> InvalidInputError:
    parts = []
    for err in exc.errors()[:10]:
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return InvalidInputError(f"invalid task file {source}: " + "; ".join(parts))


def parse_task_document(doc: Any, source: str = "<document>") -> TaskFile:
    """Validate a parsed JSON/YAML document; errors name the bad field (``tasks[2].name``).

    Example:
        >>> parse_task_document({"tasks": [{"id": "a", "name": "A", "description": "d"}]}).kind
        'factor'
    """
    if not isinstance(doc, dict):
        raise InvalidInputError(
            f"invalid task file {source}: expected a mapping with 'tasks', "
            f"got {type(doc).__name__}"
        )
    try:
        return TaskFile.model_validate(doc)
    except ValidationError as exc:
        raise _format_error(exc, source) from None


def _task(entry: TaskEntry, spec: TaskFile) -> Task:
    kind = spec.kind
    extra = dict(entry.extra)
    if kind == "python_function":
        extra["entry_point"] = entry.entry_point
        if entry.prompt is not None:
            extra["prompt"] = entry.prompt
    else:  # a factor task says so, with its files, scope and acceptance rule
        inp = next(iter(spec.inputs), "daily_pv.parquet")
        out = entry.output_file or spec.output_file
        dollar = spec.inputs.get(inp, "") in ("rdagent", "rdagent_tick")
        extra.setdefault("family", "factor")
        extra.setdefault("input_file", inp)
        extra.setdefault("output_file", out)
        extra.setdefault("output_column", entry.name)
        extra.setdefault("scope", entry.scope)
        if dollar:
            extra.setdefault("field_prefix", "$")
        extra.setdefault("contract", factor_contract(entry.name, inp, out, entry.scope, dollar))
        if entry.acceptance is not None:
            extra.setdefault("acceptance", entry.acceptance)
    return Task(
        id=entry.id,
        name=entry.name,
        description=entry.description,
        formulation=entry.formulation,
        variables=entry.variables,
        category=entry.category,
        difficulty=entry.difficulty,
        extra=extra,
    )


def _ground_truth(entry: TaskEntry, kind: str, base: Path) -> Workspace | None:
    code = entry.ground_truth
    if entry.ground_truth_file is not None:
        code = (base / entry.ground_truth_file).read_text(encoding="utf-8")
    if kind == "python_function":
        if code is None and entry.canonical_solution is not None:
            code = (entry.prompt or "") + entry.canonical_solution
        files = {"main.py": code or ""}
        if entry.tests is not None:
            files["tests.py"] = entry.tests
        return Workspace(files)
    return None if code is None else Workspace({"main.py": code})


def suite_from_document(spec: TaskFile, base: Path, default_name: str) -> Suite:
    """Build a :class:`Suite` from a validated task file (paths relative to ``base``)."""
    inputs: dict[str, Path] = {}
    for name, value in spec.inputs.items():
        if value == "alpha158":
            from costeer_lab.settings import get_settings
            from costeer_lab.suites._panel import ensure_panel

            inputs[name] = ensure_panel(get_settings().cache_dir)
        elif value in ("rdagent", "rdagent_tick"):
            from costeer_lab.settings import get_settings
            from costeer_lab.suites._rdagent_data import ensure_daily_pv

            source = "synthetic_tick" if value == "rdagent_tick" else "synthetic"
            inputs[name] = ensure_daily_pv(get_settings().cache_dir, source)
        else:
            path = (base / value).resolve()
            if not path.is_file():
                raise InvalidInputError(f"inputs.{name}: file {str(path)!r} does not exist")
            inputs[name] = path
    tasks = [_task(e, spec) for e in spec.tasks]
    gts = {e.id: _ground_truth(e, spec.kind, base) for e in spec.tasks}
    if spec.kind == "python_function":
        _check_reference_files(spec, gts)

    def ground_truth(task_id: str) -> Workspace:
        gt = gts[task_id]
        if gt is None:
            raise InvalidInputError(f"task {task_id!r} has no ground_truth in the task file")
        return gt

    def evaluator(**kwargs: Any) -> Evaluator:
        if spec.kind == "python_function":
            from costeer_lab.evaluate._pyfunc import PythonFunctionEvaluator

            return PythonFunctionEvaluator(**kwargs)
        from costeer_lab.evaluate._factor import FactorEvaluator

        kwargs.setdefault("inputs", inputs)
        kwargs.setdefault("output_file", spec.output_file)
        return FactorEvaluator(**kwargs)

    return Suite(
        spec.name or default_name,
        tasks,
        ground_truth,
        evaluator,
        inputs=inputs,
        splits=spec.splits,
        verify_references=spec.kind == "python_function",
    )


def _check_reference_files(spec: TaskFile, gts: dict[str, Workspace | None]) -> None:
    """A ``ground_truth_file`` reference compiles and defines the entry point."""
    for i, entry in enumerate(spec.tasks):
        gt = gts[entry.id]
        if entry.ground_truth_file is None or gt is None or entry.entry_point is None:
            continue
        try:
            check_reference(
                [("ground_truth_file", gt.files["main.py"])],
                entry.entry_point,
                f"tasks[{i}]",
                entry.id,
            )
        except ValueError as exc:
            raise InvalidInputError(f"{exc} ({entry.ground_truth_file!r})") from None


def load_task_file(path: str | Path, **options: Any) -> Suite:
    """Read a ``.json``/``.yaml``/``.yml`` task file into a :class:`Suite`.

    A JSON file in RD-Agent's factor benchmark format (task name → ``description``,
    ``formulation``, ``gt_code``, …) is read by :func:`~costeer_lab.suites.rdagent_suite`,
    which takes ``options`` (``data``, ``n_instruments``, …); other task files take none.
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"task file {str(p)!r} does not exist")
    text = read_utf8(p, "task file")
    try:
        doc = parse_document(text, json_file=p.suffix.lower() == ".json")
    except InvalidInputError as exc:
        raise InvalidInputError(f"task file {str(p)!r} is not valid JSON/YAML: {exc}") from None
    from costeer_lab.suites._rdagent import is_rdagent_document, rdagent_suite

    if is_rdagent_document(doc):
        return rdagent_suite(doc, source=repr(str(p)), name=p.stem, **options)
    if options:
        raise InvalidInputError(f"task files take no options, got {sorted(options)}")
    spec = parse_task_document(doc, repr(str(p)))
    return suite_from_document(spec, p.parent, p.stem)
