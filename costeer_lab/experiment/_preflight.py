"""Validate an experiment before anything is written: the output folder, the suite, the task
selection (and seed knowledge that would hold a target, :mod:`._leak`), the suite's own check
of its targets (an Alpha158 panel too short for a window), the coder (a coder class, its model
endpoint and key), the embedder, the RAG options and the suite's inputs.

:func:`run_experiment` calls :func:`preflight` first, so a mistyped name ends in one
:class:`~costeer_lab.errors.ConfigurationError` naming the spec field, the output folder is left
untouched, and a configuration error is never recorded as a failed attempt. A coder with a
``check()`` (the LLM coder) probes its endpoint unless it replays a recording: a refused key,
an unknown model, a refused connection or a time-out stops the run with one
:class:`~costeer_lab.errors.EndpointError`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from costeer_lab.errors import (
    ConfigurationError,
    CosteerLabError,
    EndpointError,
    GroundTruthError,
)
from costeer_lab.experiment._fresh import check_fresh_out
from costeer_lab.experiment._leak import check_target_leak, same_suite
from costeer_lab.experiment._names import check_path_names
from costeer_lab.experiment._reference_check import check_references
from costeer_lab.experiment._settings_record import check_settings_resume
from costeer_lab.experiment._spec import ArmSpec, ExperimentSpec, StageSpec, TaskSelection
from costeer_lab.experiment._start_from import check_start_from
from costeer_lab.experiment._start_snapshot import check_start_snapshots

if TYPE_CHECKING:
    from costeer_lab.knowledge import RAGStrategyV1, RAGStrategyV2
    from costeer_lab.suites import SuiteLike
from costeer_lab.llm import LOCAL_PREFIX, model_alias, require_local_llm
from costeer_lab.records import Task, Workspace
from costeer_lab.settings import get_settings

__all__ = [
    "LLM_CACHE_FILE",
    "Preflight",
    "check_out_dir",
    "coder_config",
    "preflight",
    "select_tasks",
    "spec_differences",
]

#: The LLM response cache of a run whose ``llm`` coder names no ``store``: ``<out>/llm_cache.db``.
LLM_CACHE_FILE = "llm_cache.db"


def coder_config(spec: ExperimentSpec, out_dir: Path) -> dict[str, Any]:
    """The coder config a run uses: ``spec.coder``, and for an ``llm`` coder without a
    ``store`` the run's response cache ``sqlite:///<out>/llm_cache.db`` (absolute path).

    Example:
        >>> spec = ExperimentSpec.model_validate({"name": "t", "suite": "humaneval",
        ...     "arms": [{"name": "a"}], "coder": {"name": "llm", "model": "m"}})
        >>> coder_config(spec, Path("/runs/x"))["store"]
        'sqlite:////runs/x/llm_cache.db'
    """
    cfg = dict(spec.coder)
    if cfg.get("name") == "llm" and not cfg.get("store"):
        cfg["store"] = f"sqlite:///{(out_dir / LLM_CACHE_FILE).resolve()}"
    return cfg


@dataclass(frozen=True)
class Preflight:
    """What a validated spec resolves to: the loaded suites and the chosen tasks.

    ``stages`` pairs each stage with its targets (one stage named ``main`` holding
    ``spec.tasks`` when the spec has no stages); ``targets`` are the first stage's.
    """

    suite: SuiteLike
    targets: list[Task]
    seed_tasks: list[Task]
    seed_suite: SuiteLike | None = None
    stages: tuple[tuple[StageSpec, list[Task]], ...] = ()


def spec_differences(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted paths where two JSON-like specs differ (``arms[1].rag``, ``max_loop``).

    Example:
        >>> spec_differences({"a": 1, "b": {"c": [1, 2]}}, {"a": 1, "b": {"c": [1, 3]}})
        ['b.c[1]']
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in old or key not in new:
                out.append(path)
            else:
                out += spec_differences(old[key], new[key], path)
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        out = []
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            out += spec_differences(a, b, f"{prefix}[{i}]")
        return out
    return [] if old == new else [prefix or "(top)"]


def _with_defaults(data: Any) -> Any:
    """``data`` with each top-level field it omits set to its default, so a field added to
    the spec later (or ``stages``, left out of ``spec.json`` when empty) compares equal."""
    if not isinstance(data, dict):
        return data
    defaults = ExperimentSpec.model_validate(
        {"name": "x", "suite": "x", "arms": [{"name": "a"}]}
    ).model_dump(mode="json")
    return {**{k: v for k, v in defaults.items() if k not in ("name", "suite", "arms")}, **data}


def check_out_dir(out_dir: Path, spec: ExperimentSpec, *, resume: bool) -> None:
    """Refuse an output folder that is a file, sits under a file, or holds another spec.

    Example:
        >>> import tempfile, pathlib
        >>> spec = ExperimentSpec.model_validate({"name": "t", "suite": "humaneval",
        ...     "arms": [{"name": "a"}]})
        >>> check_out_dir(pathlib.Path(tempfile.mkdtemp()) / "new", spec, resume=True)
    """
    for parent in [out_dir, *out_dir.parents]:
        if parent.exists() and not parent.is_dir():
            what = "--out" if parent == out_dir else f"--out (its parent {str(parent)!r})"
            raise ConfigurationError(
                f"{what} {str(out_dir)!r}: {str(parent)!r} is a file; expected a directory "
                "(new or holding an earlier run of the same spec)"
            )
        if parent.exists():
            break
    old_spec = out_dir / "spec.json"
    if not (resume and old_spec.exists()):
        return
    try:
        previous = json.loads(old_spec.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigurationError(
            f"{str(old_spec)!r} is unreadable ({exc}); use another --out"
        ) from None
    diff = spec_differences(*(_with_defaults(d) for d in (previous, spec.to_dict())))
    if diff:
        shown = ", ".join(diff[:8]) + (" …" if len(diff) > 8 else "")
        raise ConfigurationError(
            f"{str(out_dir)!r} holds a run of a different spec (fields that differ: {shown}); "
            "use another --out, or --fresh to replace that run"
        )


def _selected(suite: SuiteLike, sel: TaskSelection) -> list[str]:
    ids = list(sel.ids) if sel.ids else suite.split(sel.split or "all")
    if sel.match is not None:
        pattern = sel.match
        ids = [i for i in ids if re.search(pattern, i)]
    return ids[: sel.limit] if sel.limit is not None else ids


def _seed_split(source: SuiteLike, spec: ExperimentSpec) -> list[str]:
    """The ids of ``seed_knowledge.split`` (first ``limit``) in ``source``."""
    sk = spec.seed_knowledge
    if sk.split is None:
        return []
    ids = source.split(sk.split)
    return ids[: sk.limit] if sk.limit is not None else ids


def select_tasks(
    suite: SuiteLike, spec: ExperimentSpec, seed_suite: SuiteLike | None = None
) -> tuple[list[Task], list[Task]]:
    """``(targets, seed_tasks)`` for a spec. A task is never both (the targets of every stage
    are left out of the seed knowledge) unless the spec sets ``allow_target_leak`` and the seed
    knowledge comes from the same suite; :func:`preflight` refuses such an overlap without the
    flag. Seed tasks come from ``seed_suite`` when given (``spec.seed_knowledge.suite``), else
    from ``suite``."""
    ids = _selected(suite, spec.tasks)
    every = set(ids).union(*(_selected(suite, st.tasks) for st in spec.stages))
    source = suite if seed_suite is None else seed_suite
    sk = spec.seed_knowledge
    seed_ids: list[str] = []
    if spec.allow_target_leak and same_suite(spec):
        seed_ids = _seed_split(source, spec)
    elif sk.split is not None:
        seed_ids = [i for i in source.split(sk.split) if i not in every]
        seed_ids = seed_ids[: sk.limit] if sk.limit is not None else seed_ids
    return [suite.task(i) for i in ids], [source.task(i) for i in seed_ids]


def _rag_for(arm: ArmSpec, seed: int) -> tuple[RAGStrategyV1 | RAGStrategyV2, tuple[str, ...]]:
    from costeer_lab.knowledge import make_rag_strategy

    rag = make_rag_strategy(arm.rag, seed=seed, **arm.rag_options)
    return rag, tuple(rag.query_kinds)


def _load_suite(name: str, options: dict[str, Any], field: str = "suite") -> SuiteLike:
    from costeer_lab.suites import load_suite

    try:
        return load_suite(name, **options)
    except TypeError as exc:  # a suite factory called with an option it does not take
        raise ConfigurationError(
            f"{field}_options of suite {name!r}: {exc} (given: {sorted(options)})"
        ) from None
    except FileNotFoundError as exc:  # e.g. a task file's ground_truth_file
        raise ConfigurationError(
            f"{field} {name!r}: file {str(exc.filename)!r} does not exist"
        ) from None
    except CosteerLabError as exc:
        raise ConfigurationError(f"{field}: {exc}") from None


def _select(
    suite: SuiteLike, spec: ExperimentSpec, seed_suite: SuiteLike | None = None
) -> tuple[list[Task], list[Task]]:
    if spec.tasks.ids is not None:
        for i, tid in enumerate(spec.tasks.ids):
            if tid not in set(suite.task_ids):
                try:
                    suite.task(tid)
                except CosteerLabError as exc:
                    raise ConfigurationError(f"tasks.ids[{i}]: {exc}") from None
    for field, split in (
        ("tasks.split", spec.tasks.split),
        ("seed_knowledge.split", spec.seed_knowledge.split),
    ):
        if split is not None and (field != "tasks.split" or not spec.tasks.ids):
            source = seed_suite if field.startswith("seed") and seed_suite is not None else suite
            try:
                source.split(split)
            except CosteerLabError as exc:
                raise ConfigurationError(f"{field}: {exc}") from None
    targets, seed_tasks = select_tasks(suite, spec, seed_suite)
    if not targets:
        raise ConfigurationError(
            f"tasks: spec {spec.name!r} selects no tasks from suite {spec.suite!r}"
        )
    every = {t.id for t in targets}.union(*(_selected(suite, st.tasks) for st in spec.stages))
    check_target_leak(spec, _seed_split(seed_suite or suite, spec), every)
    return targets, seed_tasks


def _check_targets(suite: SuiteLike, ids: list[str]) -> None:
    """The suite's own check of its targets under its options (``Suite.check_targets``)."""
    check = getattr(suite, "check_targets", None)
    if not callable(check):
        return
    try:
        check(list(dict.fromkeys(ids)))
    except CosteerLabError as exc:
        raise ConfigurationError(f"suite_options: {exc}") from None


