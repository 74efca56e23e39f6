"""Code extraction from chat replies: the usual shapes, odd shapes and a property test."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costeer_lab.coders._extract import extract_code

PROG = "import pandas as pd\n\ndf = pd.read_parquet('x.parquet')\nprint(df.shape)\n"


def test_python_fence() -> None:
    out = extract_code(f"Here is the code:\n```python\n{PROG}```\nIt prints the shape.")
    assert out.code == PROG
    assert out.method == "fenced_python"
    assert out.parses and out.ok and out.n_blocks == 1


def test_untagged_fence() -> None:
    out = extract_code(f"```\n{PROG}```")
    assert out.code == PROG
    assert out.method == "fenced"


def test_py_tag_and_tilde_fence() -> None:
    assert extract_code(f"~~~py\n{PROG}~~~").code == PROG


def test_python_tag_beats_untagged_block() -> None:
    other = "x = 1\ny = 2\nz = 3\nw = 4 + x + y + z + 99999\n"
    reply = f"```python\n{PROG}```\nOutput:\n```\n{other}```"
    out = extract_code(reply)
    assert out.code == PROG


def test_last_full_version_wins_over_draft() -> None:
    draft = PROG.replace("print(df.shape)", "print(df.head())")
    final = PROG.replace("print(df.shape)", "print(df.tail())")
    out = extract_code(f"Draft:\n```python\n{draft}```\nFixed:\n```python\n{final}```")
    assert out.code == final
    assert out.n_blocks == 2


def test_short_trailing_usage_snippet_does_not_win() -> None:
    out = extract_code(f"```python\n{PROG}```\nRun it with:\n```python\nmain()\n```")
    assert out.code == PROG


def test_other_language_blocks_are_ignored() -> None:
    reply = f"```bash\npip install pandas\n```\n```python\n{PROG}```\n```json\n{{}}\n```"
    assert extract_code(reply).code == PROG


def test_truncated_reply_without_closing_fence() -> None:
    out = extract_code(f"```python\n{PROG}")
    assert out.code == PROG
    assert out.parses


def test_complete_block_preferred_over_truncated_one() -> None:
    longer = PROG + "x = 1\n" * 3
    out = extract_code(f"```python\n{PROG}```\nand again:\n```python\n{longer}")
    assert out.code == PROG


def test_indented_fence_is_dedented() -> None:
    body = "".join(f"    {line}\n" for line in PROG.splitlines())
    out = extract_code(f"1. Do this:\n    ```python\n{body}    ```\n")
    assert out.code == PROG


def test_no_fence_but_reply_is_python() -> None:
    out = extract_code(PROG)
    assert out.code == PROG
    assert out.method == "raw"


@pytest.mark.parametrize("reply", ["I cannot help with that.", "Sorry", "", "   \n", None])
def test_prose_is_a_clear_failure(reply: str | None) -> None:
    out = extract_code(reply)
    assert out.code is None
    assert out.method == "none"
    assert not out.ok
    assert out.reason


def test_only_non_python_blocks_is_a_failure_naming_them() -> None:
    out = extract_code("```bash\nls\n```")
    assert out.code is None
    assert "bash" in out.reason


def test_unparseable_block_is_kept_for_the_evaluator() -> None:
    out = extract_code("```python\ndef f(:\n    return 1\n```")
    assert out.code == "def f(:\n    return 1\n"
    assert out.method == "fenced_unparsed"
    assert not out.parses
    assert "SyntaxError" in out.reason


_PROSE = st.text(
    alphabet=st.characters(exclude_characters="`~", exclude_categories=["Cs"]), max_size=200
)
_STATEMENTS = st.lists(
    st.sampled_from(
        [
            "x = 1",
            "import math",
            "def f(a, b=2):\n    return a + b",
            "for i in range(3):\n    print(i)",
            "class A:\n    pass",
            "y = [k * 2 for k in range(10)]",
            's = "text with ``` inside a string is not used here"'.replace("```", "'''"),
        ]
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(before=_PROSE, after=_PROSE, stmts=_STATEMENTS, tag=st.sampled_from(["python", "py", ""]))
def test_property_fenced_parseable_block_is_found(
    before: str, after: str, stmts: list[str], tag: str
) -> None:
    code = "\n".join(stmts) + "\n"
    reply = f"{before}\n```{tag}\n{code}```\n{after}"
    out = extract_code(reply)
    assert out.code is not None
    ast.parse(out.code)
    assert out.parses


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400))
def test_property_never_raises(text: str) -> None:
    out = extract_code(text)
    assert out.code is None or isinstance(out.code, str)
    if out.parses:
        assert out.code is not None
        ast.parse(out.code)
