"""Reading documents from disk: file discovery, front matter, versions and chunk metadata.

Example:
    >>> version_from_path("docs/v3/api.md")
    '3'
    >>> parse_front_matter("---\\nversion: 2.1\\n---\\n# T\\n")[0]
    {'version': '2.1'}
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from costeer_lab.docs._chunk import FileType, chunk_text
from costeer_lab.errors import InvalidInputError

__all__ = [
    "SUFFIXES",
    "ParsedFile",
    "file_type_of",
    "iter_document_files",
    "parse_file",
    "parse_front_matter",
    "read_document",
    "sha256_text",
    "version_from_path",
]

#: File suffixes ingested, and how each is split.
SUFFIXES: dict[str, FileType] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".text": "text",
    ".py": "python",
}
#: Metadata keys set by the knowledge base; front matter cannot override them.
RESERVED_KEYS = frozenset(
    {
        "path",
        "source",
        "file_name",
        "file_type",
        "section_title",
        "section_path",
        "version",
        "chunk_size",
        "chunk_index",
        "part",
        "start_line",
        "content_hash",
        "file_hash",
        "doc_id",
    }
)
_VERSION_DIR = re.compile(r"^v(?:ersion)?[-_]?(\d+(?:\.\d+)*)$", re.IGNORECASE)
_FRONT = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".tox"})


def version_from_path(path: str | Path) -> str | None:
    """The version named by a directory such as ``v3/``, ``v2.1/`` or ``version-4/`` in
    ``path`` (the innermost one), else ``None``.

    Example:
        >>> version_from_path("/docs/v1/guide/v2.0/x.md"), version_from_path("a/b.md")
        ('2.0', None)
    """
    for part in reversed(Path(path).parts[:-1]):
        match = _VERSION_DIR.match(part)
        if match:
            return match.group(1)
    return None


def parse_front_matter(text: str) -> tuple[dict[str, Any], str, int]:
    """``(front matter, body, lines removed)`` of a document starting with a YAML block
    between ``---`` lines; scalar values are kept (numbers and dates as strings for
    ``version``), lists and mappings are dropped.

    Raises:
        InvalidInputError: the block is not valid YAML or not a mapping.
    """
    match = _FRONT.match(text)
    if match is None:
        return {}, text, 0
    try:
        data = yaml.safe_load(match.group(1) or "") or {}
    except yaml.YAMLError as exc:
        raise InvalidInputError(f"front matter is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidInputError(
            f"front matter must be a mapping of keys to values, got {type(data).__name__}"
        )
    meta: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, bool | int | float | str) or value is None:
            meta[str(key)] = value
        elif hasattr(value, "isoformat"):
            meta[str(key)] = value.isoformat()
    if meta.get("version") is not None:
        meta["version"] = str(meta["version"])
    return meta, text[match.end() :], match.group(0).count("\n")


def file_type_of(path: Path) -> FileType | None:
    """How a file is split, from its suffix (``None``: not a document)."""
    return SUFFIXES.get(path.suffix.lower())


def iter_document_files(root: Path) -> Iterator[Path]:
    """Document files under ``root`` (itself when it is a file), sorted, hidden and tool
    directories skipped."""
    if root.is_file():
        yield root
        return
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).parts
        if any(p in _SKIP_DIRS or p.startswith(".") for p in rel[:-1]):
            continue
        if path.is_file() and not rel[-1].startswith(".") and file_type_of(path) is not None:
            yield path


@dataclass(frozen=True)
class ParsedFile:
    """A file read and chunked: its hash, version and one ``(content, metadata)`` per chunk."""

    path: str
    file_hash: str
    version: str | None
    chunks: list[tuple[str, dict[str, Any]]]


def read_document(path: Path) -> str:
    """The text of a document file.

    Raises:
        InvalidInputError: the file is not UTF-8 text (or cannot be read).
    """
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"cannot ingest {str(path)!r}: not UTF-8 text") from None
    except OSError as exc:
        raise InvalidInputError(f"cannot ingest {str(path)!r}: {exc}") from None


def sha256_text(text: str) -> str:
    """Hex sha256 of the UTF-8 bytes of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_file(
    path: Path,
    *,
    source: str,
    chunk_size: int,
    chunk_overlap: int,
    text: str | None = None,
    version: str | None = None,
) -> ParsedFile:
    """Read and chunk one file; each chunk's metadata holds ``path``, ``source``,
    ``file_name``, ``file_type``, ``section_title``, ``section_path``, ``version``,
    ``chunk_size``, ``chunk_index``, ``part``, ``start_line``, ``content_hash``,
    ``file_hash``, ``doc_id``, and the scalar front-matter keys.

    The version is ``version`` if given, else the front matter's, else the path's.

    Raises:
        InvalidInputError: the file is not UTF-8 text, has a bad front matter or unknown type.
    """
    kind = file_type_of(path)
    if kind is None:
        raise InvalidInputError(
            f"cannot ingest {str(path)!r}: unknown document type {path.suffix!r}; "
            f"expected one of {', '.join(sorted(SUFFIXES))}"
        )
    if text is None:
        text = read_document(path)
    file_hash = sha256_text(text)
    front: dict[str, Any] = {}
    body, skipped = text, 0
    if kind in ("markdown", "rst", "text"):
        try:
            front, body, skipped = parse_front_matter(text)
        except InvalidInputError as exc:
            raise InvalidInputError(f"cannot ingest {str(path)!r}: {exc}") from None
    resolved = version or front.get("version") or version_from_path(path)
    title = str(front.get("title") or path.stem)
    extra = {k: v for k, v in front.items() if k not in RESERVED_KEYS}
    doc_id = sha256_text(str(path))[:16]
    chunks = []
    for i, chunk in enumerate(
        chunk_text(
            body,
            file_type=kind,
            title=title,
            chunk_size=chunk_size,
            chunk_overlap=chunk_overlap,
            offset=skipped,
        )
    ):
        meta: dict[str, Any] = {
            **extra,
            "path": str(path),
            "source": source,
            "file_name": path.name,
            "file_type": kind,
            "section_title": chunk.section_title,
            "section_path": chunk.section_path,
            "version": resolved,
            "chunk_size": len(chunk.content),
            "chunk_index": i,
            "part": chunk.part,
            "start_line": chunk.start_line,
            "content_hash": sha256_text(chunk.content),
            "file_hash": file_hash,
            "doc_id": doc_id,
        }
        chunks.append((chunk.content, meta))
    return ParsedFile(str(path), file_hash, resolved, chunks)