def _check_coder_model(config: Mapping[str, Any], coder: Any) -> None:
    """A ``local:`` model: its name is known and the ``llm`` extra is installed (the runner starts
    the server, which checks its own health); any other model: probe its endpoint."""
    model = str(config.get("model", ""))
    if not model.startswith(LOCAL_PREFIX):
        _check_coder_endpoint(coder)
        return
    if config.get("cache_mode", getattr(coder.settings, "cache_mode", None)) == "replay_only":
        model_alias(model)
        return
    try:
        model_alias(model)
        require_local_llm(model.removeprefix(LOCAL_PREFIX))
    except CosteerLabError as exc:
        raise ConfigurationError(f"coder.model: {exc}") from None


def _check_coder_endpoint(coder: Any) -> None:
    """Probe the coder's model endpoint (``coder.check()``), unless it replays a recording."""
    check = getattr(coder, "check", None)
    mode = getattr(getattr(coder, "settings", None), "cache_mode", None)
    if not callable(check) or mode == "replay_only":
        return
    try:
        check()
    except EndpointError as exc:
        raise EndpointError(f"coder: {exc}", kind=exc.kind, status=exc.status) from None
    except ConfigurationError as exc:
        raise ConfigurationError(f"coder: {exc}") from None
    finally:
        close = getattr(coder, "close", None)
        if callable(close):
            close()


