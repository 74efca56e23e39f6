"""FailureMemory: errors met on the way, and — once found — what fixed them.

A failure is stored with the same error fingerprint the knowledge base uses
(:func:`costeer_lab._fingerprint.error_fingerprint` of ``"<type>: <message>"``), so the same
mistake in different code is one signature. Failures the rule of
:func:`costeer_lab._fingerprint.skip_reason` rejects (plain syntax typos, infrastructure
errors) are not stored. Only a *solved* failure gets a vector (its fingerprint embedded, in the
``memory.failures`` collection), so :meth:`FailureMemory.search_similar_failures` returns nothing
but failures with a solution, and the threshold applies in the vector search itself.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from costeer_lab._fingerprint import error_fingerprint, skip_reason
from costeer_lab.errors import InvalidInputError, NotFoundError
from costeer_lab.memory._base import MemoryBase, check_text, refuse_credentials

__all__ = ["FAILURE_KIND", "FailureMatch", "FailureMemory", "failure_signature"]

FAILURE_KIND = "memory.failure"
_log = logging.getLogger(__name__)
_MAX_MESSAGE = 4000
_MAX_CODE = 20000


def failure_signature(error_type: str, error_message: str) -> str:
    """The error fingerprint of a failure (``"<type>: <message>"`` fingerprinted).

    Example:
        >>> failure_signature("KeyError", "'close'")
        'KeyError: <str>'
    """
    text = f"{error_type}: {error_message}" if error_type else error_message
    return error_fingerprint(text)


@dataclass(frozen=True)
class FailureMatch:
    """A solved failure returned by :meth:`FailureMemory.search_similar_failures`."""

    id: str
    error_type: str
    error_message: str
    fingerprint: str
    code_context: str
    solution: str
    task_id: str
    iteration: int
    similarity: float


class FailureMemory(MemoryBase):
    """Failures, their fingerprints and their solutions.

    Example:
        >>> mem = FailureMemory(":memory:", embedder="hashing")
        >>> fid = mem.store_failure("KeyError", "'close'", "df['close']", task_id="t1")
        >>> mem.search_similar_failures("KeyError: 'open'")  # no solution yet
        []
        >>> mem.update_solution(fid, "df['$close']")
        >>> [m.solution for m in mem.search_similar_failures("KeyError: 'open'")]
        ["df['$close']"]
    """

    collection = "memory.failures"
    memory_kind = "failure"
    #: Why the last :meth:`store_failure` call stored nothing (``None``: it stored).
    last_skip_reason: str | None = None

    def store_failure(
        self,
        error_type: str,
        error_message: str,
        code_context: str = "",
        task_id: str = "",
        iteration: int = 0,
    ) -> str | None:
        """Store a failure; returns its id, or ``None`` when the skip rule rejects it.

        The rule (plain syntax typos; infrastructure errors such as API time-outs, interrupted
        runs, "database is locked", a database driver's ``OperationalError``, a refused
        connection) is :func:`costeer_lab._fingerprint.skip_reason`; its reason is kept in
        :attr:`last_skip_reason` and logged (``INFO``, logger ``costeer_lab.memory._failure``).

        Example:
            >>> mem = FailureMemory(":memory:", embedder="hashing")
            >>> mem.store_failure("sqlite3.OperationalError", "database is locked") is None
            True
            >>> mem.last_skip_reason
            'infrastructure error: sqlite3.OperationalError: database is locked'


        Raises:
            MemoryRefusedError: the message or code contains a credential.
            InvalidInputError: an argument has the wrong type.
        """
        check_text(error_type, "error_type")
        check_text(error_message, "error_message")
        check_text(code_context, "code_context")
        check_text(task_id, "task_id")
        if isinstance(iteration, bool) or not isinstance(iteration, int) or iteration < 0:
            raise InvalidInputError(f"iteration must be an int >= 0, got {iteration!r}")
        if not (error_type.strip() or error_message.strip()):
            raise InvalidInputError("a failure needs an error_type or an error_message")
        self.last_skip_reason = skip_reason(error_message, error_type or None)
        if self.last_skip_reason is not None:
            _log.info(
                "failure memory: not storing a failure of task %r (%s)",
                task_id,
                self.last_skip_reason,
            )
            return None
        refuse_credentials(
            [("error message", error_message), ("code context", code_context)],
            f"a failure of task {task_id!r}",
        )
        failure_id = f"failure:{uuid.uuid4().hex}"
        self.store.put_record(
            FAILURE_KIND,
            failure_id,
            {
                "error_type": error_type,
                "error_message": error_message[:_MAX_MESSAGE],
                "fingerprint": failure_signature(error_type, error_message),
                "code_context": code_context[:_MAX_CODE],
                "task_id": task_id,
                "iteration": iteration,
                "t": time.time(),
                "solved": False,
                "solution": None,
                "solved_at": None,
            },
        )
        return failure_id

    def get_failure(self, failure_id: str) -> dict[str, Any]:
        """The stored record of a failure.

        Raises:
            NotFoundError: no such failure.
        """
        check_text(failure_id, "failure_id", empty=False)
        record = self.store.get_record(FAILURE_KIND, failure_id)
        if record is None:
            raise NotFoundError(f"no failure {failure_id!r} in the memory at {self.store.url!r}")
        return dict(record)

    def update_solution(self, failure_id: str, solution: str) -> None:
        """Mark a failure solved by ``solution`` (code or an explanation); replaces an older one.

        Raises:
            NotFoundError: no such failure.
            MemoryRefusedError: the solution contains a credential.
        """
        check_text(solution, "solution", empty=False)
        refuse_credentials([("solution", solution)], f"a solution of {failure_id!r}")
        with self.store.transaction():
            self._lock_for_update()
            record = self.get_failure(failure_id)
            record.update(solved=True, solution=solution[:_MAX_CODE], solved_at=time.time())
            self.store.put_record(FAILURE_KIND, failure_id, record)
            self.vectors.add([failure_id], self._embed([record["fingerprint"]]))

    def open_failures(self, task_id: str) -> list[str]:
        """Ids of the unsolved failures stored for ``task_id``, oldest first."""
        where: dict[str, str | bool] = {"task_id": check_text(task_id, "task_id"), "solved": False}
        return [key for key, _ in self.store.iter_records(FAILURE_KIND, where)]

    def __len__(self) -> int:
        return self.store.count_records(FAILURE_KIND)

    def search_similar_failures(
        self,
        error_message: str,
        threshold: float | None = None,
        limit: int | None = None,
        *,
        error_type: str = "",
        record: bool = True,
    ) -> list[FailureMatch]:
        """Solved failures whose fingerprint is similar to this error's, best first.

        Args:
            error_message: the error text (a traceback, or ``"KeyError: 'x'"``).
            threshold: minimum cosine similarity (default ``settings.failure_threshold``, 0.6).
            limit: at most this many (default ``settings.limit``, 5).
            error_type: the exception type, when known separately from the message.
            record: log the search (for the failure hit rate).
        """
        check_text(error_message, "error_message")
        check_text(error_type, "error_type")
        threshold = self._threshold(threshold, self.settings.failure_threshold)
        limit = self._limit(limit)
        query = failure_signature(error_type, error_message)
        hits = self.vectors.search(self._embed([query])[0], limit, min_score=threshold)
        if record:
            self._log_search(hits, threshold)
        records = self.store.get_records(FAILURE_KIND, [fid for fid, _ in hits])  # one query
        out = []
        for fid, score in hits:
            rec = records.get(fid)
            if not isinstance(rec, dict) or not rec.get("solved"):
                continue
            out.append(
                FailureMatch(
                    id=fid,
                    error_type=rec["error_type"],
                    error_message=rec["error_message"],
                    fingerprint=rec["fingerprint"],
                    code_context=rec["code_context"],
                    solution=rec["solution"],
                    task_id=rec["task_id"],
                    iteration=int(rec["iteration"]),
                    similarity=score,
                )
            )
        return out
