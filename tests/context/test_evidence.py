"""Evidence extraction and file registration, through RichMemoryManager.add_action."""

from __future__ import annotations

import hashlib

import pytest

from costeer_lab.context import Output, RichMemoryManager, extract_evidence, file_type_of
from costeer_lab.errors import InvalidInputError, NotFoundError

from .conftest import Clock
from .samples import BROKEN, DOCUMENTED, UNDOCUMENTED


def _types(ctx_evidence: object) -> list[tuple[str, float]]:
    return [(e.type, e.confidence) for e in ctx_evidence]  # type: ignore[attr-defined]


def test_documented_code_file_gives_creation_implementation_and_documentation(
    mm: RichMemoryManager, clock: Clock
) -> None:
    mm.create_task("Implement gcd", task_id="t")
    out = Output(True, "wrote", files={"gcd.py": DOCUMENTED})
    ctx = mm.add_action("t", "write_file", {"path": "gcd.py"}, out)
    assert _types(ctx.evidence) == [
        ("file_creation", 1.0), ("code_implementation", 0.9), ("documentation", 0.8)
    ]  # fmt: skip
    assert [e.id for e in ctx.evidence] == ["ev-0001", "ev-0002", "ev-0003"]
    assert ctx.actions[0].evidence == ("ev-0001", "ev-0002", "ev-0003")
    assert all(e.source == "gcd.py" and e.timestamp == clock.now for e in ctx.evidence)
    assert all(e.metadata["action_id"] == "act-0001" for e in ctx.evidence)
    assert ctx.evidence[1].content == "gcd.py: defines gcd"
    (ref,) = ctx.files
    assert ref.file_type == "code" and ref.metadata.language == "python"
    assert ref.size == len(DOCUMENTED.encode()) and ref.created_by == "act-0001"
    assert ref.checksum == hashlib.sha256(DOCUMENTED.encode()).hexdigest()
    assert ref.metadata.purpose.startswith("Greatest common divisor")
    assert ref.metadata.functions[0].signature == "gcd(a: int, b: int) -> int"


def test_undocumented_script_and_broken_code(mm: RichMemoryManager) -> None:
    mm.create_task("Implement gcd", task_id="t")
    ctx = mm.add_action("t", "write_file", {}, Output(True, files={"a.py": UNDOCUMENTED}))
    assert _types(ctx.evidence) == [("file_creation", 1.0), ("code_implementation", 0.9)]
    ctx = mm.add_action("t", "write_file", {}, Output(True, files={"b.py": "print(1)\n"}))
    assert _types(ctx.evidence[2:]) == [("file_creation", 1.0), ("code_implementation", 0.6)]
    ctx = mm.add_action("t", "write_file", {}, Output(True, files={"c.py": BROKEN}))
    assert _types(ctx.evidence[4:]) == [("file_creation", 1.0)]  # no implementation evidence
    broken = ctx.file("c.py")
    assert broken is not None and broken.metadata.syntax_error is not None


def test_documentation_files_and_output_documentation(mm: RichMemoryManager) -> None:
    mm.create_task("Write the guide", task_id="t")
    long_doc = "# Guide\n\n" + "This guide explains how the factor is computed. " * 2
    ctx = mm.add_action("t", "write_file", {}, Output(True, files={"GUIDE.md": long_doc}))
    assert _types(ctx.evidence) == [("file_creation", 1.0), ("documentation", 0.9)]
    assert ctx.files[0].metadata.purpose == "Guide"
    ctx = mm.add_action("t", "write_file", {}, Output(True, files={"short.md": "# Hi\n"}))
    assert _types(ctx.evidence[2:]) == [("file_creation", 1.0)]  # 50 characters or fewer
    ctx = mm.add_action("t", "explain", {}, Output(True, documentation=long_doc))
    assert _types(ctx.evidence[3:]) == [("documentation", 0.8)]


