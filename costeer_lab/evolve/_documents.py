"""Optional document retrieval for the coder's context: before a task goes to the coder,
documentation retrieved from a :class:`~costeer_lab.docs.DocumentKB` (API docs of pandas, of
the user's own library, …) is added to the task's public information under
``task.extra["documentation"]``, so an arm with documents can be compared with one without.

The retrieval runs in the trusted loop process; only the formatted text crosses to the coder,
never the knowledge base. The query is the task's name, description and formulation.

Example:
    >>> from costeer_lab.docs import DocumentKB
    >>> from costeer_lab.records import Task
    >>> kb = DocumentKB("api", db_path=":memory:")
    >>> _ = kb.add_text("# rolling\\nDataFrame.rolling(window).mean()", path="pandas.md")
    >>> task = DocumentContext(kb, n_results=1).attach(Task("t", "MA5", "rolling mean"))
    >>> task.extra["documentation"].splitlines()[1]
    '[1] pandas.md — rolling (relevance 0.32)'
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

from costeer_lab.docs import DocumentKB, EmptyCollectionWarning, format_knowledge_context
from costeer_lab.records import Task

__all__ = ["DocumentContext"]


class DocumentContext:
    """Adds retrieved documentation to tasks (see the module docstring).

    Args:
        kb: the document knowledge base.
        n_results: documents retrieved per task (all shown, each clipped to ``max_chars``).
        where / version_filter / mode: passed to :meth:`DocumentKB.retrieve`.
        max_chars: characters kept per document.
    """

    def __init__(
        self,
        kb: DocumentKB,
        *,
        n_results: int = 3,
        where: dict[str, Any] | None = None,
        version_filter: str | None = None,
        mode: str | None = None,
        max_chars: int = 1200,
    ) -> None:
        self.kb = kb
        self.n_results = n_results
        self.where = where
        self.version_filter = version_filter
        self.mode = mode
        self.max_chars = max_chars

    def query_of(self, task: Task) -> str:
        """The retrieval query of a task."""
        return " ".join(p for p in (task.name, task.description, task.formulation) if p)

    def attach(self, task: Task) -> Task:
        """``task`` with ``extra["documentation"]`` set (the task itself when nothing matches)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptyCollectionWarning)  # no documents: no context
            hits = self.kb.retrieve(
                self.query_of(task),
                n_results=self.n_results,
                where=self.where,
                version_filter=self.version_filter,
                mode=self.mode,  # type: ignore[arg-type]
            )
        block = format_knowledge_context(hits, self.n_results, max_chars=self.max_chars)
        if not block:
            return task
        return replace(task, extra={**task.extra, "documentation": block})
