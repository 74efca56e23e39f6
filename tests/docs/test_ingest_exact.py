"""Exact ingestion and parsing facts (docs._ingest, docs._source): sources, versions, origins,
report counts, progress bar, file discovery, front matter and chunk metadata, on real files
and a real SQLite store."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from costeer_lab.docs._ingest import IngestReport, ingest_paths, remove_files
from costeer_lab.docs._source import (
    iter_document_files,
    parse_file,
    parse_front_matter,
    read_document,
)
from costeer_lab.errors import InvalidInputError, NotFoundError

from ._docs_helpers import open_kb


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chunk_metas(kb: object) -> list[dict[str, object]]:
    return [meta for _id, _content, meta in kb.docs.iter_chunks()]  # type: ignore[attr-defined]


# -- docs._ingest ----------------------------------------------------------------------------
def test_texts_without_a_source_are_labelled_text(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    report = ingest_paths(kb, [], source=None, version=None, texts={"a.md": "# A\n\nalpha\n"})
    assert (report.files, report.added, report.chunks_added) == (1, 1, 1)
    record = kb.docs.get_file("a.md")
    assert record is not None
    assert (record.source, record.origin, record.version) == ("text", "text", None)
    assert record.file_hash == sha("# A\n\nalpha\n")
    assert [m["source"] for m in chunk_metas(kb)] == ["text"]
    kb.close()


def test_roots_without_a_source_are_labelled_by_the_root_as_given(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (one / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    (two / "b.md").write_text("# B\n\nbeta\n", encoding="utf-8")
    (two / "c.txt").write_text("gamma\n", encoding="utf-8")
    kb = open_kb(tmp_path / "kb.db")
    report = kb.ingest([one, two])
    assert (report.files, report.added, report.unchanged) == (3, 3, 0)
    sources = {Path(r.path).name: (r.source, r.origin) for r in kb.docs.iter_files()}
    assert sources == {
        "a.md": (str(one), "file"),
        "b.md": (str(two), "file"),
        "c.txt": (str(two), "file"),
    }
    assert sorted(str(m["source"]) for m in chunk_metas(kb)) == [str(one), str(two), str(two)]
    kb.close()


def test_missing_root_names_it(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    with pytest.raises(NotFoundError, match=r"cannot ingest '.*nope': no such file or directory"):
        kb.ingest(tmp_path / "nope")
    kb.close()


def test_report_counts_characters_and_removed_chunks_over_several_files(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    texts = {"a.md": "# A\n\nalpha one\n", "b.md": "# B\n\nbeta two three\n"}
    for name, text in texts.items():
        (docs / name).write_text(text, encoding="utf-8")
    kb = open_kb(tmp_path / "kb.db")
    first = kb.ingest(docs, source="s", version="7")
    contents = [content for _id, content, _meta in kb.docs.iter_chunks()]
    assert first.characters == sum(len(c) for c in contents) > len(contents[0])
    assert (first.added, first.updated, first.chunks_added, first.chunks_removed) == (2, 0, 2, 0)
    for record in kb.docs.iter_files():
        name = Path(record.path).name
        assert record.file_hash == sha(texts[name])
        assert (record.version, record.source, record.origin) == ("7", "s", "file")
        assert len(record.chunk_ids) == 1
    # both files change: every old chunk is counted as removed
    for name in texts:
        (docs / name).write_text(f"# {name}\n\nnew words\n", encoding="utf-8")
    second = kb.ingest(docs, source="s", version="7")
    assert (second.added, second.updated, second.unchanged) == (0, 2, 0)
    assert (second.chunks_added, second.chunks_removed) == (2, 2)
    assert kb.docs.count_chunks() == 2
    kb.close()


def test_version_from_the_front_matter_is_stored_on_the_record(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    kb.add_text("---\nversion: 4.2\n---\n# A\n\nalpha\n", path="a.md")
    record = kb.docs.get_file("a.md")
    assert record is not None and record.version == "4.2"
    kb.close()


def test_a_full_batch_keeps_the_forced_version_and_text_origin(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    texts = {f"t{i:02d}.txt": f"note {i}\n" for i in range(65)}  # one batch of 64, then 1
    report = ingest_paths(kb, [], source="notes", version="9", texts=texts)
    assert (report.files, report.added, report.chunks_added) == (65, 65, 65)
    records = list(kb.docs.iter_files())
    assert len(records) == 65
    assert {(r.version, r.origin, r.source) for r in records} == {("9", "text", "notes")}
    kb.close()


def test_a_full_batch_of_files_keeps_the_forced_version(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(64):
        (docs / f"f{i:02d}.txt").write_text(f"file {i}\n", encoding="utf-8")
    kb = open_kb(tmp_path / "kb.db")
    report = kb.ingest(docs, version="5")
    assert (report.files, report.added) == (64, 64)
    assert {(r.version, r.origin) for r in kb.docs.iter_files()} == {("5", "file")}
    kb.close()


def test_progress_bar_counts_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a.md", "b.md"):
        (docs / name).write_text(f"# {name}\n\ntext\n", encoding="utf-8")
    kb = open_kb(tmp_path / "kb.db")
    kb.progress_min_files = 2  # exactly the number of files: shown
    kb.ingest(docs)
    err = capsys.readouterr().err
    assert "ingesting documents: 100%" in err and "2/2" in err
    assert "file/s" in err or "s/file]" in err
    kb.progress_min_files = 3  # more than the files: hidden
    kb.ingest(docs)
    assert "ingesting documents" not in capsys.readouterr().err
    kb.progress_min_files = 1  # enough files, but progress=False wins
    kb.ingest(docs, progress=False)
    assert "ingesting documents" not in capsys.readouterr().err
    kb.close()


def test_a_bad_file_after_a_full_batch_keeps_the_written_batch(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(64):
        (docs / f"f{i:02d}.txt").write_text(f"file {i}\n", encoding="utf-8")
    (docs / "z.txt").write_bytes(b"\xff\xfe bad")  # the 65th file, in the second batch
    kb = open_kb(tmp_path / "kb.db")
    with pytest.raises(InvalidInputError, match=r"z\.txt': not UTF-8 text"):
        kb.ingest(docs)
    assert kb.docs.count_files() == 64 and kb.docs.count_chunks() == 64
    kb.close()


def test_seconds_is_the_wall_time_of_the_call(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    before = time.perf_counter()
    report = kb.add_text("# A\n\nalpha\n", path="a.md")
    elapsed = time.perf_counter() - before
    assert 0.0 < report.seconds <= elapsed
    kb.close()


def test_source_version_and_secrets_mode_are_part_of_the_fingerprint(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    kb = open_kb(tmp_path / "kb.db")
    kb.secrets = "redact"
    assert kb.ingest(docs, source="one", version="1").added == 1
    assert kb.ingest(docs, source="one", version="1").unchanged == 1
    steps: list[tuple[str, str, str]] = [
        ("two", "1", "redact"),
        ("two", "2", "redact"),
        ("two", "2", "refuse"),
    ]
    for source, version, mode in steps:
        kb.secrets = mode  # type: ignore[assignment]
        report = kb.ingest(docs, source=source, version=version)
        assert (report.updated, report.unchanged) == (1, 0), (source, version, mode)
        record = kb.docs.get_file(str((docs / "a.md").absolute()))
        assert record is not None and (record.source, record.version) == (source, version)
        assert len(record.fingerprint) == 64
    kb.close()


def test_unchanged_files_before_and_after_a_changed_one_are_counted(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (docs / name).write_text(f"# {name}\n\nwords of {name}\n", encoding="utf-8")
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(docs)
    (docs / "b.md").write_text("# b\n\nnew words\n\n## Two\n\nmore\n", encoding="utf-8")
    report = kb.ingest(docs)
    assert (report.files, report.added, report.updated, report.unchanged) == (3, 0, 1, 2)
    assert (report.chunks_added, report.chunks_removed) == (2, 1)
    path = str((docs / "b.md").absolute())
    record = kb.docs.get_file(path)
    assert record is not None
    doc_id = sha(path)[:16]
    assert record.chunk_ids == (f"{doc_id}-0", f"{doc_id}-1")
    ids = [cid for cid, _content, meta in kb.docs.iter_chunks() if meta["path"] == path]
    assert ids == [f"{doc_id}-0", f"{doc_id}-1"]
    assert set(kb.vectors.index.ids()) == {cid for cid, _c, _m in kb.docs.iter_chunks()}
    kb.close()


def test_redactions_are_summed_over_files_and_refusals_name_the_file(tmp_path: Path) -> None:
    token = "ghp_" + 36 * "a"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(f"# A\n\ntoken = {token}\n", encoding="utf-8")
    (docs / "b.md").write_text(f"# B\n\nkey = {token}\n", encoding="utf-8")
    kb = open_kb(tmp_path / "kb.db")
    kb.secrets = "redact"
    report = kb.ingest(docs)
    assert (report.added, report.secrets_redacted) == (2, 2)
    assert all(token not in content for _i, content, _m in kb.docs.iter_chunks())
    other = open_kb(tmp_path / "other.db")
    other.secrets = "refuse"
    with pytest.raises(InvalidInputError, match=r"^refusing to ingest '[^']*/docs/a\.md': "):
        other.ingest(docs)
    assert other.docs.count_files() == 0
    other.close()
    kb.close()


def test_deleting_documents_removes_records_chunks_and_vectors(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha\n\n## B\n\nbeta\n", encoding="utf-8")
    (docs / "c.md").write_text("# C\n\ngamma\n", encoding="utf-8")
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(docs)
    version = kb.docs.version()
    remove_files(kb, [])
    assert kb.docs.version() == version and kb.docs.count_chunks() == 3
    assert kb.delete_document(docs / "a.md") == 2
    assert kb.docs.version() == version + 1
    assert [Path(r.path).name for r in kb.docs.iter_files()] == ["c.md"]
    assert kb.docs.count_chunks() == 1 and len(kb.vectors.index.ids()) == 1
    kb.close()


def test_report_merge_and_dict() -> None:
    a = IngestReport(files=1, added=2, chunks_added=3, characters=4, seconds=0.5)
    b = IngestReport(files=10, updated=1, removed=2, chunks_removed=5, secrets_redacted=1)
    assert a.merge(b).to_dict() == {
        "files": 11,
        "added": 2,
        "updated": 1,
        "unchanged": 0,
        "removed": 2,
        "chunks_added": 3,
        "chunks_removed": 5,
        "characters": 4,
        "seconds": 0.5,
        "secrets_redacted": 1,
    }


# -- docs._source ----------------------------------------------------------------------------
def test_bad_yaml_front_matter_message() -> None:
    with pytest.raises(InvalidInputError, match=r"^front matter is not valid YAML: "):
        parse_front_matter("---\nkey: [unclosed\n---\nbody\n")
    with pytest.raises(InvalidInputError, match=r"^front matter must be a mapping .* got list$"):
        parse_front_matter("---\n- a\n- b\n---\nbody\n")


def test_front_matter_dates_become_iso_strings() -> None:
    meta, body, skipped = parse_front_matter(
        "---\nwhen: 2024-01-02\nn: 3\ntags: [a, b]\nversion: 2\n---\n# T\n"
    )
    assert meta == {"when": "2024-01-02", "n": 3, "version": "2"}
    assert (body, skipped) == ("# T\n", 6)


def test_discovery_skips_hidden_and_tool_directories_at_any_depth(tmp_path: Path) -> None:
    files = [
        ".git/a.md",
        ".hidden/b.md",
        "a.md",
        "sub/.cache/c.md",
        "sub/node_modules/d.md",
        "sub/deep/e.rst",
        "sub/.f.md",
        "sub/g.bin",
        "z.txt",
    ]
    for rel in files:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n", encoding="utf-8")
    found = [p.relative_to(tmp_path).as_posix() for p in iter_document_files(tmp_path)]
    assert found == ["a.md", "sub/deep/e.rst", "z.txt"]
    assert list(iter_document_files(tmp_path / "sub/g.bin")) == [tmp_path / "sub/g.bin"]


def test_read_document_is_utf8(tmp_path: Path) -> None:
    path = tmp_path / "u.md"
    path.write_bytes("# Café – naïve ✓\n".encode())
    assert read_document(path) == "# Café – naïve ✓\n"
    (tmp_path / "bad.md").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(InvalidInputError, match="not UTF-8 text"):
        read_document(tmp_path / "bad.md")


def test_unknown_type_lists_the_suffixes() -> None:
    with pytest.raises(InvalidInputError) as err:
        parse_file(Path("/x/a.pdf"), source="s", chunk_size=100, chunk_overlap=10, text="x")
    assert str(err.value) == (
        "cannot ingest '/x/a.pdf': unknown document type '.pdf'; "
        "expected one of .markdown, .md, .mdx, .py, .rst, .text, .txt"
    )


def test_text_files_read_front_matter_and_titles_default_to_the_stem() -> None:
    notes = Path("/x/notes.txt")
    text = "---\ntitle: Hi\nversion: 3\nwhen: 2024-01-02\n---\nhello world"
    parsed = parse_file(notes, source="s", chunk_size=100, chunk_overlap=10, text=text)
    assert (parsed.version, parsed.file_hash, parsed.path) == ("3", sha(text), "/x/notes.txt")
    assert parsed.chunks == [
        (
            "hello world",
            {
                "title": "Hi",
                "when": "2024-01-02",
                "path": "/x/notes.txt",
                "source": "s",
                "file_name": "notes.txt",
                "file_type": "text",
                "section_title": "Hi",
                "section_path": "Hi",
                "version": "3",
                "chunk_size": 11,
                "chunk_index": 0,
                "part": 0,
                "start_line": 6,
                "content_hash": sha("hello world"),
                "file_hash": sha(text),
                "doc_id": sha("/x/notes.txt")[:16],
            },
        )
    ]
    plain = parse_file(notes, source="s", chunk_size=100, chunk_overlap=10, text="hi")
    meta = plain.chunks[0][1]
    assert (meta["section_title"], meta["section_path"]) == ("notes", "notes")
    assert meta["version"] is None
    assert len(str(meta["doc_id"])) == 16


def test_chunk_size_is_passed_to_the_splitter() -> None:
    text = "# T\n\n" + "word " * 50
    parsed = parse_file(Path("/x/v2/n.md"), source="s", chunk_size=60, chunk_overlap=0, text=text)
    assert parsed.version == "2"
    assert [m["chunk_size"] for _c, m in parsed.chunks] == [63, 63, 63, 63, 13]
    assert [m["chunk_index"] for _c, m in parsed.chunks] == [0, 1, 2, 3, 4]
    assert [m["part"] for _c, m in parsed.chunks] == [0, 1, 2, 3, 4]


def test_front_matter_absent_or_empty() -> None:
    assert parse_front_matter("# T\nbody\n") == ({}, "# T\nbody\n", 0)
    assert parse_front_matter("---\n---\nbody\n") == ({}, "body\n", 2)


def test_read_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(InvalidInputError) as err:
        read_document(bad)
    assert str(err.value) == f"cannot ingest {str(bad)!r}: not UTF-8 text"
    folder = tmp_path / "folder.md"
    folder.mkdir()
    with pytest.raises(InvalidInputError) as err:
        read_document(folder)
    assert str(err.value).startswith(f"cannot ingest {str(folder)!r}: [Errno ")


def test_parse_file_reads_the_file_when_no_text_is_given(tmp_path: Path) -> None:
    path = tmp_path / "n.md"
    path.write_text("---\nowner: me\n---\n# Head\n\nbody\n", encoding="utf-8")
    parsed = parse_file(path, source="s", chunk_size=200, chunk_overlap=10)
    assert [c for c, _m in parsed.chunks] == ["# Head\nbody"]
    assert parsed.chunks[0][1]["owner"] == "me" and parsed.chunks[0][1]["start_line"] == 4


def test_rst_front_matter_and_bad_front_matter_name_the_file() -> None:
    text = "---\ntitle: R\nowner: me\n---\nTitle\n=====\n\nbody\n"
    parsed = parse_file(Path("/x/a.rst"), source="s", chunk_size=200, chunk_overlap=10, text=text)
    [(content, meta)] = parsed.chunks
    assert content == "Title\nbody"
    assert (meta["owner"], meta["title"], meta["start_line"]) == ("me", "R", 5)
    with pytest.raises(InvalidInputError) as err:
        parse_file(
            Path("/x/a.md"), source="s", chunk_size=200, chunk_overlap=10, text="---\nk: [\n---\n"
        )
    assert str(err.value).startswith("cannot ingest '/x/a.md': front matter is not valid YAML: ")


def test_python_files_have_no_front_matter_and_start_at_line_one() -> None:
    text = '"""Module doc."""\n\n\ndef f():\n    """Do f."""\n'
    parsed = parse_file(Path("/x/m.py"), source="s", chunk_size=200, chunk_overlap=10, text=text)
    assert [(c, m["start_line"], m["section_path"]) for c, m in parsed.chunks] == [
        ("module m\nModule doc.", 1, "m"),
        ("def f\nDo f.", 4, "m > f"),
    ]
    assert {m["file_type"] for _c, m in parsed.chunks} == {"python"}
