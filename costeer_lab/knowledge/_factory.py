"""Factories (``open_kb``, ``make_rag_strategy``) and store inspection (``kb_stats``,
``kb_search``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, overload

from costeer_lab.embed import BaseEmbedder, get_embedder
from costeer_lab.errors import UnknownNameError, did_you_mean
from costeer_lab.knowledge._components import ComponentExtractor
from costeer_lab.knowledge._kb_v1 import KB1_COLLECTION, KnowledgeBaseV1
from costeer_lab.knowledge._kb_v2 import KnowledgeBaseV2
from costeer_lab.knowledge._options import validate_rag_options
from costeer_lab.knowledge._querylog import QUERY_LOG_KIND
from costeer_lab.knowledge._rag_v1 import RAGStrategyV1
from costeer_lab.knowledge._rag_v2 import RAGStrategyV2
from costeer_lab.settings import RAGSettings, get_settings
from costeer_lab.store import BaseStore, get_store

__all__ = ["kb_search", "kb_stats", "make_extractor", "make_rag_strategy", "open_kb"]

_VERSIONS = ("v1", "v2")


def _embedder(embedder: str | BaseEmbedder) -> BaseEmbedder:
    return embedder if isinstance(embedder, BaseEmbedder) else get_embedder(embedder)


def make_extractor(settings: RAGSettings | None = None) -> ComponentExtractor:
    """The component extractor the settings name (``builtin`` or ``llm``)."""
    s = settings or get_settings().rag
    if s.component_extractor == "llm":
        from costeer_lab.knowledge._components_llm import LLMComponentExtractor

        o = get_settings().openai
        return LLMComponentExtractor(
            s.llm_model, api_key=o.api_key, base_url=o.base_url, timeout_s=o.timeout_s
        )
    from costeer_lab.knowledge._components import BuiltinComponentExtractor

    return BuiltinComponentExtractor()


@overload
def open_kb(
    store: BaseStore | str | Path | None = None,
    version: Literal["v2"] = "v2",
    embedder: str | BaseEmbedder | None = None,
    *,
    extractor: ComponentExtractor | None = None,
    settings: RAGSettings | None = None,
    snapshot: str | None = None,
) -> KnowledgeBaseV2: ...
@overload
def open_kb(
    store: BaseStore | str | Path | None,
    version: Literal["v1"],
    embedder: str | BaseEmbedder | None = None,
    *,
    extractor: ComponentExtractor | None = None,
    settings: RAGSettings | None = None,
    snapshot: str | None = None,
) -> KnowledgeBaseV1: ...
@overload
def open_kb(
    store: BaseStore | str | Path | None = None,
    version: str = "v2",
    embedder: str | BaseEmbedder | None = None,
    *,
    extractor: ComponentExtractor | None = None,
    settings: RAGSettings | None = None,
    snapshot: str | None = None,
) -> KnowledgeBaseV1 | KnowledgeBaseV2: ...
def open_kb(
    store: BaseStore | str | Path | None = None,
    version: str = "v2",
    embedder: str | BaseEmbedder | None = None,
    *,
    extractor: ComponentExtractor | None = None,
    settings: RAGSettings | None = None,
    snapshot: str | None = None,
) -> KnowledgeBaseV1 | KnowledgeBaseV2:
    """Open (or create) a knowledge base in a store; the graph is rebuilt from it.

    Args:
        store: a store, a store URL / SQLite path, or ``None`` (the settings' store URL).
        version: ``"v2"`` (graph KB) or ``"v1"``.
        embedder: embedder name or instance (vectors are cached in the store); ``None``: the
            settings' ``embedder`` (default ``"hashing"``).
        extractor: component extractor of the V2 KB (default: per settings).
        settings: RAG settings (index kind, extractor); default: the ``rag`` section.
        snapshot: open the KB as of this snapshot of the store (``kb.snapshot(name)``): a
            read-only KB on its own connection (writes raise ``StoreError``), closed by
            ``kb.close()``. Needs a store file or PostgreSQL (not ``:memory:``).

    A store opened here from a URL or path is closed by ``kb.close()``; a store object passed in
    stays open (it belongs to the caller).

    Raises:
        UnknownNameError: unknown ``version``, or no snapshot of that name (the message lists
            the known ones).
        EmbedderMismatchError: the store holds vectors of another embedder.

    Example:
        >>> kb = open_kb(store=":memory:", version="v2", embedder="hashing")
        >>> kb.stats()["nodes.task_description"]
        0
    """
    if version not in _VERSIONS:
        raise UnknownNameError(
            f"unknown KB version {version!r}; {did_you_mean(version, _VERSIONS)}"
        )
    s = settings or get_settings().rag
    st = get_store(store)
    owns = not isinstance(store, BaseStore)
    if snapshot is not None:
        try:
            view = st.at_snapshot(snapshot)
        finally:
            if owns:
                st.close()
        st, owns = view, True
    emb = _embedder(get_settings().embedder if embedder is None else embedder)
    kb: KnowledgeBaseV1 | KnowledgeBaseV2
    if version == "v1":
        kb = KnowledgeBaseV1(st, emb, index_kind=s.index_kind, hnsw_above=s.hnsw_above)
        kb.owns_store = owns
        return kb
    kb = KnowledgeBaseV2(
        st,
        emb,
        extractor=extractor or make_extractor(s),
        index_kind=s.index_kind,
        hnsw_above=s.hnsw_above,
        index_kw={
            "hnsw_m": s.hnsw_m,
            "ef_construction": s.hnsw_ef_construction,
            "ef_search": s.hnsw_ef_search,
        },
    )
    kb.owns_store = owns
    return kb


@overload
def make_rag_strategy(
    name: Literal["v2"] = "v2", *, seed: int | None = None, **options: Any
) -> RAGStrategyV2: ...
@overload
def make_rag_strategy(
    name: Literal["v1"], *, seed: int | None = None, **options: Any
) -> RAGStrategyV1: ...
@overload
def make_rag_strategy(
    name: str = "v2", *, seed: int | None = None, **options: Any
) -> RAGStrategyV1 | RAGStrategyV2: ...
def make_rag_strategy(
    name: str = "v2", *, seed: int | None = None, **options: Any
) -> RAGStrategyV1 | RAGStrategyV2:
    """A RAG strategy by name; ``options`` override :class:`RAGSettings` fields.

    Raises:
        UnknownNameError: unknown ``name``.
        InvalidInputError: an option the strategy does not honour, or a bad value (see
            :func:`validate_rag_options`).

    Example:
        >>> make_rag_strategy("v2", seed=3, max_former_traces=5).settings.max_former_traces
        5
    """
    if seed is not None:
        options = {**options, "seed": seed}
    settings = validate_rag_options(name, options)
    return RAGStrategyV1(settings) if name == "v1" else RAGStrategyV2(settings)


def kb_stats(store: BaseStore | str | Path) -> dict[str, int]:
    """Counts of a KB store: nodes per kind, edges, attempts, query-log rows.

    Example:
        >>> kb_stats(":memory:")["query_log"]
        0
    """
    from costeer_lab.graph import NODE_KINDS
    from costeer_lab.knowledge._kb_v2 import ATTEMPT_KIND

    st = get_store(store)
    out = {f"nodes.{k}": st.count_nodes(k) for k in NODE_KINDS}
    out["edges"] = st.count_edges()
    out["attempts.v2"] = st.count_records(ATTEMPT_KIND)
    out["attempts.v1"] = st.count_records("kb1_attempt")
    out["query_log"] = st.count_records(QUERY_LOG_KIND)
    return out


def kb_search(
    store: BaseStore | str | Path,
    text: str,
    *,
    k: int = 5,
    kind: str = "task_description",
    embedder: str | BaseEmbedder | None = None,
) -> list[dict[str, Any]]:
    """The ``k`` nodes of one kind most similar to ``text``: ``{id, kind, score, content}``.

    ``embedder=None`` uses the embedder the store's collection was built with.
    """
    from costeer_lab.graph import collection_name
    from costeer_lab.index import VectorCollection

    st = get_store(store)
    name = KB1_COLLECTION if kind == "kb1" else collection_name(kind)
    info = st.collection_info(name)
    if info is None:
        return []
    if embedder is None:
        base = info[0].split("@", 1)[0]
        emb = get_embedder(base, dim=info[1]) if base == "hashing" else get_embedder(base)
    else:
        emb = _embedder(embedder)
    res = VectorCollection(st, name, emb).search_text(text, k)
    nodes = {n.id: n for n in st.get_nodes(list(res.ids))}
    return [
        {
            "id": i,
            "kind": nodes[i].kind if i in nodes else kind,
            "score": float(sc),
            "content": nodes[i].content if i in nodes else i,
        }
        for i, sc in zip(res.ids, res.scores, strict=True)
    ]
