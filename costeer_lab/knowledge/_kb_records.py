"""Records of the graph knowledge base: attempt inputs, remembered attempts, fixes, successes."""

from __future__ import annotations

from dataclasses import dataclass

from costeer_lab._json import encoder
from costeer_lab.records import SingleFeedback, Task, Workspace

__all__ = [
    "ATTEMPT_KIND",
    "GROUND_TRUTH",
    "QUERY_VECTOR_MEMO",
    "SELF_EARNED",
    "Attempt",
    "AttemptInput",
    "Fix",
    "Success",
    "feedback_score",
    "files_text",
]

#: Record kind of the attempt log of the graph KB.
ATTEMPT_KIND = "kg_attempt"
#: Query-text embeddings kept in memory (least recently used dropped first).
QUERY_VECTOR_MEMO = 4096
GROUND_TRUTH = "ground_truth"
SELF_EARNED = "self"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One remembered attempt (in memory)."""

    attempt: int
    trace: str
    succeeded: bool
    level: int
    score: float | None
    errors: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class AttemptInput:
    """One attempt to remember (see :meth:`KnowledgeBaseV2.record_many`)."""

    task: Task
    workspace: Workspace
    feedback: SingleFeedback
    run_id: str
    attempt: int
    provenance: str = "self"
    with_trace: bool = True


@dataclass(frozen=True, slots=True)
class Fix:
    """A failing trace and the success of the same task, for one error node."""

    fingerprint: str
    error_text: str
    failed_trace: str
    success: str
    td: str


@dataclass(slots=True)
class Success:
    """The success node of a task description, its provenance and the runs that earned it.

    One per solved task description, so kept small (slots; ``runs`` a tuple, usually of one run:
    a set would cost four times the memory at 100k tasks).
    """

    node: str
    provenance: str
    runs: tuple[str, ...] = ()

    def add_run(self, run: str) -> None:
        """Count ``run`` among the runs that earned this success (once)."""
        if run not in self.runs:
            self.runs = (*self.runs, run)


#: ``json.dumps(..., sort_keys=True)`` with one encoder for every call: the same text.
_SORTED = encoder(sort_keys=True)


def files_text(ws: Workspace) -> str:
    """Canonical JSON text of a workspace (identical workspaces give identical text).

    Example:
        >>> files_text(Workspace({"b.py": "2", "a.py": "1"}, main_file="a.py"))
        '{"files": {"a.py": "1", "b.py": "2"}, "main_file": "a.py"}'
    """
    return _SORTED({"main_file": ws.main_file, "files": dict(ws.files)})


def feedback_score(fb: SingleFeedback) -> float | None:
    """``feedback.details["score"]`` when it is a number, else ``None``."""
    s = fb.details.get("score")
    return float(s) if isinstance(s, int | float) and not isinstance(s, bool) else None
