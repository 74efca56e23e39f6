"""Exact behaviour of the document KB's read side (``docs/_reading.py``): the arguments each
retrieval passes on, topic de-duplication, the version filter combined with ``where``,
back-filling in batches, and the keys of ``documents()`` and ``stats()``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from costeer_lab.docs import DocumentKB, EmptyCollectionWarning
from costeer_lab.embed import get_embedder
from costeer_lab.store import SQLiteStore

SECTIONS = [
    "# Timeouts\nSet timeout=20 seconds on every request.",
    "# Retries\nRetry a request three times with backoff.",
    "# Pagination\nPage through results with a cursor token.",
    "# Errors\nErrors are raised as RequestError with a status code.",
    "# Logging\nLog each request with its duration.",
    "# Caching\nCache responses for sixty seconds.",
    "# Auth\nSend the token in the Authorization header.",
    "# Limits\nRate limits allow ten requests per second.",
]


def kb_of(texts: dict[str, str], **kw: object) -> DocumentKB:
    kb = DocumentKB("c", db_path=":memory:", **kw)  # type: ignore[arg-type]
    for path, text in texts.items():
        kb.add_text(text, path=path)
    return kb


def test_search_by_topic_returns_five_by_default_one_per_section() -> None:
    kb = kb_of({"a.md": "\n".join(SECTIONS)}, min_score=0.0)
    hits = kb.search_by_topic("request", where=None)
    assert len(hits) == 5 and len(kb.search_by_topic("request", 8)) == 8
    assert len({h["metadata"]["section_title"] for h in hits}) == 5


def test_sections_of_the_same_title_at_different_lines_are_both_kept() -> None:
    text = "# Setup\nInstall the setup tool.\n# Other\nUnrelated words.\n# Setup\nRun setup twice."
    hits = kb_of({"a.md": text}).search_by_topic("setup", 5)
    metas = [h["metadata"] for h in hits]
    lines = [m["start_line"] for m in metas if m["section_title"] == "Setup"]
    assert sorted(lines) == [1, 5]


def test_search_by_topic_ranks_in_hybrid_mode_whatever_the_default_mode() -> None:
    kb = kb_of({"a.md": "\n".join(SECTIONS)}, min_score=0.0)
    hybrid = kb.search_by_topic("request timeout", 8)
    for mode in ("vector", "keyword"):
        kb.default_mode = mode
        assert kb.search_by_topic("request timeout", 8) == hybrid


def test_retrieve_passes_its_own_mmr_lambda() -> None:
    texts = {f"d{i}.md": f"# T{i}\ntimeout timeout setting value {i % 2}" for i in range(4)}
    texts["e.md"] = "# Other\ntimeout of a retry"
    kb = kb_of(texts, min_score=0.0, rerank=False)
    plain = [h["content"] for h in kb.retrieve("timeout setting", 5)]
    kb.mmr_lambda = 0.0  # the default: pure diversity
    diverse = [h["content"] for h in kb.retrieve("timeout setting", 5, mmr=True)]
    relevance = kb.retrieve("timeout setting", 5, mmr=True, mmr_lambda=1.0)
    assert [h["content"] for h in relevance] == plain != diverse


def test_the_reranker_gets_the_kbs_weight_and_floor() -> None:
    kb = DocumentKB("c", db_path=":memory:", rerank_weight=0.25, rerank_floor=0.125)
    r = kb.reranker()
    assert (r.weight, r.floor) == (0.25, 0.125)  # type: ignore[attr-defined]
    assert kb.reranker() is r  # built once


def test_a_single_rerank_candidate_is_allowed() -> None:
    kb = kb_of({"a.md": "\n".join(SECTIONS)}, min_score=0.0)
    hits = kb.retrieve("timeout", 3, rerank=True, rerank_k=1)
    assert len(hits) == 3 and hits[0]["metadata"]["section_title"] == "Timeouts"


def test_latest_without_any_version_filters_nothing() -> None:
    kb = kb_of({"a.md": "\n".join(SECTIONS)}, min_score=0.0)
    assert kb.get_versions() == []
    latest = kb.retrieve("timeout", 3, version_filter="latest")
    assert latest == kb.retrieve("timeout", 3)


def test_version_filter_and_where_apply_together() -> None:
    kb = kb_of(
        {
            "v2/a.md": "# Timeouts\nSet timeout=20.",
            "v3/a.md": "# Timeouts\nSet timeout=30.",
            "v3/b.md": "# Timeouts\nSet timeout=40.",
        },
        min_score=0.0,
    )
    hits = kb.retrieve("timeout", 5, where={"path": "v3/b.md"}, version_filter="3")
    assert [h["content"] for h in hits] == [kb.retrieve("timeout=40", 1)[0]["content"]]
    assert [(h["metadata"]["path"], h["metadata"]["version"]) for h in hits] == [("v3/b.md", "3")]
    with pytest.warns(EmptyCollectionWarning, match="has no chunk matching the filters"):
        assert kb.retrieve("timeout", 5, where={"path": "v2/a.md"}, version_filter="3") == []


def test_backfill_embeds_missing_chunks_in_batches_of_512(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    other = DocumentKB("c", db_path=SQLiteStore(db), embedder="hashing")
    other.add_text("\n".join(f"# S{i}\nline {i} of text" for i in range(600)), path="a.md")
    n = len(other.view())
    assert n > 512
    assert other.store.collection_version("docs:c@hashing@1:64") == 0  # none of this embedder
    kb = DocumentKB("c", db_path=SQLiteStore(db), embedder=get_embedder("hashing", dim=64))
    assert kb.retrieve("line 5", 1, min_score=0.0)  # back-filled (when opened)
    assert len(kb.vectors) == n
    assert kb.vectors.name == "docs:c@hashing@1:64"
    assert kb.store.collection_version(kb.vectors.name) == 2  # 512 + the rest: two writes


def test_documents_and_stats_name_every_field() -> None:
    start = time.time()
    kb = kb_of({"v2/a.md": "# A\nabc", "v3/b.md": "# B\nabcdefgh"})
    docs = sorted(kb.documents(), key=lambda d: d["path"])
    keys = ["chunks", "ingested_at", "path", "source", "version"]
    assert [sorted(d) for d in docs] == [keys, keys]
    assert [(d["path"], d["version"], d["chunks"]) for d in docs] == [
        ("v2/a.md", "2", 1),
        ("v3/b.md", "3", 1),
    ]
    assert all(start <= d["ingested_at"] <= time.time() for d in docs)
    stats = kb.stats()
    sizes = [len(c) for c in kb.view().contents]
    mean = sum(sizes) / len(sizes)
    assert mean != int(mean)  # the rounding to one decimal shows
    assert stats["mean_chunk_size"] == round(mean, 1)
    assert stats["store"] == kb.store.url and stats["versions"] == ["2", "3"]
    assert stats["sources"] == sorted({str(m.get("source")) for m in kb.view().metadata})
    assert stats["sources"] != ["None"]
    assert start <= stats["checked_at"] <= time.time()
    assert sorted(stats) == [
        "characters",
        "checked_at",
        "chunks",
        "collection",
        "documents",
        "embedder",
        "mean_chunk_size",
        "sources",
        "store",
        "vectors",
        "versions",
    ]
