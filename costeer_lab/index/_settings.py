"""Settings of the vector index (section ``index`` of :class:`costeer_lab.settings.Settings`)."""

from __future__ import annotations

from costeer_lab.settings._index import IndexSettings

__all__ = ["IndexSettings", "apply_faiss_threads", "get_index_settings"]


def get_index_settings() -> IndexSettings:
    """The ``index`` section of the process settings, or the defaults while it is not wired in."""
    from costeer_lab.settings import get_settings

    section = getattr(get_settings(), "index", None)
    return section if isinstance(section, IndexSettings) else IndexSettings()


_threads_applied = False


def apply_faiss_threads() -> None:
    """Apply ``faiss_threads`` once per process (called when a ``FaissIndex`` is created)."""
    global _threads_applied
    if _threads_applied:
        return
    _threads_applied = True
    threads = get_index_settings().faiss_threads
    if threads is not None:
        import faiss

        faiss.omp_set_num_threads(threads)
