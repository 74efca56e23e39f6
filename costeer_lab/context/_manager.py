"""RichMemoryManager: per-task memory that records actions, extracts evidence, documents
code, decides completion and stops loops; persisted in the store."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from costeer_lab.context._append import append_action
from costeer_lab.context._completion import ValidationReport, Validator
from costeer_lab.context._detect import detect_task_type
from costeer_lab.context._loops import LoopVerdict, check_loops
from costeer_lab.context._persist import ContextStore, check_task_id
from costeer_lab.context._priority import check_complexity, check_priority
from costeer_lab.context._queries import (
    CodeMatch,
    CrossReference,
    EvidenceMatch,
    FileMatch,
    name_matches,
    walk_classes,
    walk_functions,
)
from costeer_lab.context._records import (
    EVIDENCE_TYPES,
    FILE_TYPES,
    TASK_TYPES,
    ActionContext,
    Output,
    TaskType,
    check_choice,
)
from costeer_lab.context._task import TaskContext
from costeer_lab.errors import InvalidInputError, NotFoundError
from costeer_lab.settings import ContextSettings, get_settings
from costeer_lab.store import BaseStore, get_store

__all__ = ["RichMemoryManager"]


class RichMemoryManager:
    """The rich task context memory.

    Each task's context is isolated (its own actions, evidence and files) and persisted in
    ``store`` as it changes, one transaction per action, so another process opening the same
    store sees it; concurrent writers of one task wait for each other. Queries span all tasks
    unless given a ``task_id``. Like its store, a manager is used by one thread at a time.

    Args:
        store: a store, a store URL, or ``None`` for ``get_store(None)``.
        settings: loop limits and thresholds (default: the ``context`` settings section).
        clock: returns the current Unix time (tests of the time rule pass their own).

    Example:
        >>> mm = RichMemoryManager(":memory:")
        >>> ctx = mm.create_task("What is 6 * 7?", task_id="q1")
        >>> ctx = mm.add_action("q1", "answer", {"question": "6 * 7"}, Output(True, "42"))
        >>> ctx.task_type, ctx.complete, [e.type for e in ctx.evidence]
        ('simple_question', True, ['synthesis'])
    """

    def __init__(
        self,
        store: BaseStore | str | None = None,
        *,
        settings: ContextSettings | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._owns_store = not isinstance(store, BaseStore)
        self.store = store if isinstance(store, BaseStore) else get_store(store)
        self.settings = settings or get_settings().context
        self.clock = clock
        self.validator = Validator(self.settings)
        self._contexts = ContextStore(self.store)

    def close(self) -> None:
        """Close the store when this manager opened it (from a URL or ``None``). Idempotent."""
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> RichMemoryManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tasks -------------------------------------------------------------------------------
    def create_task(
        self,
        task: str,
        *,
        task_type: TaskType | None = None,
        task_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        exist_ok: bool = False,
        priority: int = 0,
        complexity: int | None = None,
    ) -> TaskContext:
        """Create (and store) the context of a new task.

        Args:
            task: the task text.
            task_type: overrides the rule-based :func:`detect_task_type`.
            task_id: the id to use (default: a fresh ``task-<hex>``).
            metadata: JSON-serializable extra fields.
            exist_ok: return the stored context when ``task_id`` exists instead of failing.
            priority: higher runs first in :meth:`open_tasks` (default 0).
            complexity: 1–5 (default: :func:`estimate_complexity` of the text).

        Raises:
            InvalidInputError: empty task text, unknown task type, bad or existing task id,
                a priority that is not an integer, a complexity outside 1–5.
        """
        check_priority(priority)
        if complexity is not None:
            check_complexity(complexity)
        detected = detect_task_type(task)
        chosen = detected if task_type is None else task_type
        check_choice("task_type", chosen, TASK_TYPES)
        tid = check_task_id(task_id if task_id is not None else f"task-{uuid.uuid4().hex[:12]}")
        with self.store.transaction():  # another process may create the same id meanwhile
            return self._create(
                chosen, detected, task, tid, metadata, exist_ok, priority, complexity
            )

    def _create(
        self,
        chosen: TaskType,
        detected: TaskType,
        task: str,
        tid: str,
        metadata: Mapping[str, Any] | None,
        exist_ok: bool,
        priority: int,
        complexity: int | None,
    ) -> TaskContext:
        old = self._contexts.load(tid)
        if old is not None:
            if exist_ok:
                return old
            raise InvalidInputError(f"task {tid!r} already exists; pass exist_ok=True to reuse it")
        now = self.clock()
        meta = {"detected_type": detected, **dict(metadata or {})}
        ctx = TaskContext(tid, chosen, task, created_at=now, updated_at=now, metadata=meta,
                          priority=priority, complexity=complexity)  # fmt: skip
        self._contexts.save(ctx)
        return ctx

    def get_task(self, task_id: str) -> TaskContext:
        """The stored context of a task.

        Raises:
            NotFoundError: no task has this id.
        """
        ctx = self._contexts.load(task_id)
        if ctx is None:
            known = self._contexts.task_ids()[:10]
            raise NotFoundError(f"no task {task_id!r} in {self.store.url}; some known: {known}")
        return ctx

    def has_task(self, task_id: str) -> bool:
        """Whether a task with this id is stored."""
        return self._contexts.exists(task_id)

    def set_priority(
        self, task_id: str, priority: int | None = None, complexity: int | None = None
    ) -> TaskContext:
        """Change a task's priority and/or complexity (``None`` keeps it); returns the context.

        Raises:
            NotFoundError: unknown task. InvalidInputError: a bad priority or complexity.
        """
        with self.store.transaction():
            ctx = self.get_task(task_id)
            ctx = ctx.with_(
                priority=ctx.priority if priority is None else check_priority(priority),
                complexity=ctx.complexity if complexity is None else check_complexity(complexity),
            )
            self._contexts.save(ctx)
            return ctx

    def open_tasks(self, task_type: TaskType | None = None) -> list[str]:
        """Ids of the tasks neither complete nor stopped, in the order to work on them: higher
        ``priority`` first, then lower ``complexity`` (quick wins), then creation order."""
        rows = self._contexts.headers(task_type)
        open_ = [
            (i, h)
            for i, h in enumerate(rows)
            if not h.get("complete") and not h.get("stop_reason")
        ]
        order = sorted(
            open_,
            key=lambda t: (-t[1]["priority"], t[1]["complexity"], t[1].get("created_at", 0), t[0]),
        )
        return [h["task_id"] for _, h in order]

    def list_tasks(self, task_type: TaskType | None = None) -> list[str]:
        """Ids of the stored tasks (of one type when given), in creation order."""
        return self._contexts.task_ids(task_type)

    # -- actions -----------------------------------------------------------------------------
    def add_action(
        self,
        task_id: str,
        action_type: str,
        inputs: Mapping[str, Any],
        output: Output,
        *,
        plan_id: str = "",
        reasoning: str = "",
        judge: bool = True,
    ) -> TaskContext:
        """Record one action: register the files it wrote (documenting code), extract its
        evidence, then check completion and, when not complete, the loop-prevention rules.

        A task already complete or stopped still records actions (its history stays whole)
        but keeps its verdict. ``judge=False`` records without checking (for the first half
        of a pair of actions judged together). Returns the updated context.

        Raises:
            NotFoundError: unknown task. InvalidInputError: empty ``action_type``.
        """
        if not isinstance(action_type, str) or not action_type.strip():
            raise InvalidInputError(f"action_type must be a non-empty string; got {action_type!r}")
        # read and write in one transaction: concurrent writers of a task wait for each other
        with self.store.transaction():
            return self._add(task_id, action_type, inputs, output, plan_id, reasoning, judge)

    def _add(
        self,
        task_id: str,
        action_type: str,
        inputs: Mapping[str, Any],
        output: Output,
        plan_id: str,
        reasoning: str,
        judge: bool,
    ) -> TaskContext:
        ctx = self.get_task(task_id)
        now = self.clock()
        done = append_action(
            ctx,
            action_type,
            inputs,
            output,
            now=now,
            doc_min_chars=self.settings.doc_min_chars,
            action_context=ActionContext(plan_id, reasoning),
        )
        ctx = done.context.with_(updated_at=now)
        if judge and not ctx.complete and ctx.stop_reason is None:
            ctx = self._judge(ctx, now)
        self._contexts.save(
            ctx, actions=[done.action], evidence=done.evidence, files=done.new_files
        )
        return ctx

    def _judge(self, ctx: TaskContext, now: float) -> TaskContext:
        report = self.validator.validate(ctx)
        meta = dict(ctx.metadata)
        if report.completed:
            meta["completion"] = report.to_dict()
            return ctx.with_(complete=True, completion_evidence=report.evidence, metadata=meta)
        verdict = check_loops(ctx, now=now, settings=self.settings)
        if verdict is None:
            return ctx
        meta["stop_rule"] = verdict.rule
        return ctx.with_(stop_reason=str(verdict), metadata=meta)

    def validate(self, task_id: str) -> ValidationReport:
        """The :class:`Validator`'s verdict on a task now (nothing is stored)."""
        return self.validator.validate(self.get_task(task_id))

    def check_loops(self, task_id: str) -> LoopVerdict | None:
        """The loop-prevention rule the task breaks now, or ``None`` (nothing is stored)."""
        return check_loops(self.get_task(task_id), now=self.clock(), settings=self.settings)

    # -- queries -----------------------------------------------------------------------------
    def find_files(
        self,
        *,
        task_id: str | None = None,
        file_type: str | None = None,
        contains: str | None = None,
        **metadata: Any,
    ) -> list[FileMatch]:
        """Files by task, type, content substring and metadata fields (``language="python"``,
        ``purpose=…``, ``dependencies="numpy"`` matches a list member)."""
        if file_type is not None:
            check_choice("file_type", file_type, FILE_TYPES)
        where = {k: v for k, v in (("task_id", task_id), ("file_type", file_type)) if v}
        out = []
        for tid, ref in self._contexts.iter_files(where):
            if contains is not None and contains not in ref.content:
                continue
            meta = ref.metadata.to_dict()
            if all(_meta_matches(meta.get(k), v) for k, v in metadata.items()):
                out.append(FileMatch(tid, ref))
        return out

    def find_functions(self, name: str, *, task_id: str | None = None) -> list[CodeMatch]:
        """Functions and methods named ``name`` (short or dotted qualified name)."""
        return [
            CodeMatch(tid, ref.path, fn)
            for tid, ref in self._contexts.iter_files(_where(task_id, language="python"))
            for fn in walk_functions(ref.metadata)
            if name_matches(fn, name)
        ]

    def find_classes(self, name: str, *, task_id: str | None = None) -> list[CodeMatch]:
        """Classes (nested ones included) named ``name`` (short or dotted qualified name)."""
        return [
            CodeMatch(tid, ref.path, cls)
            for tid, ref in self._contexts.iter_files(_where(task_id, language="python"))
            for cls in walk_classes(ref.metadata)
            if name_matches(cls, name)
        ]

    def find_evidence(
        self,
        *,
        task_id: str | None = None,
        type: str | None = None,
        min_confidence: float = 0.0,
        source: str | None = None,
    ) -> list[EvidenceMatch]:
        """Evidence by task, type, minimum confidence and source."""
        if type is not None:
            check_choice("evidence type", type, EVIDENCE_TYPES)
        where = _where(task_id, type=type, source=source)
        return [
            EvidenceMatch(tid, ev)
            for tid, ev in self._contexts.iter_evidence(where)
            if ev.confidence >= min_confidence
        ]

    def cross_references(self, task_id: str) -> list[CrossReference]:
        """Links from ``task_id`` to other tasks: equal file contents, paths, function and
        class names, and evidence sources."""
        mine = self.get_task(task_id)
        keys: dict[tuple[str, str], None] = {}
        for f in mine.files:
            keys[("same_content", f.checksum)] = keys[("same_path", f.path)] = None
            for fn in walk_functions(f.metadata):
                keys[("same_function", fn.qualname)] = None
            for cls in walk_classes(f.metadata):
                keys[("same_class", cls.qualname)] = None
        sources = {e.source for e in mine.evidence}
        out: dict[CrossReference, None] = {}
        for tid, ref in self._contexts.iter_files({}):
            if tid == task_id:
                continue
            theirs = [("same_content", ref.checksum), ("same_path", ref.path)]
            theirs += [("same_function", fn.qualname) for fn in walk_functions(ref.metadata)]
            theirs += [("same_class", c.qualname) for c in walk_classes(ref.metadata)]
            for kind, key in theirs:
                if (kind, key) in keys:
                    out[CrossReference(task_id, tid, kind, key)] = None
        for tid, ev in self._contexts.iter_evidence({}):
            if tid != task_id and ev.source in sources and ev.source not in EVIDENCE_SOURCES:
                out[CrossReference(task_id, tid, "same_source", ev.source)] = None
        return list(out)


#: Evidence sources that name a tool rather than a thing (never a cross-reference).
EVIDENCE_SOURCES = frozenset({"run_python", "execute", "run", "validate", "evaluate", "answer",
                              "synthesize", "summarize", "implement"})  # fmt: skip


def _where(task_id: str | None, **fields: Any) -> dict[str, Any]:
    out = {k: v for k, v in fields.items() if v is not None}
    if task_id is not None:
        out["task_id"] = task_id
    return out


def _meta_matches(value: Any, wanted: Any) -> bool:
    if isinstance(value, list) and not isinstance(wanted, list):
        return wanted in value
    return bool(value == wanted)
