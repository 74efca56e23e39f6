"""The records of the CoSTEER method: frozen, JSON-serializable dataclasses (layer 0, no I/O
except :meth:`Workspace.write_to`, which a caller asks for explicitly).

Every record has ``to_dict()`` / ``from_dict()``; ``from_dict(to_dict(x)) == x``. This is where
they are defined and the one place to import them from.

Example:
    >>> from costeer_lab.records import Task
    >>> t = Task("alpha158/MA5", "MA5", "5-day mean of close", formulation="Mean($close, 5)")
    >>> Task.from_dict(t.to_dict()) == t
    True
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

__all__ = [
    "ErrorFix",
    "Knowledge",
    "MultiFeedback",
    "QueriedKnowledge",
    "ScoredKnowledge",
    "SingleFeedback",
    "Task",
    "Workspace",
]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Task:
    """A unit of work a coder implements.

    A task holds only what a coder may see. Ground truth (reference implementations, hidden tests)
    lives elsewhere (the suite / ``EvolvingItem``) and is never attached to a Task.

    Attributes:
        id: stable id, unique within a suite (e.g. ``"alpha158/MA5"``).
        name: short human name (``"MA5"``).
        description: natural-language description.
        formulation: formula or signature (``"Mean($close, 5)/$close"``), may be empty.
        variables: names used in the formulation → their meaning.
        category: family (operator family, problem type).
        difficulty: free-form level (``"easy"``, ``"medium"``, ``"hard"``).
        extra: other public, JSON-serializable fields (a HumanEval prompt and entry point, …).
    """

    id: str
    name: str
    description: str
    formulation: str = ""
    variables: Mapping[str, str] = field(default_factory=dict)
    category: str = ""
    difficulty: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "formulation": self.formulation,
            "variables": dict(self.variables),
            "category": self.category,
            "difficulty": self.difficulty,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Task:
        return cls(
            id=d["id"],
            name=d["name"],
            description=d["description"],
            formulation=d.get("formulation", ""),
            variables=dict(d.get("variables", {})),
            category=d.get("category", ""),
            difficulty=d.get("difficulty", ""),
            extra=dict(d.get("extra", {})),
        )

    def get_task_information(self) -> str:
        """The text that identifies the task for retrieval (name, description, formulation)."""
        parts = [f"name: {self.name}", f"description: {self.description}"]
        if self.formulation:
            parts.append(f"formulation: {self.formulation}")
        if self.variables:
            parts.append("variables: " + "; ".join(f"{k}: {v}" for k, v in self.variables.items()))
        return "\n".join(parts)


@dataclass(frozen=True)
class Workspace:
    """An implementation: files as relative path → text.

    Example:
        >>> ws = Workspace({"main.py": "print(1)"})
        >>> ws.code
        'print(1)'
    """

    files: Mapping[str, str] = field(default_factory=dict)
    main_file: str = "main.py"

    @property
    def code(self) -> str:
        """Text of the main file ('' when absent)."""
        return self.files.get(self.main_file, "")

    @property
    def content_hash(self) -> str:
        """sha256 over the sorted (path, text) pairs: equal contents give equal hashes."""
        return _sha256(json.dumps(sorted(self.files.items()), ensure_ascii=False))

    def write_to(self, directory: str | os.PathLike[str]) -> Path:
        """Write the files under ``directory`` (created if needed) and return it.

        Raises:
            ValueError: a path is absolute or escapes the directory (``..``).
        """
        root = Path(directory).resolve()
        root.mkdir(parents=True, exist_ok=True)
        for rel, text in self.files.items():
            target = (root / rel).resolve()
            if Path(rel).is_absolute() or not target.is_relative_to(root):
                raise ValueError(f"workspace path {rel!r} escapes the workspace directory")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        return root

    def to_dict(self) -> dict[str, Any]:
        return {"files": dict(self.files), "main_file": self.main_file}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Workspace:
        return cls(files=dict(d.get("files", {})), main_file=d.get("main_file", "main.py"))


@dataclass(frozen=True)
class SingleFeedback:
    """Structured feedback of one evaluation of one task.

    The four sections of the method: ``execution`` (did it run, what it printed or raised),
    ``return_checking`` (checks of the produced value), ``code`` (review of the code) and
    ``final_decision`` (``True`` = success). ``error_fingerprints`` are normalized error
    signatures (see ``costeer_lab.knowledge.fingerprint``); ``details`` holds metrics such as IC.
    """

    execution: str = ""
    return_checking: str | None = None
    code: str | None = None
    final_decision: bool | None = None
    error_fingerprints: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def succeeded(self) -> bool:
        return self.final_decision is True

    def __str__(self) -> str:
        return (
            f"------------------Execution------------------\n{self.execution}\n"
            f"------------------Return checking------------------\n{self.return_checking}\n"
            f"------------------Code------------------\n{self.code}\n"
            f"------------------Final decision------------------\n"
            f"{'SUCCESS' if self.final_decision else 'FAIL'}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "execution": self.execution,
            "return_checking": self.return_checking,
            "code": self.code,
            "final_decision": self.final_decision,
            "error_fingerprints": list(self.error_fingerprints),
            "timings": dict(self.timings),
            "details": dict(self.details),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SingleFeedback:
        return cls(
            execution=d.get("execution", ""),
            return_checking=d.get("return_checking"),
            code=d.get("code"),
            final_decision=d.get("final_decision"),
            error_fingerprints=tuple(d.get("error_fingerprints", ())),
            timings=dict(d.get("timings", {})),
            details=dict(d.get("details", {})),
        )

    @classmethod
    def merge(cls, parts: Sequence[SingleFeedback]) -> SingleFeedback:
        """Merge feedback of several evaluators of one task: sections joined, decision AND."""
        if not parts:
            raise ValueError("merge() needs at least one feedback")
        if len(parts) == 1:
            return parts[0]

        def join(values: list[str | None]) -> str | None:
            kept = [v for v in values if v]
            return "\n\n".join(kept) if kept else None

        decisions = [p.final_decision for p in parts]
        decision = None if any(d is None for d in decisions) else all(decisions)
        fps: list[str] = []
        for p in parts:
            fps.extend(f for f in p.error_fingerprints if f not in fps)
        timings: dict[str, float] = {}
        details: dict[str, Any] = {}
        for p in parts:
            timings.update(p.timings)
            details.update(p.details)
        return cls(
            execution=join([p.execution for p in parts]) or "",
            return_checking=join([p.return_checking for p in parts]),
            code=join([p.code for p in parts]),
            final_decision=decision,
            error_fingerprints=tuple(fps),
            timings=timings,
            details=details,
        )


@dataclass(frozen=True)
class MultiFeedback(Sequence["SingleFeedback | None"]):
    """Feedback of one evolution step: one entry per task, ``None`` for skipped tasks."""

    items: tuple[SingleFeedback | None, ...] = ()

    @overload
    def __getitem__(self, i: int) -> SingleFeedback | None: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[SingleFeedback | None]: ...
    def __getitem__(
        self, i: int | slice
    ) -> SingleFeedback | Sequence[SingleFeedback | None] | None:
        return self.items[i]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[SingleFeedback | None]:
        return iter(self.items)

    def finished(self) -> bool:
        """True when every task has feedback and every decision is success."""
        return bool(self.items) and all(f is not None and f.succeeded for f in self.items)

    def to_dict(self) -> dict[str, Any]:
        return {"items": [None if f is None else f.to_dict() for f in self.items]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MultiFeedback:
        return cls(tuple(None if f is None else SingleFeedback.from_dict(f) for f in d["items"]))


@dataclass(frozen=True)
class Knowledge:
    """One attempt remembered: the task, the implementation and its feedback."""

    task: Task
    implementation: Workspace
    feedback: SingleFeedback
    id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "task": self.task.to_dict(),
            "implementation": self.implementation.to_dict(),
            "feedback": self.feedback.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Knowledge:
        return cls(
            task=Task.from_dict(d["task"]),
            implementation=Workspace.from_dict(d["implementation"]),
            feedback=SingleFeedback.from_dict(d["feedback"]),
            id=d.get("id", ""),
        )


@dataclass(frozen=True)
class ScoredKnowledge:
    """A retrieved knowledge item with its similarity score (higher is more similar)."""

    knowledge: Knowledge
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"knowledge": self.knowledge.to_dict(), "score": self.score}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ScoredKnowledge:
        return cls(Knowledge.from_dict(d["knowledge"]), float(d["score"]))


@dataclass(frozen=True)
class ErrorFix:
    """An (error, failing code, fixed code) triple from a task that later succeeded."""

    fingerprint: str
    error_text: str
    failed: Knowledge
    fixed: Knowledge
    score: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "error_text": self.error_text,
            "failed": self.failed.to_dict(),
            "fixed": self.fixed.to_dict(),
            "score": self.score,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ErrorFix:
        return cls(
            fingerprint=d["fingerprint"],
            error_text=d["error_text"],
            failed=Knowledge.from_dict(d["failed"]),
            fixed=Knowledge.from_dict(d["fixed"]),
            score=float(d.get("score", 1.0)),
        )


@dataclass(frozen=True)
class QueriedKnowledge:
    """What a RAG strategy returns for one evolution step, keyed by task id.

    Attributes:
        success_task_to_knowledge: tasks already solved → their successful knowledge.
        failed_task_info_set: tasks past the trial limit (skipped from now on).
        former_traces: task id → its own earlier attempts (oldest first).
        similar_successful: task id → similar successful implementations, best first.
        error_fixes: task id → fixes for the errors its last attempt hit.
        component_matches: task id → successful knowledge of tasks sharing components.
    """

    success_task_to_knowledge: Mapping[str, Knowledge] = field(default_factory=dict)
    failed_task_info_set: frozenset[str] = field(default_factory=frozenset)
    former_traces: Mapping[str, tuple[Knowledge, ...]] = field(default_factory=dict)
    similar_successful: Mapping[str, tuple[ScoredKnowledge, ...]] = field(default_factory=dict)
    error_fixes: Mapping[str, tuple[ErrorFix, ...]] = field(default_factory=dict)
    component_matches: Mapping[str, tuple[ScoredKnowledge, ...]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "success_task_to_knowledge": {
                k: v.to_dict() for k, v in self.success_task_to_knowledge.items()
            },
            "failed_task_info_set": sorted(self.failed_task_info_set),
            "former_traces": {k: [x.to_dict() for x in v] for k, v in self.former_traces.items()},
            "similar_successful": {
                k: [x.to_dict() for x in v] for k, v in self.similar_successful.items()
            },
            "error_fixes": {k: [x.to_dict() for x in v] for k, v in self.error_fixes.items()},
            "component_matches": {
                k: [x.to_dict() for x in v] for k, v in self.component_matches.items()
            },
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> QueriedKnowledge:
        return cls(
            success_task_to_knowledge={
                k: Knowledge.from_dict(v)
                for k, v in d.get("success_task_to_knowledge", {}).items()
            },
            failed_task_info_set=frozenset(d.get("failed_task_info_set", ())),
            former_traces={
                k: tuple(Knowledge.from_dict(x) for x in v)
                for k, v in d.get("former_traces", {}).items()
            },
            similar_successful={
                k: tuple(ScoredKnowledge.from_dict(x) for x in v)
                for k, v in d.get("similar_successful", {}).items()
            },
            error_fixes={
                k: tuple(ErrorFix.from_dict(x) for x in v)
                for k, v in d.get("error_fixes", {}).items()
            },
            component_matches={
                k: tuple(ScoredKnowledge.from_dict(x) for x in v)
                for k, v in d.get("component_matches", {}).items()
            },
        )
