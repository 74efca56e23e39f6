"""The planner and the context's evidence, coverage, examples and metadata rules pinned
exactly: tests written for the mutants that survived ``make mutation``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from costeer_lab.context import (
    Output,
    RuleBasedPlanner,
    TaskContext,
    detect_task_type,
    docstring_examples,
    document_python,
    document_task,
    estimate_complexity,
    extract_evidence,
    find_test_references,
    is_test_file,
    read_tests,
    register_file,
    with_test_coverage,
)
from costeer_lab.context._append import append_action
from costeer_lab.context._priority import check_complexity, check_priority
from costeer_lab.context._records import ActionContext
from costeer_lab.context._simulate import apply_step, expected_output
from costeer_lab.errors import InvalidInputError

CODE = '''"""Greatest common divisors."""
import math
import numpy as np


class Pair:
    """Two numbers.

    More text.
    """

    def total(self):
        return 1


def gcd(a: int, b: int) -> int:
    """Greatest common divisor of a and b.

    Second line.

    Example:
        >>> gcd(4, 6)
        2
    """
    while b:
        a, b = b, a % b
    return a


def lcm(a, b):
    return a * b // gcd(a, b)
'''
TEST = "from gcd import gcd\n\ndef test_gcd():\n    assert gcd(4, 6) == 2\n"


def _written(task: str, files: dict[str, str]) -> TaskContext:
    ctx = TaskContext("t", "coding_task", task)
    for path, content in files.items():
        ctx = apply_step(ctx, "write_file", {"path": path, "content": content})
    return ctx


def test_a_question_without_an_answer_has_no_step() -> None:
    assert RuleBasedPlanner().plan(TaskContext("t", "simple_question", "6 * 7?")) is None


def test_document_task_is_exact() -> None:
    title = "Write gcd and lcm, " + "x" * 70
    ctx = _written(f"  {title}\nwith tests", {"gcd.py": CODE, "test_gcd.py": TEST, "n.md": "# n"})
    assert document_task(ctx) == "\n".join(
        [
            f"# {title[:80]}",
            "",
            "Files written for this task:",
            "",
            "## `gcd.py` — Greatest common divisors.",
            "",
            "- class `Pair` (lines 6-13)",
            "  Two numbers.",
            "- `gcd(a: int, b: int) -> int` (`gcd`, lines 16-27, cyclomatic complexity 2)",
            "  Greatest common divisor of a and b.",
            "  example:",
            "",
            "  ```python",
            "  >>> gcd(4, 6)",
            "  2",
            "  ```",
            "",
            "  tested by: test_gcd.py::test_gcd",
            "- `lcm(a, b)` (`lcm`, lines 30-31, cyclomatic complexity 1)",
            "  tested by: none",
            "- `total(self)` (`Pair.total`, lines 12-13, cyclomatic complexity 1)",
            "  tested by: none",
            "- depends on: numpy",
            "",
            "## `test_gcd.py`",
            "",
            "- `test_gcd()` (`test_gcd`, lines 3-4, cyclomatic complexity 2)",
            "- depends on: gcd",
            "",
        ]
    )


def test_document_task_without_tests_or_purpose_says_nothing_of_them() -> None:
    ctx = _written("Write f", {"f.py": "def f(x):\n    return x\n"})
    assert document_task(ctx) == "\n".join(
        [
            "# Write f",
            "",
            "Files written for this task:",
            "",
            "## `f.py`",
            "",
            "- `f(x)` (`f`, lines 1-2, cyclomatic complexity 1)",
            "",
        ]
    )


def test_pending_writes_are_reasoned_and_a_non_ascii_file_counts_as_written() -> None:
    planner = RuleBasedPlanner(files={"é.py": "s = 'é'\n", "b.py": "y = 2\n"})
    steps = planner.candidate_steps(TaskContext("t", "coding_task", "Write"), max_depth=1)
    assert [(s.tool, s.reasoning) for s in steps] == [
        ("write_file", "write é.py"),
        ("write_file", "write b.py"),
    ]
    ctx = _written("Write", {"é.py": "s = 'é'\n"})
    (step,) = planner.candidate_steps(ctx, max_depth=1)
    assert step.inputs["path"] == "b.py"  # the checksum of the written file matches


def _steps(planner: RuleBasedPlanner, ctx: TaskContext) -> list[tuple[str, object, str]]:
    return [
        (s.tool, dict(s.inputs), s.reasoning) for s in planner.candidate_steps(ctx, max_depth=1)
    ]


def test_coding_steps_after_the_writes_are_reasoned() -> None:
    files = {"a.py": "'''A.'''\n\ndef f():\n    '''" + "Returns one, always. " * 4 + "'''\n"}
    files["test_a.py"] = "from a import f\n\ndef test_f():\n    assert f() is None\n"
    planner = RuleBasedPlanner(files=files)
    ctx = TaskContext("t", "coding_task", "Write a", metadata={"evaluation": "test_a.py"})
    for path, content in files.items():
        ctx = apply_step(ctx, "write_file", {"path": path, "content": content})
    assert _steps(planner, ctx) == [
        ("run_python", {"path": "a.py"}, "run a.py to check it"),
        ("evaluate", {"path": "test_a.py"}, "run the task's evaluation test_a.py on the code"),
        ("validate", {}, "check the completion rule"),
    ]
    # another file run, an evaluation done: only the main file's run is still asked for
    ctx = apply_step(ctx, "run_python", {"path": "test_a.py"})
    ctx = apply_step(ctx, "evaluate", {"path": "test_a.py"})
    assert [t for t, _, _ in _steps(planner, ctx)] == ["run_python", "validate"]


def test_an_evaluation_that_is_not_a_file_name_is_not_run() -> None:
    planner = RuleBasedPlanner(files={"a.py": "x = 1\n"})
    for evaluation in ("", ["test_a.py"]):
        ctx = TaskContext("t", "coding_task", "Write a", metadata={"evaluation": evaluation})
        ctx = apply_step(ctx, "write_file", {"path": "a.py", "content": "x = 1\n"})
        assert "evaluate" not in [t for t, _, _ in _steps(planner, ctx)]


def test_a_short_readme_is_not_rewritten_by_the_planner() -> None:
    planner = RuleBasedPlanner(files={"a.py": "x = 1\n"})
    ctx = TaskContext("t", "coding_task", "Write a")
    ctx = apply_step(ctx, "write_file", {"path": "a.py", "content": "x = 1\n"})
    assert ("write_file", "README.md") in [(t, i.get("path")) for t, i, _ in _steps(planner, ctx)]  # type: ignore[attr-defined]
    ctx = apply_step(ctx, "write_file", {"path": "README.md", "content": "# a\n"})
    assert [t for t, _, _ in _steps(planner, ctx)] == ["run_python", "validate"]


def test_answer_steps_are_reasoned_per_task_type_and_not_repeated() -> None:
    planner = RuleBasedPlanner(answer="42", sources=["a.md"])
    research = TaskContext("t", "research_task", "Summarise a.md")
    assert _steps(planner, research) == [("read_file", {"path": "a.md"}, "read source a.md")]
    research = apply_step(research, "read_file", {"path": "a.md"})
    assert _steps(planner, research) == [
        ("answer", {"text": "42", "sources": ["a.md"]}, "summarise the sources")
    ]
    for task_type in ("simple_question", "general_task"):
        ctx = TaskContext("t", task_type, "6 * 7?")
        assert _steps(planner, ctx) == [
            ("answer", {"text": "42", "sources": ["a.md"]}, "answer the question")
        ]
        assert _steps(planner, apply_step(ctx, "answer", {"text": "42"})) == []
    assert _steps(planner, apply_step(research, "answer", {"text": "42"})) == []


def test_complexity_estimate_edges() -> None:
    words = " ".join(["word"] * 60)
    assert estimate_complexity(words, "general_task") == 2
    assert estimate_complexity(words + " more", "general_task") == 3
    assert estimate_complexity("x", "unknown_type") == 2
    two = "Do:\n- a\n- b"
    assert estimate_complexity(two, "simple_question") == 1
    assert estimate_complexity(two + "\n  3) c", "simple_question") == 2
    assert estimate_complexity("• a\n* b\n1. c", "research_task") == 4
    assert estimate_complexity(words + " more\n- a\n- b\n- c", "coding_task") == 5
    assert estimate_complexity("-a\n-b\n-c", "coding_task") == 3  # no space: not items


def test_priority_and_complexity_checks() -> None:
    assert check_priority(-3) == -3 and check_priority(0) == 0
    for bad in (True, 1.0, "1", None):
        with pytest.raises(
            InvalidInputError, match=f"priority must be an integer .*; got {bad!r}"
        ):
            check_priority(bad)
    assert [check_complexity(c) for c in (1, 5)] == [1, 5]
    for bad in (0, 6, True, 2.0):
        with pytest.raises(InvalidInputError, match=f"from 1 to 5; got {bad!r}"):
            check_complexity(bad)


def _ev(
    action: str, output: Output, inputs: dict[str, object] | None = None
) -> list[tuple[str, str, float, str, dict[str, object]]]:
    refs = [
        register_file(p, c, file_id=f"f{i}", action_id="a", now=1.0)
        for i, (p, c) in enumerate(output.files.items())
    ]
    ev = extract_evidence(action, "a", inputs or {}, output, refs, now=1.0, first_index=1)
    return [(e.type, e.content, e.confidence, e.source, dict(e.metadata)) for e in ev]


def test_evidence_contents_and_metadata_are_exact() -> None:
    doc = "d" * 51
    created, (_, content, conf, src, meta) = _ev(
        "write_file", Output(False, files={"g.md": "x" * 600})
    )
    assert created[2:4] == (0.5, "g.md")
    assert (content, conf, src, meta) == ("x" * 500, 0.9, "g.md", {"chars": 600, "action_id": "a"})
    assert [t for t, *_ in _ev("write_file", Output(True, files={"g.md": "y" * 50}))] == [
        "file_creation"
    ]
    assert _ev("write_file", Output(True, files={"g.md": doc}))[1][:3] == (
        "documentation",
        doc,
        0.9,
    )
    assert _ev("explain", Output(True, documentation=" " + doc + " ")) == [
        ("documentation", doc, 0.8, "explain", {"action_id": "a"})
    ]
    assert _ev("explain", Output(True, documentation="z" * 50)) == []
    # a blank code file is written but implements nothing
    assert [t for t, *_ in _ev("write_file", Output(True, files={"b.py": "  \n"}))] == [
        "file_creation"
    ]
    (run,) = _ev(
        "execute",
        Output(True, "r" * 2100, metadata={"returncode": 0, "duration_s": 0.5, "other": 1}),
    )
    assert run == (
        "execution",
        "r" * 2000,
        1.0,
        "execute",
        {"returncode": 0, "duration_s": 0.5, "action_id": "a"},
    )
    assert _ev("run", Output(False, "x", metadata={"isolation": "ns"}))[0][2:] == (
        0.2, "run", {"isolation": "ns", "action_id": "a"}
    )  # fmt: skip
    for given, want in ((0.0, 0.0), (1.0, 1.0), (-0.1, 1.0), (1.1, 1.0), ("0.5", 1.0)):
        (val,) = _ev("validate", Output(True, "v" * 2100, metadata={"confidence": given}))
        assert val == (
            "validation",
            "v" * 2000,
            want,
            "validate",
            {"passed": True, "action_id": "a"},
        )
    (syn,) = _ev(
        "synthesize", Output(False, "s" * 2100, metadata={"sources": ("b", 2)}), {"sources": ["a"]}
    )
    assert syn == (
        "synthesis",
        "s" * 2000,
        0.3,
        "synthesize",
        {"sources": ["b", "2"], "action_id": "a"},
    )
    (syn,) = _ev("answer", Output(True, "ok"), {"sources": "a.md"})
    assert syn[4] == {"sources": [], "action_id": "a"}


def test_a_registered_file_has_an_exact_purpose_and_no_python_metadata_when_not_code() -> None:
    long = "#  " + "p" * 250 + "\nrest"
    ref = register_file("a.md", "\n  \n" + long, file_id="f", action_id="a", now=2.0)
    assert ref.metadata.purpose == "p" * 200 and ref.metadata.language == "markdown"
    assert ref.metadata.documentation == "\n  \n" + long
    ref = register_file("a.py", '"""\n\n  Adds.\n"""\n', file_id="f", action_id="a", now=2.0)
    assert ref.metadata.purpose == "Adds."
    data = register_file("d.csv", "a,b\n", file_id="f", action_id="a", now=2.0)
    assert (data.metadata.language, data.metadata.purpose, data.metadata.documentation) == (
        "csv",
        "",
        "",
    )
    assert register_file("n.md", "", file_id="f", action_id="a", now=2.0).metadata.purpose == ""


def test_task_type_detection_edges() -> None:
    q25 = " ".join(["why"] * 24) + " now?"
    assert detect_task_type(f"  {q25}  ") == "simple_question"
    assert detect_task_type("why " + q25) == "general_task"  # 26 words
    assert detect_task_type("Is it raining? Tell me") == "general_task"
    assert detect_task_type("fix solver.py please") == "coding_task"
    assert detect_task_type("Review the papers?") == "research_task"
    for bad in ("  \n", 3, None):
        with pytest.raises(InvalidInputError, match=re.escape(f"non-empty string; got {bad!r}")):
            detect_task_type(bad)  # type: ignore[arg-type]


def test_docstring_examples_edges() -> None:
    doc = "Adds.\n\n  >>> a = 1\n  >>> a + 1\n  2\n\ntext\n\t>>> b\n        c\n"
    assert docstring_examples(doc) == (">>> a = 1\n>>> a + 1\n2", ">>> b\nc")
    assert docstring_examples("") == () and docstring_examples(None) == ()
    sec = "Adds.\n\n  Usage :\n      x = add(1)\n\n      y = x\n  Returns: z\nExamples:\n"
    assert docstring_examples(sec) == ("x = add(1)\n\ny = x",)
    assert docstring_examples("EXAMPLE:\n  f()\nUsage:\n  g()\n") == ("f()", "g()")


def test_test_references_edges() -> None:
    tests = {
        "t/test_a.py": (
            "import m\n\ndef helper():\n    m.hidden()\n\n"
            "class TestShape:\n    def test_area(self):\n        assert m.area() == 1\n"
            "    def check(self):\n        m.other()\n\n"
            "class Shapes:\n    def test_no(self):\n        m.nope()\n\n"
            "async def test_async():\n    await m.run()\n"
        ),
        "t/bad_test.py": "def test_x(:\n",
    }
    assert find_test_references(tests) == {
        "area": ("t/test_a.py::TestShape::test_area",),
        "m": ("t/test_a.py::TestShape::test_area", "t/test_a.py::test_async"),
        "run": ("t/test_a.py::test_async",),
    }
    assert [is_test_file(p) for p in ("a/test_x.py", "x_test.py", "test_x.txt", "tests.py")] == [
        True, True, False, False
    ]  # fmt: skip


def test_coverage_fills_methods_and_nested_classes_from_a_folder(tmp_path: Path) -> None:
    src = (
        "class A:\n    def run(self):\n        pass\n"
        "    class B:\n        def go(self):\n            pass\n\ndef f():\n    pass\n"
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "test_a.py").write_text("def test_a():\n    A().run()\n    B().go()\n")
    (tmp_path / "helper.py").write_text("def test_h():\n    f()\n")
    assert read_tests(tmp_path) == {
        "sub/test_a.py": "def test_a():\n    A().run()\n    B().go()\n"
    }
    ref = with_test_coverage(document_python(src, "a.py"), tmp_path)
    (a,) = ref.classes
    assert a.tested_by == ("sub/test_a.py::test_a",)
    assert [(m.name, m.tested_by) for m in a.methods] == [("run", ("sub/test_a.py::test_a",))]
    (b,) = a.classes
    assert b.tested_by == ("sub/test_a.py::test_a",) and b.methods[0].tested_by == (
        "sub/test_a.py::test_a",
    )
    assert [(f.name, f.tested_by) for f in ref.functions] == [("f", ())]


def test_expected_outputs_of_each_tool() -> None:
    assert expected_output("write_file", {"path": "a.py", "content": "x"}) == Output(
        True, "wrote a.py", files={"a.py": "x"}
    )
    assert expected_output("write_file", {}) == Output(True, "wrote ", files={"": ""})
    for tool in ("run_python", "evaluate"):
        assert expected_output(tool, {"path": "a.py"}) == Output(
            True, "", metadata={"returncode": 0}
        )
    assert expected_output("answer", {"text": 42, "sources": ["s"]}) == Output(
        True, "42", metadata={"sources": ["s"]}
    )
    assert expected_output("answer", {}) == Output(True, "", metadata={"sources": []})
    assert expected_output("read_file", {"path": "a"}) == Output(True, "")


def test_a_simulated_step_is_recorded_at_the_context_time_with_its_threshold() -> None:
    ctx = TaskContext("t", "general_task", "Explain", updated_at=7.5)
    doc = "d" * 51  # documentation above the default 50 characters, not above 80
    out = apply_step(ctx, "write_file", {"path": "n.md", "content": doc})
    assert [(e.type, e.timestamp) for e in out.evidence] == [
        ("file_creation", 7.5), ("documentation", 7.5)
    ]  # fmt: skip
    out = apply_step(ctx, "write_file", {"path": "n.md", "content": doc}, doc_min_chars=80)
    assert [e.type for e in out.evidence] == ["file_creation"]


def test_appended_actions_number_files_and_evidence_on() -> None:
    ctx = apply_step(
        TaskContext("t", "coding_task", "Write"),
        "write_file",
        {"path": "a.py", "content": "x = 1"},
    )
    why = ActionContext("p1", "because")
    inputs = {"path": "b.py"}
    done = append_action(
        ctx, "write_file", inputs, Output(False, "w", files={"b.py": "y = 2", "a.py": "x = 2"}),
        now=9.0, doc_min_chars=50, action_context=why,
    )  # fmt: skip
    assert done.action.id == "act-0002" and done.action.context == why
    assert (done.action.type, done.action.timestamp, done.action.success) == (
        "write_file",
        9.0,
        False,
    )
    assert done.action.inputs == inputs and done.action.inputs is not inputs
    assert [(f.path, f.id, f.created_by) for f in done.context.files] == [
        ("a.py", "file-0001", "act-0001"), ("b.py", "file-0002", "act-0002")
    ]  # fmt: skip
    assert [f.path for f in done.new_files] == ["b.py", "a.py"]
    assert [e.id for e in done.evidence] == ["ev-0003", "ev-0004", "ev-0005", "ev-0006"]
    assert done.action.evidence == ("ev-0003", "ev-0004", "ev-0005", "ev-0006")
    assert done.context.evidence[:2] == ctx.evidence and done.context.actions[0] == ctx.actions[0]
    plain = append_action(ctx, "validate", {}, Output(True), now=1.0, doc_min_chars=50)
    assert plain.action.context == ActionContext() and plain.new_files == ()


def test_an_unparsable_test_file_is_skipped_not_the_end_and_bytes_are_replaced(
    tmp_path: Path,
) -> None:
    tests = {"test_bad.py": "def test_x(:\n", "test_ok.py": "def test_ok():\n    run()\n"}
    assert find_test_references(tests) == {"run": ("test_ok.py::test_ok",)}
    (tmp_path / "test_b.py").write_bytes(b"def test_b():\n    run()  # \xff\n")
    assert read_tests(tmp_path) == {"test_b.py": "def test_b():\n    run()  # \ufffd\n"}
    ref = with_test_coverage(document_python("class Lone:\n    pass\n", "l.py"), tmp_path)
    assert ref.classes[0].tested_by == ()


def test_document_task_after_a_note_lists_every_test_and_an_undocumented_class() -> None:
    tests = "from m import f\n\ndef test_a():\n    f()\n\ndef test_b():\n    f()\n"
    code = "class K:\n    pass\n\n\ndef f():\n    return 1\n"
    ctx = _written("Write m", {"notes.md": "# n", "m.py": code, "test_m.py": tests})
    text = document_task(ctx)
    assert "- class `K` (lines 1-2)\n- `f()`" in text
    assert "  tested by: test_m.py::test_a, test_m.py::test_b" in text


def test_a_registered_file_keeps_its_imports_a_purpose_and_its_checksum_as_evidence() -> None:
    code = '"""XLA helpers."""\nimport os\nfrom a.b import c\n'
    ref = register_file("pkg/mod.py", code, file_id="f", action_id="a", now=1.0)
    assert ref.metadata.imports == ("os", "a.b") and ref.metadata.purpose == "XLA helpers."
    doc = register_file("N.md", "## Xarray notes\nbody", file_id="g", action_id="a", now=1.0)
    assert doc.metadata.purpose == "Xarray notes"
    (ev,) = [
        e
        for e in extract_evidence(
            "write_file", "a1", {}, Output(True, ""), [ref], now=2.0, first_index=0
        )
        if e.type == "file_creation"
    ]
    assert ev.metadata == {"checksum": ref.checksum, "action_id": "a1"}


def test_code_evidence_names_what_a_file_defines_and_bounds_are_exact() -> None:
    lib = register_file("m.py", "def f():\n    pass\nclass C:\n    pass\n", file_id="f",
                        action_id="a", now=1.0)  # fmt: skip
    script = register_file("s.py", "x = 1\n", file_id="g", action_id="a", now=1.0)
    evs = extract_evidence("write_file", "a1", {}, Output(True, ""), [lib, script], now=2.0,
                           first_index=0)  # fmt: skip
    code = [(e.content, e.confidence, e.metadata) for e in evs if e.type == "code_implementation"]
    assert code == [
        ("m.py: defines f, C", 0.9, {"functions": ["f", "C"], "action_id": "a1"}),
        ("s.py: a script", 0.6, {"functions": [], "action_id": "a1"}),
    ]
    long = Output(True, "", documentation="d" * 600)
    (doc,) = extract_evidence("write_docs", "a2", {}, long, [], now=2.0, first_index=0)
    assert doc.content == "d" * 500
    sure = Output(False, "failed", metadata={"confidence": 1.0})
    (val,) = extract_evidence("validate", "a3", {}, sure, [], now=2.0, first_index=0)
    assert (val.type, val.confidence) == ("validation", 1.0)
