"""A tiny versioned Markdown corpus and a knowledge base over it, shared by the docs tests."""

from __future__ import annotations

from pathlib import Path

from costeer_lab.docs import DocumentKB
from costeer_lab.embed import get_embedder

#: relative path -> content; two versions of the same API guide plus unrelated notes.
CORPUS: dict[str, str] = {
    "v1/api.md": (
        "# Client\n\nCreate a client with an API key.\n\n"
        "## Retries\n\nThe client retries failed requests twice by default.\n\n"
        "## Timeouts\n\nRequests time out after 60 seconds.\n"
    ),
    "v2/api.md": (
        "# Client\n\nCreate a client from the environment.\n\n"
        "## Retries\n\nSet max_retries to change how often failed requests are retried.\n\n"
        "## Timeouts\n\nRequests time out after 10 minutes; pass timeout= to change it.\n\n"
        "## Pagination\n\nList methods return pages; iterate to fetch every item.\n"
    ),
    "notes/cooking.md": (
        "---\ntitle: Kitchen notes\nauthor: ana\nrating: 4\n---\n"
        "# Bread\n\nKnead the dough for ten minutes and let it rise.\n\n"
        "# Soup\n\nSimmer the vegetables slowly.\n"
    ),
    "notes/garden.txt": "Water the tomatoes every morning. Prune the roses in spring.\n",
}


def write_corpus(root: Path, files: dict[str, str] | None = None) -> Path:
    """Write ``files`` (default :data:`CORPUS`) under ``root``; returns ``root``."""
    for rel, text in (CORPUS if files is None else files).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def open_kb(db: Path, collection: str = "test", **kw: object) -> DocumentKB:
    """A knowledge base in ``db`` with a small hashing embedder (fast, deterministic)."""
    kw.setdefault("embedder", get_embedder("hashing", dim=64))
    kw.setdefault("chunk_size", 400)
    kw.setdefault("chunk_overlap", 40)
    kw.setdefault("min_score", 0.0)  # ranking tests see every hit; min_score has its own tests
    return DocumentKB(collection, db, **kw)  # type: ignore[arg-type]
