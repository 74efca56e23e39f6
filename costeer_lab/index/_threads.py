"""Apply the ``index`` settings section (FAISS threads) once per process."""

from __future__ import annotations

from costeer_lab.settings import get_settings

__all__ = ["apply_faiss_threads"]

_threads_applied = False


def apply_faiss_threads() -> None:
    """Apply ``get_settings().index.faiss_threads`` once per process (called when a
    ``FaissIndex`` is created)."""
    global _threads_applied
    if _threads_applied:
        return
    _threads_applied = True
    threads = get_settings().index.faiss_threads
    if threads is not None:
        import faiss

        faiss.omp_set_num_threads(threads)