def test_execution_validation_and_synthesis(mm: RichMemoryManager) -> None:
    mm.create_task("Do several things", task_id="t", task_type="general_task")
    ctx = mm.add_action("t", "run_python", {"path": "a.py"}, Output(True, "6\n"))
    ctx = mm.add_action("t", "run_python", {"path": "b.py"}, Output(False, "exit code 1"))
    assert _types(ctx.evidence) == [("execution", 1.0), ("execution", 0.2)]
    ctx = mm.add_action(
        "t", "validate", {}, Output(False, "missing", metadata={"confidence": 0.4})
    )
    ctx = mm.add_action("t", "evaluate", {}, Output(True, "passed"))
    ctx = mm.add_action(
        "t", "evaluate", {"n": 2}, Output(False, "bad", metadata={"confidence": 7})
    )
    assert _types(ctx.evidence[2:]) == [
        ("validation", 0.4),
        ("validation", 1.0),
        ("validation", 0.3),
    ]
    ctx = mm.add_action(
        "t", "summarize", {"sources": ["a.md", "b.md"]}, Output(True, "Both agree.")
    )
    last = ctx.evidence[-1]
    assert (last.type, last.confidence, last.metadata["sources"]) == (
        "synthesis",
        0.8,
        ["a.md", "b.md"],
    )
    # an empty answer proves nothing; neither does reading a file
    before = len(ctx.evidence)
    ctx = mm.add_action("t", "answer", {}, Output(True, "  "))
    ctx = mm.add_action("t", "read_file", {"path": "a.md"}, Output(True, "text"))
    assert len(ctx.evidence) == before


def test_failed_write_lowers_confidence_and_rewrite_keeps_creation(
    mm: RichMemoryManager, clock: Clock
) -> None:
    mm.create_task("Implement gcd", task_id="t")
    ctx = mm.add_action("t", "write_file", {}, Output(False, files={"x.csv": "a,b\n"}))
    assert _types(ctx.evidence) == [("file_creation", 0.5)]
    created = clock.now
    clock.now += 5
    ctx = mm.add_action("t", "write_file", {}, Output(True, files={"x.csv": "a,b\n1,2\n"}))
    (ref,) = ctx.files
    assert (ref.created_by, ref.created_at, ref.modified_at) == ("act-0001", created, clock.now)
    assert ref.id == "file-0001" and ref.content.endswith("1,2\n") and ref.file_type == "data"


def test_file_types() -> None:
    assert file_type_of("a/b.PY") == ("code", "python")
    assert file_type_of("notes.rst") == ("documentation", "restructuredtext")
    assert file_type_of("panel.parquet") == ("data", "parquet")
    assert file_type_of("pyproject.toml") == ("config", "toml")
    assert file_type_of("run.log") == ("output", "")


def test_extract_evidence_numbers_from_the_given_index() -> None:
    ev = extract_evidence("answer", "a-9", {}, Output(True, "x"), [], now=3.0, first_index=12)
    assert [(e.id, e.type, e.timestamp) for e in ev] == [("ev-0012", "synthesis", 3.0)]


def test_bad_input_is_refused_with_the_value_named(mm: RichMemoryManager) -> None:
    with pytest.raises(InvalidInputError, match=r"task_type must be one of .*'homework'"):
        mm.create_task("x", task_type="homework")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="non-empty string"):
        mm.create_task("   ")
    with pytest.raises(InvalidInputError, match="'a::b'"):
        mm.create_task("x", task_id="a::b")
    mm.create_task("x", task_id="t")
    with pytest.raises(InvalidInputError, match="'t' already exists"):
        mm.create_task("y", task_id="t")
    assert mm.create_task("y", task_id="t", exist_ok=True).task == "x"
    with pytest.raises(InvalidInputError, match="action_type"):
        mm.add_action("t", "", {}, Output(True))
    with pytest.raises(NotFoundError, match="'nope'"):
        mm.add_action("nope", "answer", {}, Output(True))
    assert len(mm.get_task("t").actions) == 0  # nothing was recorded by the failed calls
