"""Retrieval parts pinned exactly (chunking, BM25, fusion, reranking, retrieval scores): tests
written for the mutants that survived ``make mutation``."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt
import pytest

from costeer_lab.docs import (
    DocumentKB,
    EmbeddingReranker,
    KeywordIndex,
    keyword_tokens,
    mmr_select,
    reciprocal_rank_fusion,
)
from costeer_lab.docs._chunk import (
    Chunk,
    FileType,
    Section,
    chunk_text,
    split_pieces,
    split_sections,
)
from costeer_lab.docs._evaluate import (
    LabelledQuery,
    evaluate_retrieval,
    load_labelled_queries,
    score_hits,
)
from costeer_lab.docs._rerank import rerank
from costeer_lab.embed import get_embedder
from costeer_lab.errors import InvalidInputError


def test_rrf_refuses_all_zero_weights_but_not_no_rankings() -> None:
    assert reciprocal_rank_fusion([]) == []
    with pytest.raises(InvalidInputError, match=r"1 rankings, weights \[0\.0\]"):
        reciprocal_rank_fusion([["a"]], weights=[0.0])
    with pytest.raises(InvalidInputError, match="RRF k must be an int >= 0, got True"):
        reciprocal_rank_fusion([["a"]], k=True)


def test_rrf_default_k_is_sixty_and_a_zero_weight_is_allowed() -> None:
    assert reciprocal_rank_fusion([["a", "b"]]) == [("a", 1.0), ("b", pytest.approx(61 / 62))]
    assert reciprocal_rank_fusion([["a"], ["b"]], k=0, weights=[0.0, 0.5]) == [
        ("b", 1.0),
        ("a", 0.0),
    ]


def test_mmr_edges() -> None:
    vecs = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
    assert mmr_select([0.9, 0.8, 0.1], vecs, 1) == [0]
    assert mmr_select([0.5], vecs[:1], 3) == [0]
    # lambda 0: diversity only (the first pick is the first candidate, then the least similar)
    assert mmr_select([0.1, 0.9, 0.8], vecs, 2, lambda_mult=0.0) == [0, 2]
    with pytest.raises(InvalidInputError, match=r"\(3, 1\) relevances"):
        mmr_select(np.ones((3, 1)), vecs, 2)
    with pytest.raises(InvalidInputError, match="within"):
        mmr_select([0.1, 0.9, 0.8], vecs, 2, lambda_mult=-0.01)


def test_keyword_relevance_below_a_scale_of_one_and_of_stopwords_only() -> None:
    idx = KeywordIndex(["alpha beta", "beta gamma", "delta"])
    assert 0 < idx.scale("beta") < 1
    assert idx.relevance("beta").tolist() == pytest.approx([0.36697, 0.36697, 0.0], abs=1e-5)
    none = idx.relevance("the of and")  # stopwords only: no term, scale 0
    assert none.shape == (3,) and none.tolist() == [0.0, 0.0, 0.0]


@dataclass(frozen=True)
class _Hit:
    name: str
    score: float


class _Fixed:
    """A reranker of the protocol with fixed similarities (the first ``n`` of ``values``)."""

    def __init__(self, values: list[float], weight: float) -> None:
        self.values, self.weight = values, weight

    def similarity(self, query: str, texts: Sequence[str]) -> npt.NDArray[np.float64]:
        return np.array(self.values[: len(texts)], dtype=np.float64)


def test_rerank_blends_drops_beyond_k_and_keeps_ties_in_order() -> None:
    hits = [_Hit("a", 0.9), _Hit("b", 0.5), _Hit("c", 0.1), _Hit("d", 0.0)]
    got = rerank("q", hits, ["ta", "tb", "tc", "td"], _Fixed([0.0, 1.0, 0.6], 0.5), 3)
    assert [h.name for h in got] == ["b", "a", "c"]
    assert [h.score for h in got] == pytest.approx([0.75, 0.45, 0.35])
    tied = rerank("q", hits, ["t"] * 4, _Fixed([0.5, 0.5, 0.5, 0.5], 1.0), 4)
    assert [h.name for h in tied] == ["a", "b", "c", "d"]
    assert rerank("q", [], [], _Fixed([], 0.5), 1) == []
    assert [h.name for h in rerank("q", hits, ["t"], _Fixed([1.0], 0.5), 1)] == ["a"]
    for k in (0, True, 1.5):
        with pytest.raises(InvalidInputError, match=f"rerank_k must be a positive int, got {k}"):
            rerank("q", hits, ["t"] * 4, _Fixed([], 0.5), k)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"a text per candidate: 2 < 3"):
        rerank("q", hits, ["t", "t"], _Fixed([], 0.5), 3)


def test_embedding_reranker_arguments_and_similarity() -> None:
    emb = get_embedder("hashing", dim=256)
    for weight in (0, 1, 0.25):
        assert EmbeddingReranker(emb, weight=weight).weight == float(weight)
    for floor in (0, 0.5):
        assert EmbeddingReranker(emb, floor=floor).floor == float(floor)
    for bad in (True, -0.01, 1.01, "0.5"):
        with pytest.raises(
            InvalidInputError, match=f"weight must be a number in .0, 1., got {bad!r}"
        ):
            EmbeddingReranker(emb, weight=bad)  # type: ignore[arg-type]
    for bad in (True, -0.01, 1, 1.0, "0"):
        with pytest.raises(
            InvalidInputError, match=f"floor must be a number in .0, 1., got {bad!r}"
        ):
            EmbeddingReranker(emb, floor=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="cache_size must be >= 0, got -1"):
        EmbeddingReranker(emb, cache_size=-1)
    r = EmbeddingReranker(emb, weight=0.5, floor=0.25, cache_size=0)
    assert repr(r) == f"<EmbeddingReranker {emb.id} weight=0.5 floor=0.25>"
    empty = r.similarity("q", [])
    assert empty.shape == (0,) and empty.dtype == np.float64
    texts = ["retry failed requests", "failed requests", "bread dough", "retry failed requests"]
    q, *vecs = emb.embed(["retry requests", *texts])
    want = np.clip((np.array([float(v @ q) for v in vecs]) - 0.25) / 0.75, 0.0, 1.0)
    got = r.similarity("retry requests", texts)
    assert got.dtype == np.float64 and got.tolist() == pytest.approx(want.tolist(), abs=1e-6)
    assert got[0] > got[1] > 0 and got[2] == 0.0 and got[0] == got[3]


def test_the_reranker_cache_keeps_the_most_recent_texts() -> None:
    emb = get_embedder("hashing", dim=256)
    r = EmbeddingReranker(emb, cache_size=2)
    first = r.similarity("q", ["a", "b", "c"]).tolist()
    assert list(r._cache) == ["b", "c"]
    assert r.similarity("q", ["b", "x"]).tolist()[0] == pytest.approx(first[1])
    assert list(r._cache) == ["b", "x"]  # "b" was used again, so "c" went first
    assert r.similarity("q", ["c", "a", "b"]).tolist() == pytest.approx(first[2:] + first[:2])


def test_keyword_scale_is_the_sum_of_the_query_terms_idf() -> None:
    idx = KeywordIndex(["alpha beta", "beta gamma"])
    assert idx.scale("beta") == pytest.approx(math.log(1 + 0.5 / 2.5))
    assert idx.scale("zzz") == pytest.approx(math.log(1 + 2.5 / 0.5))
    assert idx.scale("alpha") == pytest.approx(math.log(1 + 1.5 / 1.5))
    assert idx.scale("beta beta zzz the") == pytest.approx(math.log(1.2) + math.log(6))
    assert idx.scale("the") == 0.0
    assert KeywordIndex([]).scale("x") == pytest.approx(math.log(2))


def test_keyword_k1_and_b_reach_bm25s_and_rows_are_int64() -> None:
    texts = ["mean mean mean close price", "mean close", "close volume spike now", "other"]
    idx = KeywordIndex(texts, k1=0.9, b=0.3)
    reference = bm25s.BM25(k1=0.9, b=0.3, method="lucene")
    reference.index([keyword_tokens(t) for t in texts], show_progress=False)
    np.testing.assert_allclose(
        idx.scores("mean close"), reference.get_scores(["mean", "close"]), rtol=1e-6
    )
    assert not np.allclose(idx.scores("mean close"), KeywordIndex(texts).scores("mean close"))
    rows, scores = idx.top_k("mean close", 2)
    assert rows.dtype == np.int64 and rows.tolist() == [0, 1] and scores.dtype == np.float32


def _hit(source: str, section: str) -> dict[str, Any]:
    return {"metadata": {"source": source, "section_title": section}}


def test_score_hits_counts_recall_at_k_and_the_first_relevant_rank() -> None:
    q = LabelledQuery("q", (("g", "A"), ("g", "B")))
    hits: list[dict[str, Any]] = [
        _hit("g", "X"),
        {"metadata": None},
        _hit("g", "B"),
        _hit("g", "A"),
    ]
    assert score_hits(q, hits, k=3) == (0.5, 1 / 3)
    assert score_hits(q, hits, k=4) == (1.0, 1 / 3)
    assert score_hits(q, hits[:2], k=5) == (0.0, 0.0)
    assert score_hits(q, [{}, _hit("g", "A")], k=1) == (0.0, 0.5)


def test_labelled_queries_are_read_and_checked(tmp_path: Path) -> None:
    good = tmp_path / "q.yaml"
    good.write_text("- query: retry\n  relevant:\n    - {source: g, section: 1}\n")
    assert load_labelled_queries(good) == [LabelledQuery("retry", (("g", "1"),))]
    cases = {
        "[]": "must hold a non-empty YAML list of queries",
        "{a: 1}": "must hold a non-empty YAML list of queries",
        "- {query: x}": r"entry 0: expected \{query: str, relevant: \[\{source: str, section: "
        r"str\}, \.\.\.\]\}, got \{'query': 'x'\}",
        "- {query: x, relevant: [{source: g, section: s}]}\n- {query: y, relevant: [1]}": (
            r"entry 1: expected"
        ),
        "- {query: ' ', relevant: [{source: g, section: s}]}": "entry 0: empty query or relevant",
        "- {query: x, relevant: []}": "entry 0: empty query or relevant list",
    }
    for text, message in cases.items():
        good.write_text(text)
        with pytest.raises(InvalidInputError, match=f"^{re.escape(repr(str(good)))}.*{message}"):
            load_labelled_queries(good)


def test_evaluate_retrieval_means_over_queries(tmp_path: Path) -> None:
    kb = DocumentKB("ev", ":memory:", embedder="hashing")
    kb.add_text("# Retries\n\nSet max_retries to retry failed requests.", path="guide.md")
    kb.add_text("# Bread\n\nKnead the dough for ten minutes.", path="bread.md")
    retries = LabelledQuery("max_retries failed requests", (("text", "Retries"),))
    nothing = LabelledQuery("max_retries failed requests", (("x.md", "X"),))
    second = LabelledQuery("max_retries failed requests", (("text", "Bread"),))
    scores = evaluate_retrieval(kb, [retries, nothing], k=1, depth=2, mode="keyword")
    assert (scores.recall, scores.mrr, scores.per_query) == (0.5, 0.5, ((1.0, 1.0), (0.0, 0.0)))
    # the filler at rank 2: outside recall@1, inside MRR@2
    assert evaluate_retrieval(
        kb, [second], k=1, depth=2, mode="vector", min_score=0
    ).per_query == ((0.0, 0.5),)
    with pytest.raises(InvalidInputError, match="needs at least one query"):
        evaluate_retrieval(kb, [])
    kb.close()


def test_snake_case_parts_leave_stopwords_out_and_scores_are_float32() -> None:
    assert keyword_tokens("set_the_value of it") == ["set_the_value", "set", "value"]
    idx = KeywordIndex(["alpha beta", "beta"])
    assert idx.scores("beta").dtype == np.float32 and idx.scores("zzz").dtype == np.float32


def test_split_pieces_exact() -> None:
    assert split_pieces("aaa bbb ccc ddd", size=8, overlap=4) == ["aaa bbb", "bbb ccc", "ccc ddd"]
    paras = "para one here\n\npara two here\n\n  \n\npara three"
    assert split_pieces(paras, size=14) == ["para one here", "para two here", "para three"]
    assert split_pieces("x" * 20, size=8) == ["xxxxxxxx", "xxxxxxxx", "xxxx"]
    assert split_pieces("alpha beta\ngamma delta epsilon", size=11, overlap=5) == [
        "alpha beta", "beta gamma", "gamma delta", "epsilon"
    ]  # fmt: skip
    assert split_pieces("  \n ", size=1) == [] and split_pieces(" ab ", size=2) == ["ab"]
    for size in (0, True, 2.0):
        with pytest.raises(
            InvalidInputError, match=f"chunk size must be a positive int, got {size!r}"
        ):
            split_pieces("x", size)  # type: ignore[arg-type]
    for overlap in (-1, 5, True):
        with pytest.raises(
            InvalidInputError,
            match=rf"chunk overlap must be an int in \[0, size // 2 = 4\], got {overlap!r}",
        ):
            split_pieces("x", 9, overlap)


def _sections(text: str, kind: FileType, offset: int = 0) -> list[tuple[str, str, int, int, str]]:
    found = split_sections(text, kind, title="m.py" if kind == "python" else "d", offset=offset)
    return [(s.title, s.heading, s.level, s.start_line, s.body) for s in found]


def test_sections_of_python_markdown_and_rst_are_exact() -> None:
    py = (
        '"""Mod."""\nclass A:\n    """A doc."""\n    async def f(self):\n'
        '        """F doc."""\n    def g(self): pass\n'
    )
    assert _sections(py, "python") == [
        ("m.py", "module m.py", 1, 1, "Mod."),
        ("A", "class A", 2, 2, "A doc."),
        ("A.f", "def A.f", 3, 4, "F doc."),
    ]  # fmt: skip
    with pytest.raises(InvalidInputError, match=r"cannot parse Python file 'm.py': "):
        split_sections("def f(:", "python", title="m.py")
    md = "pre\n~~~\n# no\n```\n# still no\n~~~\n## Two ##  \nbody"
    assert _sections(md, "markdown", 3) == [
        ("d", "", 0, 4, "pre\n~~~\n# no\n```\n# still no\n~~~"),
        ("Two", "## Two ##", 2, 10, "body"),
    ]  # fmt: skip
    rst = "=====\nTop\n=====\nintro\nSub\n---\nx\nShort\n--\ny\nOther\n=====\nz"
    assert _sections(rst, "rst", 1) == [
        ("Top", "Top", 1, 3, "intro"),
        ("Sub", "Sub", 2, 6, "x\nShort\n--\ny"),
        ("Other", "Other", 1, 12, "z"),
    ]  # fmt: skip
    assert split_sections("  text \n", "text", title="t", offset=2) == [
        Section("t", "", "  text \n", 0, 3)
    ]
    with pytest.raises(
        InvalidInputError,
        match="file_type must be 'markdown', 'rst', 'text' or 'python', got 'html'",
    ):
        split_sections("x", "html")  # type: ignore[arg-type]


def test_chunks_carry_paths_parts_and_lines() -> None:
    md = "# A\nintro\n## B\n" + "word " * 10 + "\n### C\nc\n## D\n\n# E\n"
    chunks = chunk_text(
        md, file_type="markdown", title="doc", chunk_size=20, chunk_overlap=5, offset=1
    )
    assert [(c.section_title, c.section_path, c.start_line, c.part) for c in chunks] == [
        ("A", "A", 2, 0), ("B", "A > B", 4, 0), ("B", "A > B", 4, 1), ("B", "A > B", 4, 2),
        ("C", "A > B > C", 6, 0), ("D", "A > D", 8, 0), ("E", "E", 10, 0),
    ]  # fmt: skip
    assert chunks[1].content == "## B\nword word word word"
    assert chunks[2].content.startswith("## B\nword ") and chunks[-1].content == "# E"
    assert chunk_text("just text", file_type="text", title="t") == [
        Chunk("just text", "t", "t", 1, 0)
    ]


def test_the_reranker_defaults_and_its_float64_scores() -> None:
    from costeer_lab.docs._rerank import EmbeddingReranker, candidate_text
    from costeer_lab.embed import get_embedder

    default = EmbeddingReranker()  # the model loads on first use only
    assert default.embedder.id.startswith("minilm@")
    assert (default.weight, default.floor, default.cache_size) == (0.7, 0.15, 4096)
    r = EmbeddingReranker(get_embedder("hashing", dim=64), floor=0.0)
    sim = r.similarity("retry requests", ["retry requests", "bread"])
    assert (
        sim.dtype == np.float64
        and sim[0] == pytest.approx(1.0)
        and r.similarity("q", []).dtype == np.float64
    )
    assert candidate_text({"section_path": "Client > Retries"}, "Set it.") == (
        "Client > Retries\nSet it."
    )
    assert candidate_text({"section_path": None}, "Set it.") == "Set it."
    assert candidate_text({}, "Set it.") == "Set it."
