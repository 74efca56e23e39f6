"""Query results of :class:`~costeer_lab.context.RichMemoryManager` and code-name matching."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from costeer_lab.context._codedoc import ClassDoc, FunctionDoc
from costeer_lab.context._records import Evidence, FileMetadata, FileReference

__all__ = ["CodeMatch", "CrossReference", "EvidenceMatch", "FileMatch"]


class FileMatch(NamedTuple):
    """A file found by a query, with the task it belongs to."""

    task_id: str
    file: FileReference


class CodeMatch(NamedTuple):
    """A function or class found by name: its task, file and documentation."""

    task_id: str
    path: str
    doc: FunctionDoc | ClassDoc


class EvidenceMatch(NamedTuple):
    """A piece of evidence found by a query, with its task."""

    task_id: str
    evidence: Evidence


class CrossReference(NamedTuple):
    """A link between two tasks: ``kind`` is ``same_content`` (equal file checksums),
    ``same_path``, ``same_function``, ``same_class`` or ``same_source`` (evidence sources);
    ``key`` is the shared checksum, path, name or source."""

    task_id: str
    other_task_id: str
    kind: str
    key: str


def walk_functions(meta: FileMetadata) -> Iterator[FunctionDoc]:
    """Top-level functions and every method (of nested classes too) of a file."""
    yield from meta.functions
    for cls in walk_classes(meta):
        yield from cls.methods


def walk_classes(meta: FileMetadata) -> Iterator[ClassDoc]:
    """Every class of a file, nested ones after their outer class."""
    stack = list(meta.classes)
    while stack:
        cls = stack.pop(0)
        yield cls
        stack.extend(cls.classes)


def name_matches(doc: FunctionDoc | ClassDoc, name: str) -> bool:
    """``name`` equals the short name or the dotted qualified name of ``doc``."""
    return name in (doc.name, doc.qualname)
