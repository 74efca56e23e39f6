"""Chunking: heading sections, size cap and overlap, file types, front matter, chunk metadata."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costeer_lab.docs import chunk_text, parse_front_matter, split_pieces, split_sections
from costeer_lab.docs._source import parse_file, version_from_path
from costeer_lab.errors import InvalidInputError

MARKDOWN = """Intro line before any heading.

# Guide

Welcome.

## Install

Run pip install.

```sh
# not a heading: inside a fence
pip install x
```

## Configure

### Retries

Set max_retries.
"""


def test_markdown_sections_follow_headings_and_skip_fenced_code() -> None:
    sections = split_sections(MARKDOWN, "markdown", title="guide")
    assert [(s.title, s.level) for s in sections] == [
        ("guide", 0),
        ("Guide", 1),
        ("Install", 2),
        ("Configure", 2),
        ("Retries", 3),
    ]
    install = sections[2]
    assert "# not a heading: inside a fence" in install.body
    assert install.start_line == 7


def test_chunks_carry_heading_and_breadcrumb() -> None:
    chunks = chunk_text(MARKDOWN, file_type="markdown", title="guide", chunk_size=500)
    by_title = {c.section_title: c for c in chunks}
    assert by_title["Retries"].content == "### Retries\nSet max_retries."
    assert by_title["Retries"].section_path == "Guide > Configure > Retries"
    assert by_title["Install"].section_path == "Guide > Install"
    assert by_title["guide"].content == "Intro line before any heading."
    # a heading-only section (Configure) is kept: its title is searchable
    assert by_title["Configure"].content == "## Configure"


def test_link_markup_is_dropped_from_titles() -> None:
    sections = split_sections("# [Lab](https://x.org) guide\nbody", "markdown", title="t")
    assert [(s.title, s.heading) for s in sections] == [
        ("Lab guide", "# [Lab](https://x.org) guide")
    ]


def test_rst_sections_use_underlines_and_overlines() -> None:
    text = "=====\nTitle\n=====\n\nabout\n\nUsage\n-----\n\nrun it\n\nMore\n----\n\nx\n"
    sections = split_sections(text, "rst", title="r")
    assert [(s.title, s.level) for s in sections] == [("Title", 1), ("Usage", 2), ("More", 2)]
    assert sections[1].body.strip() == "run it"


def test_python_files_yield_their_docstrings() -> None:
    source = '''"""Module doc."""

def f():
    """Function f."""

class C:
    """Class C."""

    def m(self):
        """Method m."""

def undocumented():
    pass
'''
    sections = split_sections(source, "python", title="mod")
    assert [(s.title, s.heading, s.body) for s in sections] == [
        ("mod", "module mod", "Module doc."),
        ("f", "def f", "Function f."),
        ("C", "class C", "Class C."),
        ("C.m", "def C.m", "Method m."),
    ]
    with pytest.raises(InvalidInputError, match="cannot parse Python file 'bad'"):
        split_sections("def (:", "python", title="bad")


def test_plain_text_is_one_section_and_unknown_type_is_refused() -> None:
    assert [s.title for s in split_sections("a\n\nb", "text", title="notes")] == ["notes"]
    with pytest.raises(InvalidInputError, match="'pdf'"):
        split_sections("x", "pdf", title="x")  # type: ignore[arg-type]


def test_long_section_is_cut_under_the_cap_with_overlap() -> None:
    words = [f"w{i:03d}" for i in range(300)]
    text = " ".join(words)
    pieces = split_pieces(text, size=200, overlap=40)
    assert len(pieces) > 5
    assert all(len(p) <= 200 for p in pieces)
    for prev, nxt in itertools.pairwise(pieces):
        head = nxt.split(" ")[0]
        assert head in prev.split(" ")  # the next piece starts inside the previous one
        shared = prev[prev.index(head) :]
        assert nxt.startswith(shared) and 20 <= len(shared) <= 40
    # every word survives, in order, once the overlaps are removed
    seen: list[str] = []
    for p in pieces:
        for w in p.split(" "):
            if not seen or w > seen[-1]:
                seen.append(w)
    assert seen == words


def test_paragraph_boundaries_are_preferred() -> None:
    paras = ["alpha " * 10, "beta " * 10, "gamma " * 10]
    pieces = split_pieces("\n\n".join(p.strip() for p in paras), size=130, overlap=0)
    assert pieces == ["alpha " * 9 + "alpha\n\n" + "beta " * 9 + "beta", "gamma " * 9 + "gamma"]


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="chunk size must be a positive int, got 0"):
        split_pieces("x", 0)
    with pytest.raises(InvalidInputError, match=r"overlap must be an int in \[0, size // 2 = 5\]"):
        split_pieces("x", 10, 6)


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab \n"), max_size=600),
    st.integers(min_value=4, max_value=80),
    st.data(),
)
def test_pieces_never_exceed_the_cap(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(min_value=0, max_value=size // 2))
    pieces = split_pieces(text, size, overlap)
    assert all(0 < len(p) <= size for p in pieces)
    kept = "".join(text.split())
    assert "".join("".join(p.split()) for p in pieces).count("a") >= kept.count("a")


def test_front_matter_and_versions() -> None:
    meta, body, skipped = parse_front_matter("---\ntitle: T\nversion: 3\ntags: [a]\n---\n# H\n")
    assert meta == {"title": "T", "version": "3"}  # lists dropped, version as a string
    assert body == "# H\n" and skipped == 5
    assert parse_front_matter("# no front matter") == ({}, "# no front matter", 0)
    with pytest.raises(InvalidInputError, match="front matter must be a mapping"):
        parse_front_matter("---\n- a\n---\n")
    assert version_from_path("docs/v3/api.md") == "3"
    assert version_from_path("docs/version-2.1/sub/api.md") == "2.1"
    assert version_from_path("v1/docs/v2/x.md") == "2"
    assert version_from_path("docs/vector/x.md") is None


def test_chunk_metadata(tmp_path: Path) -> None:
    doc = tmp_path / "v2" / "guide.md"
    doc.parent.mkdir()
    doc.write_text("---\nauthor: ana\n---\n# Setup\n\nstep one\n\n# Use\n\nstep two\n")
    parsed = parse_file(doc, source="manual", chunk_size=100, chunk_overlap=10)
    assert parsed.version == "2"
    assert parsed.file_hash == hashlib.sha256(doc.read_bytes()).hexdigest()
    (c0, m0), (c1, m1) = parsed.chunks
    assert c0 == "# Setup\nstep one" and c1 == "# Use\nstep two"
    assert m0 == {
        "author": "ana",
        "path": str(doc),
        "source": "manual",
        "file_name": "guide.md",
        "file_type": "markdown",
        "section_title": "Setup",
        "section_path": "Setup",
        "version": "2",
        "chunk_size": len(c0),
        "chunk_index": 0,
        "part": 0,
        "start_line": 4,
        "content_hash": hashlib.sha256(c0.encode()).hexdigest(),
        "file_hash": parsed.file_hash,
        "doc_id": m1["doc_id"],
    }
    assert m1["chunk_index"] == 1 and m1["start_line"] == 8
    # front matter beats the path; an explicit version beats both
    doc.write_text("---\nversion: 5\n---\n# A\nx\n")
    assert parse_file(doc, source="s", chunk_size=100, chunk_overlap=0).version == "5"
    assert parse_file(doc, source="s", chunk_size=100, chunk_overlap=0, version="9").version == "9"


def test_unreadable_files_are_clear_errors(tmp_path: Path) -> None:
    binary = tmp_path / "b.md"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(InvalidInputError, match=r"b\.md.*not UTF-8"):
        parse_file(binary, source="s", chunk_size=100, chunk_overlap=0)
    with pytest.raises(InvalidInputError, match=r"unknown document type '\.pdf'"):
        parse_file(tmp_path / "x.pdf", source="s", chunk_size=100, chunk_overlap=0)
