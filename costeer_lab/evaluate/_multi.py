"""MultiEvaluator: run one or several evaluators over many tasks in parallel.

Jobs travel as JSON: each evaluator is described by its ``to_spec()`` dict and rebuilt (once per
worker process, then reused) by :func:`evaluator_from_spec`; tasks, workspaces and feedback
cross the process boundary as ``to_dict()`` JSON. Evaluators without ``to_spec`` can only be
used with thread executors (they are then called directly).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import (
    BrokenExecutor,
    Executor,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
)
from typing import Any, Literal

from costeer_lab._lifecycle import main_guard_message, process_pool, unguarded_main_call
from costeer_lab.errors import ConfigurationError, GroundTruthError, InvalidInputError
from costeer_lab.evaluate._factor import infrastructure_failure, not_evaluated
from costeer_lab.evaluate._protocol import Evaluator
from costeer_lab.records import MultiFeedback, SingleFeedback, Task, Workspace
from costeer_lab.settings import EvaluatorSettings

__all__ = ["MultiEvaluator", "evaluator_from_spec"]

_LOG = logging.getLogger(__name__)
_WORKER_EVALUATORS: dict[str, Evaluator] = {}
_WORKER_LOCK = threading.Lock()


def evaluator_from_spec(spec: Mapping[str, Any]) -> Evaluator:
    """Rebuild an evaluator from its ``to_spec()`` dict.

    Example:
        >>> from costeer_lab.evaluate import PythonFunctionEvaluator
        >>> ev = evaluator_from_spec(PythonFunctionEvaluator(runner="inprocess").to_spec())
        >>> type(ev).__name__
        'PythonFunctionEvaluator'
    """
    kind = spec.get("kind")
    settings = EvaluatorSettings(**spec.get("settings", {}))
    if kind == "factor":
        from costeer_lab.evaluate._factor import FactorEvaluator

        return FactorEvaluator(
            spec["inputs"],
            runner=spec.get("runner", "sandbox"),
            gt_runner=spec.get("gt_runner"),
            settings=settings,
            output_file=spec.get("output_file", "result.parquet"),
        )
    if kind == "pyfunc":
        from costeer_lab.evaluate._pyfunc import PythonFunctionEvaluator

        return PythonFunctionEvaluator(runner=spec.get("runner", "sandbox"), settings=settings)
    if kind == "critic":
        from costeer_lab.evaluate._critic import LLMCodeCritic

        return LLMCodeCritic.from_spec(spec)
    raise InvalidInputError(f"unknown evaluator kind {kind!r}; expected factor, pyfunc or critic")


def _cached_evaluator(spec_json: str) -> Evaluator:
    with _WORKER_LOCK:
        if spec_json not in _WORKER_EVALUATORS:
            _WORKER_EVALUATORS[spec_json] = evaluator_from_spec(json.loads(spec_json))
        return _WORKER_EVALUATORS[spec_json]


def _run_all(
    evaluators: Sequence[Evaluator], task: Task, impl: Workspace, gt: Workspace | None
) -> SingleFeedback:
    parts = []
    for ev in evaluators:
        try:
            parts.append(ev.evaluate(task, impl, gt))
        except (InvalidInputError, ConfigurationError):
            raise
        except GroundTruthError as exc:  # the experiment's failure, not the candidate's
            parts.append(not_evaluated(exc, {}))
        except Exception as exc:  # an evaluator bug must not sink the whole step
            _LOG.exception("%s failed on task %s", type(ev).__name__, task.id)
            parts.append(infrastructure_failure(exc, type(ev).__name__))
    return SingleFeedback.merge(parts)


def _job_from_json(specs: list[str], task: str, impl: str, gt: str | None) -> str:
    """Process-pool job: JSON in, feedback JSON out."""
    evaluators = [_cached_evaluator(s) for s in specs]
    feedback = _run_all(
        evaluators,
        Task.from_dict(json.loads(task)),
        Workspace.from_dict(json.loads(impl)),
        None if gt is None else Workspace.from_dict(json.loads(gt)),
    )
    return json.dumps(feedback.to_dict())


class MultiEvaluator:
    """Evaluate many (task, implementation) pairs in parallel; merge several evaluators.

    Per task, the evaluators' feedback is merged with :meth:`SingleFeedback.merge` (sections
    joined, final decision = AND). A ``None`` implementation gives a ``None`` feedback
    (skipped task).

    Args:
        evaluators: one evaluator or several.
        executor: any ``concurrent.futures.Executor`` (not shut down by this object). Default: a
            process pool (spawn) created on first use, or a thread pool when an evaluator has no
            ``to_spec()`` or ``kind="thread"``.
        max_workers: size of the default pool (default: CPU count, at most 4).
        kind: ``"process"`` or ``"thread"`` for the default pool.

    The default process pool uses the ``spawn`` start method (safe with threads; no state is
    inherited), so a *script* that evaluates must guard its entry point with
    ``if __name__ == "__main__":`` (an unguarded one is refused with a ConfigurationError
    before any worker starts); notebooks need nothing. The pool's workers die with this
    process and ignore Ctrl-C (:mod:`costeer_lab._lifecycle`). Each worker process builds its
    evaluators once (one sandbox per worker) and caches ground-truth results.

    Example:
        >>> from costeer_lab.evaluate import PythonFunctionEvaluator
        >>> t = Task("d/inc", "inc", "Add one.", extra={"entry_point": "inc"})
        >>> gt = Workspace({"tests.py": "def check(c):\\n    assert c(1) == 2\\n"})
        >>> with MultiEvaluator(PythonFunctionEvaluator(runner="inprocess"), kind="thread") as m:
        ...     fb = m.evaluate([t, t], [Workspace({"main.py": "inc = lambda x: x + 1"}), None],
        ...                     [gt, gt])
        >>> [None if f is None else f.final_decision for f in fb]
        [True, None]
    """

    def __init__(
        self,
        evaluators: Evaluator | Sequence[Evaluator],
        *,
        executor: Executor | None = None,
        max_workers: int | None = None,
        kind: Literal["process", "thread"] = "process",
    ) -> None:
        self.evaluators: list[Evaluator] = (
            [evaluators] if not isinstance(evaluators, Sequence) else list(evaluators)
        )
        if not self.evaluators:
            raise InvalidInputError("MultiEvaluator needs at least one evaluator")
        self._specs = self._collect_specs()
        self._executor = executor
        self._owned: Executor | None = None
        self._max_workers = max_workers or min(4, os.cpu_count() or 1)
        self.kind: Literal["process", "thread"] = kind if self._specs is not None else "thread"
        if isinstance(executor, ProcessPoolExecutor) and self._specs is None:
            raise InvalidInputError(
                "a process pool needs evaluators with to_spec(); "
                f"{[type(e).__name__ for e in self.evaluators]} cannot all be sent as JSON"
            )

    def _collect_specs(self) -> list[str] | None:
        specs = []
        for ev in self.evaluators:
            to_spec = getattr(ev, "to_spec", None)
            if not callable(to_spec):
                return None
            try:
                specs.append(json.dumps(to_spec(), sort_keys=True))
            except InvalidInputError:
                return None
        return specs

    def _pool(self) -> Executor:
        if self._executor is not None:
            return self._executor
        if self._owned is None:
            if self.kind == "process":
                where = unguarded_main_call()
                if where is not None:
                    raise ConfigurationError(main_guard_message(where, "an evaluation pool"))
                self._owned = process_pool(self._max_workers)
            else:
                self._owned = ThreadPoolExecutor(self._max_workers)
        return self._owned

    def evaluate(
        self,
        tasks: Sequence[Task],
        implementations: Sequence[Workspace | None],
        gt_implementations: Sequence[Workspace | None] | None = None,
    ) -> MultiFeedback:
        """Feedback for each task, in order (``None`` where the implementation is ``None``)."""
        gts = list(gt_implementations) if gt_implementations is not None else [None] * len(tasks)
        if not len(tasks) == len(implementations) == len(gts):
            raise InvalidInputError(
                f"tasks ({len(tasks)}), implementations ({len(implementations)}) and ground "
                f"truths ({len(gts)}) must have the same length"
            )
        pool = self._pool()
        use_json = self._specs is not None and not isinstance(pool, ThreadPoolExecutor)
        futures: list[Future[Any] | None] = []
        for task, impl, gt in zip(tasks, implementations, gts, strict=True):
            if impl is None:
                futures.append(None)
            elif use_json:
                assert self._specs is not None
                futures.append(
                    pool.submit(
                        _job_from_json,
                        self._specs,
                        json.dumps(task.to_dict()),
                        json.dumps(impl.to_dict()),
                        None if gt is None else json.dumps(gt.to_dict()),
                    )
                )
            else:
                futures.append(pool.submit(_run_all, self.evaluators, task, impl, gt))
        items: list[SingleFeedback | None] = []
        for fut in futures:
            if fut is None:
                items.append(None)
                continue
            items.append(self._collect(fut, use_json))
        return MultiFeedback(tuple(items))

    def _collect(self, fut: Future[Any], use_json: bool) -> SingleFeedback:
        """A job's feedback; a job that died (a broken worker process, an exception outside
        the evaluators) is "not evaluated", and a broken pool of ours is replaced next time.
        Configuration errors are raised."""
        try:
            value = fut.result()
            return SingleFeedback.from_dict(json.loads(value)) if use_json else value
        except (InvalidInputError, ConfigurationError):
            raise
        except Exception as exc:
            _LOG.exception("an evaluation job failed")
            if isinstance(exc, BrokenExecutor) and self._owned is not None:
                self._owned.shutdown(wait=False, cancel_futures=True)
                self._owned = None
            return infrastructure_failure(exc, type(self).__name__)

    def evaluate_many(
        self,
        tasks: Sequence[Task],
        workspaces: Sequence[Workspace],
        gts: Sequence[Workspace | None],
    ) -> list[SingleFeedback]:
        """Same as :meth:`evaluate` for a step with every implementation present (the
        ``StepEvaluator`` interface of :class:`costeer_lab.evolve.EvoAgent`)."""
        feedback = self.evaluate(tasks, workspaces, gts)
        return [f for f in feedback if f is not None]

    def close(self) -> None:
        """Shut down the pool this object created (a given executor is left alone)."""
        if self._owned is not None:
            self._owned.shutdown(wait=True, cancel_futures=True)
            self._owned = None

    def __enter__(self) -> MultiEvaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
