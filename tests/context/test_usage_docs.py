"""Code documentation with usage examples (from docstrings) and test coverage (a static scan of
the test files for each function's name), stored with the file and shown in the README."""

from __future__ import annotations

from pathlib import Path

from costeer_lab.context import (
    FunctionDoc,
    Output,
    RichMemoryManager,
    docstring_examples,
    document_python,
    document_task,
    read_tests,
    with_test_coverage,
)

CALC = '''"""A calculator."""


def add(a, b):
    """Adds two numbers.

    Example:
        >>> add(1, 2)
        3

        >>> add(-1, 1)
        0
    """
    return a + b


def scale(x, k=2):
    """Scales ``x``.

    Examples:
        result = scale(3)
        assert result == 6
    """
    return x * k


def unused(x):
    return x


class Stack:
    """A stack.

    Example:
        >>> s = Stack()
        >>> s.push(1)
    """

    def push(self, item):
        """Push."""
        self.items = [item]

    def pop(self):
        return self.items.pop()
'''

TEST_CALC = """from calc import Stack, add


def test_add():
    assert add(1, 2) == 3


class TestStack:
    def test_push(self):
        s = Stack()
        s.push(1)

    def helper(self):
        return unused(1)
"""

OTHER_TEST = """import calc


def test_scale_via_module():
    assert calc.scale(2) == 4


def test_broken(:
"""


def test_examples_come_from_doctest_blocks_or_the_example_section() -> None:
    ref = document_python(CALC, "calc.py")
    add, scale, unused = ref.functions
    assert add.examples == (">>> add(1, 2)\n3", ">>> add(-1, 1)\n0")
    assert scale.examples == ("result = scale(3)\nassert result == 6",)
    assert unused.examples == ()
    (stack,) = ref.classes
    assert stack.examples == (">>> s = Stack()\n>>> s.push(1)",)
    assert docstring_examples(None) == () and docstring_examples("No example here.") == ()
    assert FunctionDoc.from_dict(add.to_dict()) == add
    assert FunctionDoc.from_dict({"name": "old"}).examples == ()  # stored before the field


def test_coverage_names_the_tests_that_reference_each_function(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    (tests / "unit").mkdir(parents=True)
    (tests / "test_calc.py").write_text(TEST_CALC, encoding="utf-8")
    (tests / "unit" / "test_other.py").write_text(OTHER_TEST, encoding="utf-8")  # a syntax error
    (tests / "conftest.py").write_text("def test_not_a_test_file():\n    add(1, 1)\n", "utf-8")
    assert sorted(read_tests(tests)) == ["test_calc.py", "unit/test_other.py"]
    ref = with_test_coverage(document_python(CALC, "calc.py"), tests)
    add, scale, unused = ref.functions
    assert add.tested_by == ("test_calc.py::test_add",)
    assert scale.tested_by == ()  # its test file does not parse
    assert unused.tested_by == ()  # only a helper, not a test, calls it
    (stack,) = ref.classes
    assert stack.tested_by == ("test_calc.py::TestStack::test_push",)
    assert [(m.name, m.tested_by) for m in stack.methods] == [
        ("push", ("test_calc.py::TestStack::test_push",)), ("pop", ())
    ]  # fmt: skip
    fixed = {"test_other.py": OTHER_TEST.replace("def test_broken(:\n", "")}
    (_, scale, _) = with_test_coverage(document_python(CALC, "calc.py"), fixed).functions
    assert scale.tested_by == ("test_other.py::test_scale_via_module",)


def test_stored_file_docs_keep_examples_and_the_readme_shows_them(
    mm: RichMemoryManager,
) -> None:
    mm.create_task("Implement a calculator in Python", task_id="t")
    files = {"calc.py": CALC, "test_calc.py": TEST_CALC}
    ctx = mm.add_action("t", "write_file", {}, Output(True, files=files))
    (match,) = mm.find_functions("add", task_id="t")
    assert match.doc.examples[0] == ">>> add(1, 2)\n3"
    readme = document_task(ctx)
    assert "  example:\n\n  ```python\n  >>> add(1, 2)\n  3\n  ```" in readme
    assert "  tested by: test_calc.py::test_add" in readme
    assert (
        "- `unused(x)` (`unused`, lines 27-28, cyclomatic complexity 1)\n  tested by: none"
        in readme
    )
