"""PatternMemory: reusable templates of working code, found again by what they solve.

Stored per pattern (record kind ``memory.pattern``, key = the pattern id): problem type,
description, the original code, its template (:func:`make_template`), tests, dependencies and
the time it was stored, and whether the write gate verified it (``verified``, ``verification``).
The id is a hash of problem type and template, so the same technique
stored twice is one pattern. Its vector lives in the store's ``memory.patterns`` collection and
embeds what a search embeds (:func:`pattern_text`): the description, or the problem type when
there is no description, so a request worded like a stored description scores ~1.0. A store
written by an older version (problem type, description and template embedded together) is
re-embedded in this form when a memory first opens it (nothing stored is lost; the form is kept
in a ``memory.meta`` record).

A search keeps the patterns whose similarity reaches the threshold (``"calibrated"`` by default:
the embedder's calibrated threshold, :mod:`~costeer_lab.memory._calibrate`) and ranks them by
``similarity + outcome_weight * (success_rate - 0.5)``: of equally similar patterns, the one that
led to success more often comes first (``PatternMatch.score``).

Usage and outcomes are counted in the pattern record itself (``usage_count``, ``successes``,
``failures``), read-modified-written inside one store transaction — SQLite serialises write
transactions (``BEGIN IMMEDIATE``), so concurrent agents never lose a count; every outcome is also
kept as an event record (``memory.pattern_outcome``, with its time) and every recorded search in
the search log, for metrics over time windows. ``success_rate`` = successes / recorded outcomes
(``None`` before the first outcome). A search reads one record per returned pattern.

Write gate: a pattern is stored only when its code and tests pass a static security check
(:func:`~costeer_lab.memory._gate.check_code_security`: ``eval`` of input, ``shell=True``,
``pickle.loads``, ``verify=False``, …) and — when it comes with runnable tests and
``memory.verify_patterns`` is on (the default) — the sandbox re-runs the tests and they pass
(:func:`~costeer_lab.memory._verify.verify_pattern`). A pattern without runnable tests is
stored with ``verified=False``: only the caller's ``passed=True`` vouches for it.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from costeer_lab.errors import InvalidInputError, MemoryRefusedError, NotFoundError
from costeer_lab.memory._base import MemoryBase, check_text, refuse_credentials
from costeer_lab.memory._calibrate import SPECIFIED_THRESHOLD as SPECIFIED
from costeer_lab.memory._calibrate import calibrated_threshold
from costeer_lab.memory._gate import check_code_security
from costeer_lab.memory._template import make_template
from costeer_lab.memory._verify import Verification, verify_pattern
from costeer_lab.sandbox import Sandbox

__all__ = ["PATTERN_KIND", "PatternMatch", "PatternMemory", "PatternStats", "pattern_text"]

PATTERN_KIND = "memory.pattern"
OUTCOME_KIND = "memory.pattern_outcome"
#: Record kind of the memory's own bookkeeping (the form of the stored vectors).
META_KIND = "memory.meta"
_FORM_KEY = "patterns.vector_form"
#: Form of the stored pattern vectors: 2 = :func:`pattern_text` (1: type + description + template).
VECTOR_FORM = 2
#: A ranked search draws this many times ``limit`` candidates above the threshold to re-rank.
_POOL = 4


def pattern_text(problem_type: str, description: str) -> str:
    """The text a pattern's vector embeds, and the text to search with for the same task: the
    description, or the problem type when the description is empty.

    Example:
        >>> pattern_text("rolling mean", "20-day moving average"), pattern_text("sum", " ")
        ('20-day moving average', 'sum')
    """
    return description if description.strip() else problem_type


@dataclass(frozen=True)
class PatternStats:
    """Usage and outcomes of one pattern."""

    usage_count: int
    successes: int
    failures: int

    @property
    def success_rate(self) -> float | None:
        """Successes / recorded outcomes; ``None`` before the first outcome."""
        done = self.successes + self.failures
        return self.successes / done if done else None


@dataclass(frozen=True)
class PatternMatch:
    """A pattern returned by :meth:`PatternMemory.search_patterns`."""

    id: str
    problem_type: str
    description: str
    template: str
    code: str
    tests: tuple[str, ...]
    dependencies: tuple[str, ...]
    similarity: float
    metadata: dict[str, Any]
    usage_count: int
    successes: int
    failures: int
    verified: bool = False
    #: The rank score: ``similarity + outcome_weight * (success_rate - 0.5)`` (0.5 without
    #: outcomes).
    score: float = 0.0

    @property
    def success_rate(self) -> float | None:
        """Successes / recorded outcomes; ``None`` before the first outcome."""
        done = self.successes + self.failures
        return self.successes / done if done else None


def _str_tuple(value: object, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,) if value else ()
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise InvalidInputError(f"{what} must be a str or a sequence of str, got {value!r:.80}")
    return tuple(value)


class PatternMemory(MemoryBase):
    """Reusable code patterns with similarity search and usage/success accounting.

    See :class:`~costeer_lab.memory._base.MemoryBase` for ``store``, ``embedder``, ``settings``.

    Example:
        >>> mem = PatternMemory(":memory:", embedder="hashing")
        >>> code = "def f(df):\\n    return df['close'].rolling(20).mean()"
        >>> pid = mem.store_pattern("rolling mean factor", code, description="moving average")
        >>> [m.id == pid for m in mem.search_patterns("rolling mean factor moving average",
        ...                                           threshold=0.5)]
        [True]
        >>> mem.record_outcome(pid, success=True).success_rate
        1.0
    """

    collection = "memory.patterns"
    memory_kind = "pattern"
    #: Sandbox the write gate re-runs tests in (``None``: the process's shared sandbox).
    sandbox: Sandbox | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._migrate_vectors()

    def _migrate_vectors(self) -> None:
        """Re-embed the stored patterns when their vectors are of an older form."""
        if self.store.read_only or self._form() == VECTOR_FORM:
            return
        with self.store.transaction():
            self._lock_for_update()
            if self._form() == VECTOR_FORM:  # another process migrated meanwhile
                return
            found = list(self.store.iter_records(PATTERN_KIND))
            for start in range(0, len(found), 500):
                batch = found[start : start + 500]
                texts = [
                    pattern_text(r["problem_type"], r.get("description", "")) for _, r in batch
                ]
                self.vectors.add([pid for pid, _ in batch], self._embed(texts))
            self.store.put_record(
                META_KIND,
                _FORM_KEY,
                {"form": VECTOR_FORM, "re_embedded": len(found), "t": time.time()},
            )

    def _form(self) -> int | None:
        meta = self.store.get_record(META_KIND, _FORM_KEY)
        return None if meta is None else int(meta.get("form", 0))

    # -- writes ------------------------------------------------------------------------------
    def store_pattern(
        self,
        problem_type: str,
        code: str,
        tests: str | Sequence[str] = (),
        dependencies: Sequence[str] = (),
        *,
        description: str = "",
        passed: bool = True,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Store working ``code`` as a pattern; returns its id (the same id for the same template).

        Args:
            problem_type: what kind of problem the code solves (``"momentum factor"``).
            code: Python code that passed its tests.
            tests: the tests it passed (code or descriptions). Runnable tests (code with an
                ``assert`` or a ``test_*`` function) are re-run in the sandbox with the code
                before it is stored (``memory.verify_patterns``); the pattern is then
                ``verified``. Without runnable tests it is stored with ``verified=False``.
            dependencies: packages it needs (``["pandas"]``).
            description: a task description; the pattern's vector embeds it (the problem type
                when it is empty), so search with the same kind of text.
            passed: whether the code passed; ``False`` is refused.
            metadata: JSON-serializable extras kept with the pattern (its source task, …);
                scanned for credentials like the code.

        Raises:
            MemoryRefusedError: the code failed (``kind="failed"``), does not parse
                (``"syntax"``), contains a credential (``"credential:<kind>"``), fails the
                static security check (``"security:<rule>"``, e.g. ``"security:eval-exec"``;
                the message names every rule and line), fails its re-run tests
                (``"tests_failed"``) or the sandbox could not run them (``"unverifiable"``).
            InvalidInputError: an argument has the wrong type.
        """
        return self.store_patterns(
            [
                {
                    "problem_type": problem_type,
                    "code": code,
                    "tests": tests,
                    "dependencies": dependencies,
                    "description": description,
                    "passed": passed,
                    "metadata": metadata,
                }
            ]
        )[0]

    def store_patterns(self, items: Sequence[dict[str, Any]]) -> list[str]:
        """Store several patterns in one transaction (keys as :meth:`store_pattern`'s arguments).

        Every item is checked before anything is written: one refused item stores nothing.
        """
        prepared: dict[str, dict[str, Any]] = {}
        order: list[str] = []
        for item in items:
            pid, record = self._prepare(**item)
            order.append(pid)
            prepared.setdefault(pid, record)
        if not prepared:
            return []
        with self.store.transaction():
            self._lock_for_update()
            known = set(self.store.get_records(PATTERN_KIND, list(prepared)))  # one query
            new = [pid for pid in prepared if pid not in known]
            if new:
                texts = [prepared[pid].pop("_text") for pid in new]
                self.store.put_records(PATTERN_KIND, [(pid, prepared[pid]) for pid in new])
                self.vectors.add(new, self._embed(texts))
        return order

    def _prepare(
        self,
        problem_type: str,
        code: str,
        tests: str | Sequence[str] = (),
        dependencies: Sequence[str] = (),
        description: str = "",
        passed: bool = True,
        metadata: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        check_text(problem_type, "problem_type", empty=False)
        check_text(code, "code", empty=False)
        check_text(description, "description")
        test_list = _str_tuple(tests, "tests")
        deps = _str_tuple(dependencies, "dependencies")
        if passed is not True:
            raise MemoryRefusedError(
                f"refusing to store a pattern for {problem_type!r}: the code did not pass "
                f"(passed={passed!r}); only working code becomes a pattern",
                kind="failed",
            )
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInputError(f"metadata must be a mapping, got {metadata!r:.80}")
        extras = json.dumps(dict(metadata or {}), sort_keys=True, default=str)
        refuse_credentials(
            [
                ("code", code),
                ("tests", "\n".join(test_list)),
                ("description", description),
                ("metadata", extras),
            ],
            f"a pattern for {problem_type!r}",
        )
        template = make_template(code)
        what = f"a pattern for {problem_type!r}"
        refuse_insecure([("code", code), *(("test", t) for t in test_list)], what)
        check = self._verify(code, test_list, deps, what)
        digest = hashlib.sha256(f"{problem_type}\0{template}".encode()).hexdigest()[:24]
        record = {
            "problem_type": problem_type,
            "description": description,
            "template": template,
            "code": code,
            "tests": list(test_list),
            "dependencies": list(deps),
            "metadata": json.loads(extras),
            "created_at": time.time(),
            "usage_count": 0,
            "successes": 0,
            "failures": 0,
            "verified": check.verified,
            "verification": check.reason,
            "_text": pattern_text(problem_type, description),
        }
        return f"pattern:{digest}", record

    def _verify(
        self, code: str, tests: Sequence[str], deps: Sequence[str], what: str
    ) -> Verification:
        """Re-run the runnable tests (module docstring); refuse a pattern that fails them."""
        if not self.settings.verify_patterns:
            return Verification("unverified", "not verified: memory.verify_patterns is off")
        check = verify_pattern(
            code,
            tests,
            dependencies=deps,
            sandbox=self.sandbox,
            wall_time_s=self.settings.verify_timeout_s,
        )
        if check.status in {"failed", "error"}:
            kind = "tests_failed" if check.status == "failed" else "unverifiable"
            raise MemoryRefusedError(
                f"refusing to store {what}: {check.reason}; a pattern is stored only when its "
                "tests pass when re-run (or set memory.verify_patterns to false)",
                kind=kind,
            )
        return check

    def record_outcome(self, pattern_id: str, success: bool) -> PatternStats:
        """Record that using ``pattern_id`` led to a success or a failure; returns its stats.

        Raises:
            NotFoundError: no such pattern.
            InvalidInputError: ``success`` is not a bool.
        """
        if not isinstance(success, bool):
            raise InvalidInputError(f"success must be a bool, got {success!r}")
        with self.store.transaction():
            self._lock_for_update()
            record = self._require(pattern_id)
            record["successes" if success else "failures"] += 1
            self.store.put_record(PATTERN_KIND, pattern_id, record)
            self.store.put_record(
                OUTCOME_KIND,
                uuid.uuid4().hex,
                {"pattern_id": pattern_id, "success": success, "t": time.time()},
            )
        return _stats_of(record)

    # -- reads -------------------------------------------------------------------------------
    def _require(self, pattern_id: str) -> dict[str, Any]:
        check_text(pattern_id, "pattern_id", empty=False)
        record = self.store.get_record(PATTERN_KIND, pattern_id)
        if record is None:
            raise NotFoundError(f"no pattern {pattern_id!r} in the memory at {self.store.url!r}")
        return dict(record)

    def stats(self, pattern_id: str) -> PatternStats:
        """Usage count and outcomes of a pattern."""
        return _stats_of(self._require(pattern_id))

    def __len__(self) -> int:
        return self.store.count_records(PATTERN_KIND)

    def search_patterns(
        self,
        description: str,
        threshold: float | str | None = None,
        limit: int | None = None,
        *,
        problem_type: str | None = None,
        record: bool = True,
    ) -> list[PatternMatch]:
        """Patterns whose vector has cosine ``>= threshold`` with ``description``, best first.

        Ranked by ``similarity + settings.outcome_weight * (success_rate - 0.5)``: among equally
        similar patterns, the one with more successes first.

        Args:
            description: what the caller wants to solve (worded like a stored description).
            threshold: minimum cosine similarity (default ``settings.pattern_threshold``:
                ``"calibrated"``, the embedder's calibrated threshold; or a number).
            limit: at most this many (default ``settings.limit``, 5).
            problem_type: only patterns of this problem type.
            record: log the search (hit rate) and count a use of every returned pattern
                (``usage_count`` then includes this use). ``False`` only looks.
        """
        check_text(description, "description")
        threshold = self._pattern_threshold(threshold)
        limit = self._limit(limit)
        weight = float(self.settings.outcome_weight)
        ids = None
        if problem_type is not None:
            ids = [
                k for k, _ in self.store.iter_records(PATTERN_KIND, {"problem_type": problem_type})
            ]
        pool = limit if weight == 0 else limit * _POOL
        found = self.vectors.search(
            self._embed([description])[0], pool, min_score=threshold, ids=ids
        )
        if record:
            with self.store.transaction():
                self._lock_for_update()
                records = self._records([pid for pid, _ in found])
                hits = _rank(found, records, weight)[:limit]
                used = [(pid, records[pid]) for pid, _, _ in hits]
                for _, rec in used:
                    rec["usage_count"] = int(rec.get("usage_count", 0)) + 1
                self.store.put_records(PATTERN_KIND, used)
                self._log_search([(pid, sim) for pid, sim, _ in hits], threshold)
        else:
            records = self._records([pid for pid, _ in found])
            hits = _rank(found, records, weight)[:limit]
        return [_match(pid, records[pid], sim, score) for pid, sim, score in hits]

    def _pattern_threshold(self, value: float | str | None) -> float:
        """A threshold argument or setting as a cosine (``"calibrated"``: the embedder's)."""
        if value is None:
            value = self.settings.pattern_threshold
        if value == "calibrated":
            return calibrated_threshold(self.embedder.id)
        return self._threshold(value, SPECIFIED)

    def _records(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        found = self.store.get_records(PATTERN_KIND, ids)  # one query for all the hits
        return {pid: dict(rec) for pid, rec in found.items()}


def _stats_of(record: dict[str, Any]) -> PatternStats:
    return PatternStats(
        usage_count=int(record.get("usage_count", 0)),
        successes=int(record.get("successes", 0)),
        failures=int(record.get("failures", 0)),
    )


def _rank(
    hits: Sequence[tuple[str, float]], records: dict[str, dict[str, Any]], weight: float
) -> list[tuple[str, float, float]]:
    """``(id, similarity, score)`` of the hits that have a record, best score first (ties keep
    the similarity order)."""
    out = []
    for pid, sim in hits:
        if pid in records:
            rate = _stats_of(records[pid]).success_rate
            out.append((pid, sim, sim + weight * ((0.5 if rate is None else rate) - 0.5)))
    return sorted(out, key=lambda h: -h[2])


def _match(pid: str, rec: dict[str, Any], score: float, rank: float) -> PatternMatch:
    st = _stats_of(rec)
    return PatternMatch(
        id=pid,
        problem_type=rec["problem_type"],
        description=rec.get("description", ""),
        template=rec["template"],
        code=rec["code"],
        tests=tuple(rec.get("tests", ())),
        dependencies=tuple(rec.get("dependencies", ())),
        similarity=score,
        metadata=dict(rec.get("metadata") or {}),
        usage_count=st.usage_count,
        successes=st.successes,
        failures=st.failures,
        verified=bool(rec.get("verified", False)),
        score=rank,
    )


def refuse_insecure(texts: Sequence[tuple[str, str]], what: str) -> None:
    """Raise MemoryRefusedError naming every security finding of the ``(label, code)`` pairs.

    The error's ``kind`` is ``"security:<rule>"`` of the first finding.
    """
    findings = [(label, f) for label, text in texts for f in check_code_security(text)]
    if findings:
        listed = "; ".join(f"{label}: {f.describe()}" for label, f in findings)
        raise MemoryRefusedError(
            f"refusing to store {what}: the static security check found {listed}",
            kind=f"security:{findings[0][1].rule}",
        )