def _check_components(spec: ExperimentSpec, out_dir: Path) -> None:
    from costeer_lab.coders import coder_from_config
    from costeer_lab.embed import get_embedder

    try:
        coder = coder_from_config(coder_config(spec, out_dir))
    except CosteerLabError as exc:
        raise ConfigurationError(f"coder.name: {exc}") from None
    _check_coder_model(spec.coder, coder)
    try:
        get_embedder(spec.embedder)
    except CosteerLabError as exc:
        raise ConfigurationError(f"embedder: {exc}") from None
    for i, arm in enumerate(spec.arms):
        if arm.rag in ("none", "memory"):  # memory options are checked by the spec itself
            continue
        try:
            _rag_for(arm, 0)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            raise ConfigurationError(f"arms[{i}].rag_options ({arm.name!r}): {problems}") from None
        except (CosteerLabError, ValueError) as exc:
            raise ConfigurationError(f"arms[{i}].rag_options ({arm.name!r}): {exc}") from None


def _check_input_files(suite: SuiteLike) -> None:
    """Every Parquet input of the suite must be readable."""
    import pyarrow.parquet as pq

    for name, path in dict(getattr(suite, "inputs", {}) or {}).items():
        if Path(path).suffix == ".parquet":
            try:
                pq.read_schema(path)
            except Exception as exc:  # pyarrow raises several types for damaged files
                raise ConfigurationError(
                    f"input {name!r} of suite {suite.name!r}: {str(path)!r} is not a readable "
                    f"Parquet file ({type(exc).__name__}: {exc})"
                ) from None


