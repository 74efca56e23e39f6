"""Splitting documents into heading sections and size-capped, overlapping chunks (no I/O).

Markdown is split at ATX headings (``#`` to ``######``, not inside fenced code), reStructuredText
at underlined titles, Python source into its module, class and function docstrings, and plain
text is one section. A section longer than the size cap is cut at paragraph, then line, then
word boundaries, and each piece after the first starts with the last ``overlap`` characters of
the previous piece. Every chunk starts with its section's heading line, so the title is
searchable.

Example:
    >>> chunks = chunk_text("# A\\nalpha\\n## B\\nbeta", file_type="markdown", title="doc")
    >>> [(c.section_title, c.content) for c in chunks]
    [('A', '# A\\nalpha'), ('B', '## B\\nbeta')]
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Literal

from costeer_lab.errors import InvalidInputError

__all__ = ["Chunk", "FileType", "Section", "chunk_text", "split_pieces", "split_sections"]

FileType = Literal["markdown", "rst", "text", "python"]

_ATX = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}[ \t]*$")


@dataclass(frozen=True)
class Section:
    """A titled part of a document: ``heading`` is its title line as written (may be empty)."""

    title: str
    heading: str
    body: str
    level: int
    start_line: int


@dataclass(frozen=True)
class Chunk:
    """A piece of a section, the unit stored and retrieved.

    Attributes:
        content: the text (heading line first).
        section_title: title of the section it comes from.
        section_path: titles of the enclosing sections joined by `` > ``.
        start_line: 1-based line of the section in the file.
        part: index of the piece within its section (0 for the first).
    """

    content: str
    section_title: str
    section_path: str
    start_line: int
    part: int


def _markdown_sections(lines: list[str], offset: int) -> list[Section]:
    sections: list[Section] = []
    body: list[str] = []
    title, heading, level, start = "", "", 0, offset + 1
    fence: str | None = None
    for i, line in enumerate(lines):
        fenced = _FENCE.match(line)
        if fenced:
            fence = None if fence == fenced.group(1) else (fence or fenced.group(1))
        match = _ATX.match(line) if fence is None and not fenced else None
        if match is None:
            body.append(line)
            continue
        sections.append(Section(title, heading, "\n".join(body), level, start))
        level, title = len(match.group(1)), _LINK.sub(r"\1", match.group(2)).strip()
        heading, start, body = line.rstrip(), offset + i + 1, []
    sections.append(Section(title, heading, "\n".join(body), level, start))
    return sections


def _rst_sections(lines: list[str], offset: int) -> list[Section]:
    sections: list[Section] = []
    levels: list[str] = []  # underline characters in order of first use
    body: list[str] = []
    title, heading, level, start = "", "", 0, offset + 1
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        under = _RST_UNDERLINE.match(nxt)
        if line.strip() and under and len(nxt.rstrip()) >= len(line.rstrip()):
            if body and _RST_UNDERLINE.match(body[-1]) and body[-1][0] == nxt[0]:
                body.pop()  # the overline of an over-and-underlined title
            sections.append(Section(title, heading, "\n".join(body), level, start))
            if under.group(1) not in levels:
                levels.append(under.group(1))
            level, title = levels.index(under.group(1)) + 1, line.strip()
            heading, start, body = line.strip(), offset + i + 1, []
            i += 2
            continue
        body.append(line)
        i += 1
    sections.append(Section(title, heading, "\n".join(body), level, start))
    return sections


def _python_sections(source: str, title: str) -> list[Section]:
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise InvalidInputError(f"cannot parse Python file {title!r}: {exc}") from None
    sections: list[Section] = []

    def visit(node: ast.AST, prefix: str, level: int) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                doc = ast.get_docstring(child)
                if doc:
                    kind = "class" if isinstance(child, ast.ClassDef) else "def"
                    sections.append(Section(name, f"{kind} {name}", doc, level, child.lineno))
                visit(child, f"{name}.", level + 1)

    module_doc = ast.get_docstring(tree)
    if module_doc:
        sections.append(Section(title, f"module {title}", module_doc, 1, 1))
    visit(tree, "", 2)
    return sections


def split_sections(
    text: str, file_type: FileType, *, title: str = "", offset: int = 0
) -> list[Section]:
    """The sections of ``text`` (sections with neither title nor text are left out).

    Args:
        text: the document (front matter already removed).
        file_type: how to find sections.
        title: the title of untitled text (plain text files, text before the first heading).
        offset: lines removed above ``text`` (so ``start_line`` counts from the file's top).

    Example:
        >>> [s.title for s in split_sections("intro\\n# One\\nx", "markdown", title="f")]
        ['f', 'One']
    """
    lines = text.splitlines()
    if file_type == "markdown":
        found = _markdown_sections(lines, offset)
    elif file_type == "rst":
        found = _rst_sections(lines, offset)
    elif file_type == "python":
        found = _python_sections(text, title)
    elif file_type == "text":
        found = [Section(title, "", text, 0, offset + 1)]
    else:
        raise InvalidInputError(
            f"file_type must be 'markdown', 'rst', 'text' or 'python', got {file_type!r}"
        )
    out = []
    for s in found:
        if not s.body.strip() and not s.heading:
            continue
        out.append(s if s.title else Section(title, s.heading, s.body, s.level, s.start_line))
    return out


def _words(para: str, size: int) -> list[tuple[str, str]]:
    """``(separator before, word)`` pairs of a paragraph; words longer than ``size`` are cut."""
    out: list[tuple[str, str]] = []
    for li, line in enumerate(para.splitlines()):
        for wi, word in enumerate(w for w in line.split(" ") if w):
            sep = " " if wi else ("\n" if li else "")
            for start in range(0, len(word), size):
                out.append((sep if start == 0 else "", word[start : start + size]))
    return out


def _tail(text: str, overlap: int) -> str:
    """The last ``overlap`` characters of ``text``, starting at a word boundary when possible."""
    if overlap <= 0 or not text:
        return ""
    tail = text[-overlap:]
    if len(tail) < len(text):
        cut = re.search(r"\s", tail)
        if cut is not None and cut.end() < len(tail):
            tail = tail[cut.end() :]
    return tail.strip()


def split_pieces(text: str, size: int, overlap: int = 0) -> list[str]:
    """Cut ``text`` into pieces of at most ``size`` characters, consecutive pieces sharing about
    ``overlap`` characters (the end of one repeated at the start of the next).

    Raises:
        InvalidInputError: ``size < 1`` or ``overlap`` outside ``[0, size // 2]``.

    Example:
        >>> split_pieces("aaa bbb ccc ddd", size=8, overlap=3)
        ['aaa bbb', 'bbb ccc', 'ccc ddd']
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InvalidInputError(f"chunk size must be a positive int, got {size!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap <= size // 2:
        raise InvalidInputError(
            f"chunk overlap must be an int in [0, size // 2 = {size // 2}], got {overlap!r}"
        )
    stripped = text.strip()
    if len(stripped) <= size:
        return [stripped] if stripped else []
    pieces: list[str] = []
    current, fresh = "", False  # fresh: current holds more than the carried overlap

    def flush() -> None:
        nonlocal current, fresh
        if fresh:
            pieces.append(current)
            current, fresh = _tail(current, overlap), False

    for para in re.split(r"\n[ \t]*\n", stripped):
        para = para.strip()
        if not para:
            continue
        joined = f"{current}\n\n{para}" if current else para
        if len(joined) > size and fresh:
            flush()
            joined = f"{current}\n\n{para}" if current else para
        if len(joined) <= size:
            current, fresh = joined, True
            continue
        for sep, word in _words(para, size):  # a paragraph too long for one piece
            joined = f"{current}{sep or ' '}{word}" if current else word
            if len(joined) > size:
                flush()
                joined = f"{current} {word}" if current else word
                if len(joined) > size:
                    joined = word
            current, fresh = joined, True
    flush()
    return pieces


def chunk_text(
    text: str,
    *,
    file_type: FileType,
    title: str,
    chunk_size: int = 1500,
    chunk_overlap: int = 150,
    offset: int = 0,
) -> list[Chunk]:
    """Chunks of a document: one per section, or several overlapping ones when it is long.

    The heading line is not counted in ``chunk_size``; it is prepended to each piece.

    Example:
        >>> [c.part for c in chunk_text("# T\\n" + "word " * 50, file_type="markdown",
        ...                              title="t", chunk_size=100, chunk_overlap=10)]
        [0, 1, 2]
    """
    chunks: list[Chunk] = []
    trail: list[tuple[int, str]] = []  # (level, title) of the enclosing sections
    for section in split_sections(text, file_type, title=title, offset=offset):
        trail = [(lv, t) for lv, t in trail if 0 < lv < section.level] if section.level else []
        trail.append((section.level, section.title))
        path = " > ".join(t for _, t in trail if t)
        pieces = split_pieces(section.body, chunk_size, chunk_overlap) or [""]
        for part, piece in enumerate(pieces):
            content = "\n".join(p for p in (section.heading, piece) if p)
            if content.strip():
                chunks.append(Chunk(content, section.title, path, section.start_line, part))
    return chunks
