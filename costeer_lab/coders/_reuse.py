"""ReuseCoder: the offline baseline that adapts retrieved code (no LLM, no ground truth)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any

from costeer_lab.coders._adapt import adapt_workspace
from costeer_lab.coders._base import AbstractCoder, CoderResult
from costeer_lab.coders._generic import generic_attempt
from costeer_lab.records import (
    ErrorFix,
    Knowledge,
    QueriedKnowledge,
    ScoredKnowledge,
    SingleFeedback,
    Task,
)

__all__ = ["ReuseCoder", "wrong_answer"]

#: Exception names evaluators use for a verdict on code that ran (a wrong answer, not a crash):
#: a failed format or value check, a missing output, a value mismatch (its class: sign, scale,
#: window, ...), a failed hidden-test assertion.
VERDICT_ERRORS = frozenset(
    {"FactorCheckError", "FactorOutputError", "FactorMismatchError", "AssertionError"}
)


def wrong_answer(feedback: SingleFeedback | None) -> bool:
    """True when ``feedback`` is a failure of code that ran: the evaluator says the code ran to
    completion (``details["ran"]``) and the failure is not the infrastructure's, or every error
    fingerprint is a verdict (:data:`VERDICT_ERRORS`), none a crash.

    Example:
        >>> wrong_answer(SingleFeedback(final_decision=False,
        ...     error_fingerprints=("FactorMismatchError: window",)))
        True
        >>> wrong_answer(SingleFeedback(final_decision=False, details={"ran": True},
        ...     error_fingerprints=("FutureWarning: <str>", "FactorMismatchError: values")))
        True
        >>> wrong_answer(SingleFeedback(final_decision=False,
        ...     error_fingerprints=("KeyError: <str>",)))
        False
    """
    if feedback is None or feedback.succeeded:
        return False
    details = feedback.details
    if details.get("ran") is True and "infrastructure_error" not in details:
        return True
    if not feedback.error_fingerprints:
        return False
    return all(fp.split(":", 1)[0].strip() in VERDICT_ERRORS for fp in feedback.error_fingerprints)


class ReuseCoder(AbstractCoder):
    """Adapts retrieved code to the task; never calls an LLM, never sees ground truth.

    Its success therefore measures **retrieval quality**: it can only be as right as the
    knowledge the RAG strategy hands it. It is the honest offline baseline of the experiments
    and must never be tuned to make one knowledge arm win.

    Order of attempts for a task:

    1. the task's own successful knowledge (``qk.success_task_to_knowledge``), returned as is;
    2. a **known fix**: when the last feedback's error fingerprints match an error-query result
       (``qk.error_fixes``; all of them when the feedback carries no fingerprints), the fixed
       code of the best such pair, adapted to the task;
    3. retrieved successful implementations (``qk.similar_successful``, then
       ``qk.component_matches``), best first, each adapted with
       :func:`~costeer_lab.coders._adapt.adapt_workspace` (numbers, ``$fields`` and names that
       differ between the source and target formulations/names are rewritten token by token);
    4. an honest generic attempt that follows the task contract
       (:func:`~costeer_lab.coders._generic.generic_attempt`).

    The feedback decides the order of 2 and 3: after a **wrong answer** (the code ran and the
    evaluator's verdict failed it, :func:`wrong_answer`) the task's own retrieved candidates
    come before fixes borrowed from other tasks (the error says the result was wrong, not how
    another task avoided a crash); after a crash, known fixes for that error come first.

    Any candidate whose adapted code equals (content hash) a failed former attempt of this task
    is skipped. Ties between equal retrieval scores are broken by a hash seeded with ``seed``,
    so the coder is deterministic given its seed. Only the standard library is imported.

    Example:
        >>> from costeer_lab.records import QueriedKnowledge, Task
        >>> coder = ReuseCoder(seed=0)
        >>> task = Task("a/MA5", "MA5", "5-day mean", formulation="Mean($close, 5)/$close")
        >>> coder.implement_with_info(task, QueriedKnowledge(), None).strategy
        'generic'
    """

    name = "reuse"

    def __init__(self, *, seed: int = 0, use_component_matches: bool = True) -> None:
        self.seed = int(seed)
        self.use_component_matches = bool(use_component_matches)

    def _tiebreak(self, kid: str) -> str:
        return hashlib.sha256(f"{self.seed}:{kid}".encode()).hexdigest()

    def _ordered(self, items: Sequence[ScoredKnowledge]) -> list[Knowledge]:
        """Retrieval order kept; only runs of equal scores are reordered (seeded)."""
        out: list[Knowledge] = []
        i = 0
        while i < len(items):
            j = i
            while j < len(items) and items[j].score == items[i].score:
                j += 1
            run = sorted(items[i:j], key=lambda s: self._tiebreak(s.knowledge.id))
            out.extend(s.knowledge for s in run)
            i = j
        return out

    def _fixes(
        self, task: Task, qk: QueriedKnowledge, last: SingleFeedback | None
    ) -> list[ErrorFix]:
        fixes = list(qk.error_fixes.get(task.id, ()))
        if last is not None and last.error_fingerprints:
            wanted = set(last.error_fingerprints)
            fixes = [f for f in fixes if f.fingerprint in wanted]
        fixes.sort(key=lambda f: (-f.score, self._tiebreak(f.fixed.id)))
        return fixes

    def _candidates(self, task: Task, qk: QueriedKnowledge) -> Iterator[Knowledge]:
        seen: set[str] = set()
        sources = [qk.similar_successful.get(task.id, ())]
        if self.use_component_matches:
            sources.append(qk.component_matches.get(task.id, ()))
        for source in sources:
            for k in self._ordered(source):
                key = k.id or k.implementation.content_hash
                if key not in seen:
                    seen.add(key)
                    yield k

    def _implement(
        self,
        task: Task,
        queried_knowledge: QueriedKnowledge,
        last_feedback: SingleFeedback | None,
        *,
        stream: int | None = None,  # no random choice depends on the stream
    ) -> CoderResult:
        qk = queried_knowledge
        own = qk.success_task_to_knowledge.get(task.id)
        if own is not None:
            return CoderResult(
                own.implementation,
                used_knowledge_ids=(own.id,) if own.id else (),
                strategy="already_solved",
                notes="the task already has a successful implementation",
            )
        failed = {
            k.implementation.content_hash
            for k in qk.former_traces.get(task.id, ())
            if not k.feedback.succeeded
        }
        skipped: list[str] = []
        fixes = [(f.fixed, f) for f in self._fixes(task, qk, last_feedback)]
        candidates = [(k, None) for k in self._candidates(task, qk)]
        order = candidates + fixes if wrong_answer(last_feedback) else fixes + candidates
        for k, fix in order:
            ws, ad = adapt_workspace(k.implementation, k.task, task)
            if ws.content_hash in failed:
                skipped.append(k.id)
                continue
            if fix is not None:
                return CoderResult(
                    ws,
                    used_knowledge_ids=tuple(i for i in (k.id,) if i),
                    strategy="known_fix",
                    notes=f"applied the fix for {fix.fingerprint!r} from {k.task.name!r} "
                    f"({ad.describe()})",
                    extra=self._extra(skipped, ad.describe(), ad.conflicts),
                )
            return CoderResult(
                ws,
                used_knowledge_ids=(k.id,) if k.id else (),
                strategy="adapted",
                notes=f"adapted {k.task.name!r} ({ad.describe()})",
                extra=self._extra(skipped, ad.describe(), ad.conflicts),
            )
        why = "no knowledge retrieved" if not skipped else "every candidate already failed"
        return CoderResult(
            generic_attempt(task),
            strategy="generic",
            notes=f"generic attempt: {why}",
            extra=self._extra(skipped, "", ()),
        )

    @staticmethod
    def _extra(skipped: list[str], mapping: str, conflicts: tuple[str, ...]) -> dict[str, Any]:
        return {"skipped": list(skipped), "mapping": mapping, "conflicts": list(conflicts)}

    def to_config(self, *, include_secrets: bool = False) -> dict[str, Any]:
        """``{"name": "reuse", "seed": ..., "use_component_matches": ...}``."""
        return {
            "name": self.name,
            "seed": self.seed,
            "use_component_matches": self.use_component_matches,
        }