class _Quiet(logging.Handler):
    """Swallows the evaluator's log of a failed reference during the preflight: its cause is in
    the one error the preflight raises (:attr:`GroundTruthError.cause`)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)

    def emit(self, record: logging.LogRecord) -> None:
        pass


#: A data file named in a reference's code (a string literal such as ``"daily_f.h5"``).
_DATA_FILE = re.compile(
    r"""["']([\w./-]+\.(?:h5|hdf5|hdf|parquet|pq|csv|feather|pkl|pickle))["']""", re.IGNORECASE
)


def unprovided_files(code: str, provided: set[str]) -> list[str]:
    """The data files a reference's code names that are neither suite inputs (``provided``)
    nor written by it (``to_hdf``/``to_parquet``/``to_csv``/… of the same literal).

    Example:
        >>> unprovided_files('pd.read_hdf("daily_f.h5"); f.to_hdf("result.h5", key="d")',
        ...                  {"daily_pv.h5"})
        ['daily_f.h5']
    """
    written = set(re.findall(r"""\.to_\w+\(\s*["']([^"']+)["']""", code))
    names = dict.fromkeys(m.group(1) for m in _DATA_FILE.finditer(code))
    return [n for n in names if Path(n).name not in provided and n not in written]


def code_of(gt: Workspace) -> str:
    """Every file of a reference workspace, one after the other."""
    return "\n".join(gt.files[k] for k in sorted(gt.files))


def _problem(task: Task, code: str, exc: GroundTruthError, provided: set[str]) -> str:
    """One task's entry of the preflight's error."""
    missing = unprovided_files(code, provided)
    if missing:
        which = ", ".join(missing)
        return f"{task.id!r} reads {which}, which the suite does not provide"
    return f"{task.id!r}: {exc}" + (f": {exc.cause}" if exc.cause else "")


