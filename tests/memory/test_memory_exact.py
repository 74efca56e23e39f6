"""The failure memory, the memory arm and the memory's shared parts pinned exactly: tests
written for the mutants that survived ``make mutation``."""

from __future__ import annotations

import pytest

from costeer_lab.errors import InvalidInputError, MemoryRefusedError, NotFoundError
from costeer_lab.memory import FailureMemory
from costeer_lab.memory._failure import failure_signature
from costeer_lab.memory._template import make_template


def test_a_failure_signature_without_a_type_is_the_message_fingerprint() -> None:
    assert failure_signature("", "KeyError: 'close'") == "KeyError: <str>"
    assert failure_signature("KeyError", "'close'") == "KeyError: <str>"


@pytest.fixture
def fm() -> FailureMemory:
    return FailureMemory(":memory:", embedder="hashing")


def test_a_stored_failure_record_is_exact(fm: FailureMemory) -> None:
    msg, code = "'c" + "x" * 5000 + "'", "y" * 30000
    fid = fm.store_failure("KeyError", msg, code, task_id="t1", iteration=0)
    assert fid is not None and fid.startswith("failure:") and len(fid) == len("failure:") + 32
    rec = fm.get_failure(fid)
    assert isinstance(rec.pop("t"), float)
    assert rec == {
        "error_type": "KeyError",
        "error_message": msg[:4000],
        "fingerprint": failure_signature("KeyError", msg),
        "code_context": code[:20000],
        "task_id": "t1",
        "iteration": 0,
        "solved": False,
        "solution": None,
        "solved_at": None,
    }
    fm.update_solution(fid, "z" * 25000)
    rec = fm.get_failure(fid)
    assert rec["solved"] is True and rec["solution"] == "z" * 20000
    assert isinstance(rec["solved_at"], float) and rec["solved_at"] >= rec["t"]


def test_failure_arguments_are_checked(fm: FailureMemory) -> None:
    for bad in (True, 1.0, -1):
        with pytest.raises(InvalidInputError, match=f"iteration must be an int >= 0, got {bad!r}"):
            fm.store_failure("KeyError", "'x'", iteration=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="needs an error_type or an error_message"):
        fm.store_failure("  ", " \n")
    assert fm.store_failure("", "KeyError: 'x'") is not None  # a message alone will do
    assert fm.store_failure("KeyError", "") is not None  # so will a type alone
    with pytest.raises(NotFoundError, match=r"^no failure 'failure:nope' in the memory at "):
        fm.get_failure("failure:nope")
    with pytest.raises(NotFoundError, match="no failure 'failure:nope'"):
        fm.update_solution("failure:nope", "fix")
    assert len(fm) == 2


def test_open_failures_are_the_unsolved_of_the_task_oldest_first(fm: FailureMemory) -> None:
    a = fm.store_failure("KeyError", "'a'", task_id="t")
    b = fm.store_failure("ValueError", "bad", task_id="t")
    c = fm.store_failure("KeyError", "'a'", task_id="u")
    assert fm.open_failures("t") == [a, b] and fm.open_failures("u") == [c]
    assert b is not None
    fm.update_solution(b, "fixed")
    assert fm.open_failures("t") == [a]


def test_a_match_carries_the_stored_failure(fm: FailureMemory) -> None:
    fid = fm.store_failure("KeyError", "'close'", "df['close']", task_id="t1", iteration=3)
    assert fid is not None
    fm.update_solution(fid, "df['$close']")
    (hit,) = fm.search_similar_failures("'open'", error_type="KeyError", threshold=0.99, limit=1)
    assert (hit.id, hit.error_type, hit.error_message, hit.fingerprint) == (
        fid, "KeyError", "'close'", "KeyError: <str>"
    )  # fmt: skip
    assert (hit.code_context, hit.solution, hit.task_id, hit.iteration) == (
        "df['close']", "df['$close']", "t1", 3
    )  # fmt: skip
    assert hit.similarity == pytest.approx(1.0, abs=1e-5)
    assert fm.search_similar_failures("'open'", threshold=0.99) == []  # the type is part of it


def test_a_template_abstracts_every_kind_of_literal_and_strips_every_docstring() -> None:
    code = (
        '"""Module."""\n'
        "class A:\n"
        '    """Doc."""\n'
        "async def f(x=3.5, y=2, z=None, w=True, e=..., b=b'x', c=1j, d=0, o=1):\n"
        '    """Doc."""\n'
        "    return f'{x}' + 'a' + str(2.0) + str(False)\n"
        "def g():\n"
        '    """Only doc."""\n'
        "def h():\n"
        "    x = 1\n"
        "    'not a docstring'\n"
    )
    assert make_template(code) == (
        "class A:\n    pass\n\n"
        "async def f(x=<num>, y=2, z=None, w=True, e=..., b='<str>', c=<num>, d=0, o=1):\n"
        "    return '<str>' + '<str>' + str(2.0) + str(False)\n\n"
        "def g():\n    pass\n\n"
        "def h():\n    x = 1\n    '<str>'"
    )


def test_a_template_refuses_what_is_not_python_code() -> None:
    with pytest.raises(MemoryRefusedError, match=r"^code must be a str, got bytes$") as info:
        make_template(b"x = 1")  # type: ignore[arg-type]
    assert info.value.kind == "invalid"
    with pytest.raises(
        MemoryRefusedError,
        match=r"^code does not parse as Python \(line 1: .*\); only working code is stored as a "
        "pattern$",
    ) as info:
        make_template("def f(:\n")
    assert info.value.kind == "syntax"
