"""The pattern memory pinned exactly: which field a refusal names, the full refusal messages,
and what a match carries back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from costeer_lab.errors import InvalidInputError, MemoryRefusedError
from costeer_lab.memory import PatternMemory
from costeer_lab.settings import MemorySettings

KEY = "AKIA" + "ABCDEFGHIJKLMNOP"
NEVER = "credentials are never stored in the memory (read them from the environment)"
ROLLING = "def f(s):\n    return s.rolling(5).mean()"


@pytest.fixture
def mem() -> Iterator[PatternMemory]:
    m = PatternMemory(
        ":memory:", embedder="hashing", settings=MemorySettings(verify_patterns=False)
    )
    yield m
    m.close()


@pytest.mark.parametrize(
    ("fields", "label", "line"),
    [
        ({"code": f'k = "{KEY}"'}, "code", 1),
        ({"code": "x = 1", "tests": ["assert 1", f't = "{KEY}"']}, "tests", 2),
        ({"code": "x = 1", "description": f"key {KEY}"}, "description", 1),
        ({"code": "x = 1", "metadata": {"k": KEY}}, "metadata", 1),
    ],
)
def test_a_credential_refusal_names_the_field_and_line(
    mem: PatternMemory, fields: dict[str, Any], label: str, line: int
) -> None:
    with pytest.raises(MemoryRefusedError) as err:
        mem.store_pattern("ma", **fields)
    assert err.value.kind == "credential:AWS access key id"
    assert str(err.value) == (
        f"refusing to store a pattern for 'ma': its {label} contains an AWS access key id on "
        f"line {line}; {NEVER}"
    )


def test_a_security_refusal_lists_every_finding_by_field(mem: PatternMemory) -> None:
    with pytest.raises(MemoryRefusedError) as err:
        mem.store_pattern(
            "ma", "import os\nos.system(c)", tests=["import pickle\npickle.loads(b)"]
        )
    assert err.value.kind == "security:shell-command"
    assert str(err.value) == (
        "refusing to store a pattern for 'ma': the static security check found code: "
        "shell-command on line 2: os.system runs a shell command; test: unsafe-deserialization "
        "on line 2: pickle.loads can run arbitrary code from the data it reads"
    )


def test_bad_arguments_are_named(mem: PatternMemory) -> None:
    with pytest.raises(InvalidInputError, match=r"^code must be a non-empty str, got ''$"):
        mem.store_pattern("ma", "")
    with pytest.raises(InvalidInputError, match=r"^description must be a str"):
        mem.search_patterns(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"^pattern_id must be a non-empty str"):
        mem.record_outcome("", True)


def test_a_match_carries_the_stored_pattern_back(mem: PatternMemory) -> None:
    pid = mem.store_pattern(
        "rolling", ROLLING, tests=["assert True"], description="rolling mean", metadata={"k": 1}
    )
    (hit,) = mem.search_patterns("rolling mean", threshold=0.0)
    assert (hit.id, hit.problem_type, hit.code, hit.tests) == (
        pid,
        "rolling",
        ROLLING,
        ("assert True",),
    )
    assert (hit.metadata, hit.verified, hit.usage_count, hit.successes) == ({"k": 1}, False, 1, 0)
    (again,) = mem.search_patterns("rolling mean", threshold=0.0)
    assert again.usage_count == 2


def test_without_a_description_the_problem_type_is_what_is_matched(mem: PatternMemory) -> None:
    mem.store_pattern("rolling window mean", ROLLING, description="   ")
    (hit,) = mem.search_patterns("rolling window mean", threshold=0.0)
    assert hit.similarity > 0.999