def _check_reference(suite: SuiteLike, targets: list[Task]) -> None:
    """Every target's reference implementation must run on the suite's inputs: one
    :class:`ConfigurationError` names each task that cannot be evaluated (inputs the suite
    does not provide, or a reference that fails), in task-id order whatever the selection's
    order. Results are cached by the evaluator (once per process), so the run reuses them.
    """
    if not getattr(suite, "inputs", None):
        return
    evaluator = suite.evaluator()
    check = getattr(evaluator, "ground_truth_result", None)
    output_of = getattr(evaluator, "output_of", None)
    if not callable(check):
        return
    logger = logging.getLogger("costeer_lab.evaluate._factor")
    quiet, propagate = _Quiet(), logger.propagate
    logger.addHandler(quiet)
    logger.propagate = False  # the cause goes into the one error message below
    provided = set(suite.inputs)
    problems: dict[str, str] = {}
    try:
        for task in {t.id: t for t in targets}.values():
            gt = suite.ground_truth(task.id)
            try:
                check(gt, output_of(task) if callable(output_of) else None)
            except GroundTruthError as exc:
                problems[task.id] = _problem(task, code_of(gt), exc, provided)
    finally:
        logger.removeHandler(quiet)
        logger.propagate = propagate
        close = getattr(evaluator, "close", None)
        if callable(close):
            close()
    if problems:
        n = len(problems)
        files = ", ".join(f"{k} ({str(v)!r})" for k, v in sorted(suite.inputs.items()))
        raise ConfigurationError(
            f"{n} task{'s' if n > 1 else ''} cannot be evaluated on the suite's inputs "
            f"({files}): " + "; ".join(problems[k] for k in sorted(problems))
        )


def preflight(spec: ExperimentSpec, out_dir: Path, *, resume: bool) -> Preflight:
    """Validate ``spec`` against the output folder and its components; writes nothing.

    Raises:
        ConfigurationError: the first problem found, naming the spec field or the file.

    Example:
        >>> import tempfile, pathlib
        >>> spec = ExperimentSpec.model_validate({"name": "t", "suite": "humaneval",
        ...     "suite_options": {"limit": 4}, "arms": [{"name": "a"}],
        ...     "coder": {"name": "reuze"}})
        >>> preflight(spec, pathlib.Path(tempfile.mkdtemp()), resume=True)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        costeer_lab.errors.ConfigurationError: coder.name: unknown coder 'reuze'; ...
    """
    check_out_dir(out_dir, spec, resume=resume)
    check_settings_resume(out_dir, get_settings(), resume=resume)
    check_start_from(spec, out_dir, resume=resume)
    check_path_names(spec)
    check_start_snapshots(spec, out_dir, resume=resume)
    if not resume:
        check_fresh_out(out_dir)  # --fresh deletes an earlier run, never a user's files
    suite = _load_suite(spec.suite, spec.suite_options)
    _check_input_files(suite)
    sk = spec.seed_knowledge
    seed_suite = (
        None
        if sk.suite is None
        else _load_suite(sk.suite, sk.suite_options, "seed_knowledge.suite")
    )
    targets, seed_tasks = _select(suite, spec, seed_suite)
    stages = _stages(suite, spec, targets)
    _check_targets(suite, [t.id for _, chosen in stages for t in chosen])
    _check_components(spec, out_dir)
    _check_reference(suite, [t for _, ts in stages for t in ts])
    check_references(  # python_function task files: every reference passes its own tests
        suite, [t for _, ts in stages for t in ts], seed_suite=seed_suite, seed_tasks=seed_tasks
    )
    return Preflight(suite, targets, seed_tasks, seed_suite, stages)


def _stages(
    suite: SuiteLike, spec: ExperimentSpec, targets: list[Task]
) -> tuple[tuple[StageSpec, list[Task]], ...]:
    """Each stage with its targets; a stage that selects nothing is an error naming it."""
    if not spec.stages:
        return ((StageSpec(name="main", tasks=spec.tasks), targets),)
    out = []
    for i, stage in enumerate(spec.stages):
        try:
            chosen = [suite.task(t) for t in _selected(suite, stage.tasks)]
        except CosteerLabError as exc:
            raise ConfigurationError(f"stages[{i}].tasks ({stage.name!r}): {exc}") from None
        if not chosen:
            raise ConfigurationError(
                f"stages[{i}].tasks: stage {stage.name!r} selects no tasks from suite "
                f"{spec.suite!r}"
            )
        out.append((stage, chosen))
    return tuple(out)
