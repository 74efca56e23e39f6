"""Evidence extraction and file registration: what an action's output proves.

Rules (``confidence`` in brackets):

* every file an action wrote → ``file_creation`` (1.0; 0.5 when the action failed);
* a code file that parses and holds code → ``code_implementation`` (0.9 with functions or
  classes, 0.6 for a plain script); a file with a syntax error gives none;
* a code file whose docstrings exceed ``doc_min_chars`` characters, or a documentation file
  (Markdown, reST, text) longer than that → ``documentation`` (0.8 / 0.9); so does an output's
  own ``documentation`` text;
* ``run_python`` / ``execute`` / ``run`` → ``execution`` (1.0 when it succeeded, 0.2 otherwise);
* ``validate`` / ``evaluate`` → ``validation`` (the output's ``metadata["confidence"]`` when
  given, else 1.0 on success and 0.3 on failure);
* ``answer`` / ``synthesize`` / ``summarize`` with a non-empty result → ``synthesis`` (0.8; 0.3
  when it failed), with the ``sources`` it names in its metadata.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from costeer_lab.context._codedoc import document_python
from costeer_lab.context._records import (
    Evidence,
    EvidenceType,
    FileMetadata,
    FileReference,
    FileType,
    Output,
)

__all__ = ["extract_evidence", "file_type_of", "register_file"]

_CODE = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".ts": "typescript", ".java": "java",
    ".c": "c", ".h": "c", ".cpp": "c++", ".hpp": "c++", ".go": "go", ".rs": "rust",
    ".rb": "ruby", ".sh": "shell", ".r": "r", ".jl": "julia", ".sql": "sql",
}  # fmt: skip
_DOCS = {".md": "markdown", ".rst": "restructuredtext", ".txt": "text", ".adoc": "asciidoc"}
_DATA = {".csv": "csv", ".tsv": "tsv", ".json": "json", ".jsonl": "json", ".parquet": "parquet",
         ".xml": "xml", ".npy": "numpy"}  # fmt: skip
_CONFIG = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".ini": "ini", ".cfg": "ini",
           ".env": "dotenv", ".conf": "conf"}  # fmt: skip
_EXECUTE = ("run_python", "execute", "run")
_VALIDATE = ("validate", "evaluate")
_SYNTHESIZE = ("answer", "synthesize", "summarize")


def file_type_of(path: str) -> tuple[FileType, str]:
    """``(file type, language)`` of a path, from its suffix.

    Example:
        >>> file_type_of("src/solution.py"), file_type_of("README.md"), file_type_of("x.log")
        (('code', 'python'), ('documentation', 'markdown'), ('output', ''))
    """
    suffix = PurePosixPath(path).suffix.lower()
    for table, kind in ((_CODE, "code"), (_DOCS, "documentation"), (_DATA, "data")):
        if suffix in table:
            return kind, table[suffix]  # type: ignore[return-value]
    if suffix in _CONFIG:
        return "config", _CONFIG[suffix]
    return "output", ""


def _purpose(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:200]
    return ""


def register_file(
    path: str,
    content: str,
    *,
    file_id: str,
    action_id: str,
    now: float,
    previous: FileReference | None = None,
) -> FileReference:
    """A :class:`FileReference` for ``content`` written to ``path``, documented when it is
    Python; a rewrite keeps the ``id``, ``created_by`` and ``created_at`` of ``previous``.

    Example:
        >>> ref = register_file("a.py", "'''Adds.'''\\ndef add(a, b):\\n    return a + b\\n",
        ...                     file_id="f-1", action_id="a-1", now=0.0)
        >>> ref.file_type, [f.name for f in ref.metadata.functions], ref.metadata.purpose
        ('code', ['add'], 'Adds.')
    """
    file_type, language = file_type_of(path)
    if language == "python":
        code = document_python(content, path)
        meta = FileMetadata(
            language=language,
            functions=code.functions,
            classes=code.classes,
            imports=code.imports,
            dependencies=code.dependencies,
            purpose=_purpose(code.module_doc or ""),
            documentation=code.documentation,
            syntax_error=code.syntax_error,
        )
    elif file_type == "documentation":
        meta = FileMetadata(language=language, purpose=_purpose(content), documentation=content)
    else:
        meta = FileMetadata(language=language)
    data = content.encode("utf-8")
    return FileReference(
        id=previous.id if previous else file_id,
        path=path,
        file_type=file_type,
        content=content,
        size=len(data),
        created_by=previous.created_by if previous else action_id,
        created_at=previous.created_at if previous else now,
        modified_at=now,
        checksum=hashlib.sha256(data).hexdigest(),
        metadata=meta,
    )


def _sources(inputs: Mapping[str, Any], output: Output) -> list[str]:
    raw = output.metadata.get("sources", inputs.get("sources", ()))
    return [str(s) for s in raw] if isinstance(raw, list | tuple) else []


def extract_evidence(
    action_type: str,
    action_id: str,
    inputs: Mapping[str, Any],
    output: Output,
    files: list[FileReference],
    *,
    now: float,
    first_index: int,
    doc_min_chars: int = 50,
) -> list[Evidence]:
    """The evidence one action produced (see the module docstring for the rules).

    ``files`` are the references registered for ``output.files``; evidence ids are
    ``ev-NNNN`` counting from ``first_index``.

    Example:
        >>> ev = extract_evidence("run_python", "a-1", {}, Output(True, "42"), [], now=0.0,
        ...                       first_index=1)
        >>> [(e.id, e.type, e.confidence) for e in ev]
        [('ev-0001', 'execution', 1.0)]
    """
    found: list[tuple[EvidenceType, str, float, str, dict[str, Any]]] = []
    for ref in files:
        meta = ref.metadata
        found.append(
            ("file_creation", f"wrote {ref.path} ({ref.size} bytes)",
             1.0 if output.success else 0.5, ref.path, {"checksum": ref.checksum})
        )  # fmt: skip
        if ref.file_type == "code" and meta.syntax_error is None and ref.content.strip():
            named = [f.name for f in meta.functions] + [c.name for c in meta.classes]
            what = f"defines {', '.join(named)}" if named else "a script"
            found.append(
                ("code_implementation", f"{ref.path}: {what}", 0.9 if named else 0.6,
                 ref.path, {"functions": named})
            )  # fmt: skip
        if len(meta.documentation.strip()) > doc_min_chars:
            conf = 0.9 if ref.file_type == "documentation" else 0.8
            found.append(
                ("documentation", meta.documentation.strip()[:500], conf, ref.path,
                 {"chars": len(meta.documentation.strip())})
            )  # fmt: skip
    if len(output.documentation.strip()) > doc_min_chars:
        found.append(("documentation", output.documentation.strip()[:500], 0.8, action_type, {}))
    meta_out = dict(output.metadata)
    if action_type in _EXECUTE:
        found.append(
            ("execution", output.result[:2000], 1.0 if output.success else 0.2, action_type,
             {k: meta_out[k] for k in ("returncode", "duration_s", "isolation") if k in meta_out})
        )  # fmt: skip
    elif action_type in _VALIDATE:
        given = meta_out.get("confidence")
        conf = 1.0 if output.success else 0.3
        if isinstance(given, int | float) and 0.0 <= given <= 1.0:
            conf = float(given)
        found.append(
            ("validation", output.result[:2000], float(conf), action_type,
             {"passed": output.success})
        )  # fmt: skip
    elif action_type in _SYNTHESIZE and output.result.strip():
        found.append(
            ("synthesis", output.result[:2000], 0.8 if output.success else 0.3, action_type,
             {"sources": _sources(inputs, output)})
        )  # fmt: skip
    return [
        Evidence(
            id=f"ev-{first_index + i:04d}",
            type=etype,
            content=content,
            confidence=conf,
            source=source,
            timestamp=now,
            metadata={**meta, "action_id": action_id},
        )
        for i, (etype, content, conf, source, meta) in enumerate(found)
    ]
