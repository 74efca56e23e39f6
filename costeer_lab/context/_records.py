"""Records of a task's context: what an agent did (:class:`Action`), what it produced
(:class:`Output`, :class:`FileReference`) and what that proves (:class:`Evidence`).

Frozen, JSON-serializable dataclasses with ``to_dict()`` / ``from_dict()``; no I/O. Timestamps
are Unix seconds (floats).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from costeer_lab.context._codedoc import ClassDoc, FunctionDoc
from costeer_lab.errors import InvalidInputError

__all__ = [
    "EVIDENCE_TYPES",
    "FILE_TYPES",
    "TASK_TYPES",
    "Action",
    "ActionContext",
    "Evidence",
    "EvidenceType",
    "FileMetadata",
    "FileReference",
    "FileType",
    "Output",
    "TaskType",
]

TaskType = Literal["simple_question", "coding_task", "research_task", "general_task"]
EvidenceType = Literal[
    "file_creation", "code_implementation", "documentation", "synthesis", "execution", "validation"
]
FileType = Literal["code", "documentation", "data", "config", "output"]

TASK_TYPES: tuple[str, ...] = ("simple_question", "coding_task", "research_task", "general_task")
EVIDENCE_TYPES: tuple[str, ...] = (
    "file_creation",
    "code_implementation",
    "documentation",
    "synthesis",
    "execution",
    "validation",
)
FILE_TYPES: tuple[str, ...] = ("code", "documentation", "data", "config", "output")


def check_choice(what: str, value: str, allowed: tuple[str, ...]) -> None:
    """Raise :class:`InvalidInputError` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise InvalidInputError(f"{what} must be one of {', '.join(allowed)}; got {value!r}")


@dataclass(frozen=True)
class Evidence:
    """A piece of evidence that a task progressed.

    Attributes:
        id: unique within the task (``"ev-0003"``).
        type: one of :data:`EVIDENCE_TYPES`.
        content: what was observed (a file's path and size, an execution's output, …).
        confidence: how strongly it supports completion, in ``[0, 1]``.
        source: where it came from (a file path, a tool name, an action id).
        timestamp: when it was recorded.
        metadata: anything else (``sources`` of a synthesis, the action id, …).
    """

    id: str
    type: EvidenceType
    content: str
    confidence: float
    source: str
    timestamp: float
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_choice("Evidence.type", self.type, EVIDENCE_TYPES)
        if not 0.0 <= self.confidence <= 1.0:
            raise InvalidInputError(
                f"Evidence.confidence must be in [0, 1]; got {self.confidence}"
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "content": self.content,
            "confidence": self.confidence,
            "source": self.source,
            "timestamp": self.timestamp,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Evidence:
        return cls(
            id=d["id"],
            type=d["type"],
            content=d["content"],
            confidence=float(d["confidence"]),
            source=d["source"],
            timestamp=float(d["timestamp"]),
            metadata=dict(d.get("metadata", {})),
        )


@dataclass(frozen=True)
class FileMetadata:
    """What is known about a file's content (code files: from :func:`document_python`)."""

    language: str = ""
    functions: tuple[FunctionDoc, ...] = ()
    classes: tuple[ClassDoc, ...] = ()
    imports: tuple[str, ...] = ()
    dependencies: tuple[str, ...] = ()
    purpose: str = ""
    documentation: str = ""
    syntax_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "functions": [f.to_dict() for f in self.functions],
            "classes": [c.to_dict() for c in self.classes],
            "imports": list(self.imports),
            "dependencies": list(self.dependencies),
            "purpose": self.purpose,
            "documentation": self.documentation,
            "syntax_error": self.syntax_error,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FileMetadata:
        return cls(
            language=d.get("language", ""),
            functions=tuple(FunctionDoc.from_dict(f) for f in d.get("functions", ())),
            classes=tuple(ClassDoc.from_dict(c) for c in d.get("classes", ())),
            imports=tuple(d.get("imports", ())),
            dependencies=tuple(d.get("dependencies", ())),
            purpose=d.get("purpose", ""),
            documentation=d.get("documentation", ""),
            syntax_error=d.get("syntax_error"),
        )


@dataclass(frozen=True)
class FileReference:
    """A file an agent made or changed, with its content and documentation.

    ``created_by`` is the id of the action that first wrote it; ``checksum`` the sha256 of the
    content (UTF-8); ``created_at`` stays when a later action rewrites the file,
    ``modified_at`` moves.
    """

    id: str
    path: str
    file_type: FileType
    content: str
    size: int
    created_by: str
    created_at: float
    modified_at: float
    checksum: str
    metadata: FileMetadata = field(default_factory=FileMetadata)

    def __post_init__(self) -> None:
        check_choice("FileReference.file_type", self.file_type, FILE_TYPES)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "file_type": self.file_type,
            "content": self.content,
            "size": self.size,
            "created_by": self.created_by,
            "created_at": self.created_at,
            "modified_at": self.modified_at,
            "checksum": self.checksum,
            "metadata": self.metadata.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FileReference:
        return cls(
            id=d["id"],
            path=d["path"],
            file_type=d["file_type"],
            content=d["content"],
            size=int(d["size"]),
            created_by=d["created_by"],
            created_at=float(d["created_at"]),
            modified_at=float(d["modified_at"]),
            checksum=d["checksum"],
            metadata=FileMetadata.from_dict(d.get("metadata", {})),
        )


@dataclass(frozen=True)
class Output:
    """What an action produced: ``files`` maps each written path to its content."""

    success: bool
    result: str = ""
    files: Mapping[str, str] = field(default_factory=dict)
    code: str = ""
    documentation: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "success": self.success,
            "result": self.result,
            "files": dict(self.files),
            "code": self.code,
            "documentation": self.documentation,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Output:
        return cls(
            success=bool(d["success"]),
            result=d.get("result", ""),
            files=dict(d.get("files", {})),
            code=d.get("code", ""),
            documentation=d.get("documentation", ""),
            metadata=dict(d.get("metadata", {})),
        )


@dataclass(frozen=True)
class ActionContext:
    """Why an action was taken: the plan it belongs to and the planner's reasoning."""

    plan_id: str = ""
    reasoning: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"plan_id": self.plan_id, "reasoning": self.reasoning}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ActionContext:
        return cls(d.get("plan_id", ""), d.get("reasoning", ""))


@dataclass(frozen=True)
class Action:
    """One thing an agent did: a tool call (``type``) with its inputs and outputs.

    ``evidence`` holds the ids of the evidence extracted from it (the records themselves are in
    the task's context).
    """

    id: str
    type: str
    inputs: Mapping[str, Any]
    outputs: Output
    timestamp: float
    success: bool
    evidence: tuple[str, ...] = ()
    context: ActionContext = field(default_factory=ActionContext)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "inputs": dict(self.inputs),
            "outputs": self.outputs.to_dict(),
            "timestamp": self.timestamp,
            "success": self.success,
            "evidence": list(self.evidence),
            "context": self.context.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Action:
        return cls(
            id=d["id"],
            type=d["type"],
            inputs=dict(d.get("inputs", {})),
            outputs=Output.from_dict(d["outputs"]),
            timestamp=float(d["timestamp"]),
            success=bool(d["success"]),
            evidence=tuple(d.get("evidence", ())),
            context=ActionContext.from_dict(d.get("context", {})),
        )
