"""The failure memory, the memory arm and the memory's shared parts pinned exactly: tests
written for the mutants that survived ``make mutation``."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from costeer_lab.errors import InvalidInputError, MemoryRefusedError, NotFoundError
from costeer_lab.memory import FailureMemory, open_memory
from costeer_lab.memory._base import SEARCH_KIND, check_text, refuse_credentials
from costeer_lab.memory._failure import failure_signature
from costeer_lab.memory._strategy import LoopMemory, memory_arm, task_pattern
from costeer_lab.memory._template import make_template
from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace
from costeer_lab.store import get_store

OK_FB = SingleFeedback("ok", final_decision=True)


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
    (same,) = fm.search_similar_failures("KeyError: 'open'", threshold=0.99)  # no type given
    assert same.id == fid


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


def test_a_task_pattern_is_exact() -> None:
    task = Task("s/1", "add", "", formulation="a + b")
    ws = Workspace({"main.py": "def add(a, b):\n    return a + b\n"})
    assert task_pattern(task, ws) == {
        "problem_type": "task",
        "code": ws.code,
        "description": "add\na + b",
        "metadata": {"task": task.to_dict(), "workspace": ws.to_dict()},
    }


def test_a_pattern_stored_without_its_task_is_handed_over_as_a_plain_knowledge() -> None:
    kb, rag = memory_arm(get_store(":memory:"), embedder="hashing", threshold=0.0, limit=1)
    code = "def rev(s):\n    return s[::-1]\n"
    pid = kb.memory.patterns.store_pattern("strings", code, description="reverse a string")
    task = Task("s/rev", "reverse", "reverse a string", category="strings")
    (sk,) = rag.query(kb, [task], {}, run_id="r", attempt=0).similar_successful[task.id]
    k = sk.knowledge
    assert (k.id, k.task.id, k.task.name, k.task.description, k.task.category) == (
        pid, pid, "strings", "reverse a string", "strings"
    )  # fmt: skip
    assert k.implementation.files == {"main.py": code}
    assert (k.feedback.execution, k.feedback.final_decision) == ("pattern memory", True)
    kb.memory.close()


def test_fixes_come_from_other_tasks_once_each_and_only_after_a_failure() -> None:
    kb, rag = memory_arm(get_store(":memory:"), embedder="hashing", threshold=0.99)
    fps = ("KeyError: <str>", "ValueError: bad")
    mine = kb.memory.failures.store_failure("", fps[0], "df['a']", task_id="t/1", iteration=1)
    other = kb.memory.failures.store_failure("", fps[0], "df['b']", iteration=2)
    assert mine is not None and other is not None
    for fid in (mine, other):
        kb.memory.failures.update_solution(fid, "df['$b']")
    task = Task("t/1", "t", "d")
    failed = SingleFeedback("KeyError", final_decision=False, error_fingerprints=(*fps, fps[0]))
    ok = SingleFeedback("ok", final_decision=True, error_fingerprints=fps)
    for last in (None, ok, SingleFeedback("x", final_decision=False)):
        assert rag.query(kb, [task], {task.id: last}, run_id="r", attempt=1).error_fixes == {}
    (fix,) = rag.query(kb, [task], {task.id: failed}, run_id="r", attempt=1).error_fixes[task.id]
    assert (fix.fingerprint, fix.error_text) == (fps[0], fps[0])
    assert fix.score == pytest.approx(1.0)
    assert fix.failed.task == fix.fixed.task == Task(other, "failure", fps[0])
    assert fix.failed.id == fix.fixed.id == other
    assert fix.failed.implementation.files == {"main.py": "df['b']"}
    assert fix.fixed.implementation.files == {"main.py": "df['$b']"}
    assert (fix.failed.feedback.execution, fix.failed.feedback.final_decision) == (fps[0], False)
    assert (fix.fixed.feedback.execution, fix.fixed.feedback.final_decision) == ("solved", True)
    kb.memory.close()


def test_learning_from_a_step_stores_failures_with_the_attempt_and_skips_empty_code() -> None:
    kb, rag = memory_arm(get_store(":memory:"), embedder="hashing")
    task = Task("t/1", "t", "d")
    rag.query(kb, [], {}, run_id="r", attempt=4)
    failed = SingleFeedback("e", final_decision=False, error_fingerprints=("ValueError: a",) * 2)
    rag.generate_knowledge(kb, [(task, Workspace({"main.py": "x"}), failed)], run_id="r")
    (fid,) = kb.memory.failures.open_failures(task.id)
    rec = kb.memory.failures.get_failure(fid)
    assert (rec["iteration"], rec["code_context"], rec["error_message"]) == (
        4,
        "x",
        "ValueError: a",
    )
    rag.generate_knowledge(kb, [(task, Workspace({"main.py": "  "}), OK_FB)], run_id="other")
    assert len(kb.memory.patterns) == 0 and kb.memory.failures.open_failures(task.id) == [fid]
    # an unparsable success is no pattern, but still solves the task's failures
    rag.generate_knowledge(kb, [(task, Workspace({"main.py": "def f(:"}), OK_FB)], run_id="r")
    assert len(kb.memory.patterns) == 0 and kb.memory.failures.open_failures(task.id) == []
    assert rag.limit is None and rag.failure_threshold is None and rag.threshold is None
    kb.memory.close()


def test_a_flagged_seed_is_skipped_and_the_others_stored(caplog: pytest.LogCaptureFixture) -> None:
    kb = LoopMemory(open_memory(":memory:", embedder="hashing"))
    bad = Knowledge(Task("h/160", "e", "eval it"), Workspace({"main.py": "eval(input())"}), OK_FB)
    good = Knowledge(
        Task("h/1", "a", "add"), Workspace({"main.py": "def a(x):\n    return x\n"}), OK_FB
    )
    with caplog.at_level(logging.INFO, logger="costeer_lab.memory._strategy"):
        ids = kb.add_seed_knowledge([bad, good])
    assert len(ids) == 1 and len(kb.memory.patterns) == 1
    (msg,) = [r.getMessage() for r in caplog.records if "seed" in r.getMessage()]
    assert msg.startswith("pattern memory: seed 'h/160' not stored: ") and "eval" in msg
    kb.close()
    kb.memory.close()


def test_text_checks_name_the_argument() -> None:
    assert check_text("", "x") == "" and check_text(" a ", "x", empty=False) == " a "
    with pytest.raises(InvalidInputError, match=r"^task_id must be a str, got int 3$"):
        check_text(3, "task_id")
    with pytest.raises(InvalidInputError, match=r"^s must be a str, got bytes b'a{58}$"):
        check_text(b"a" * 80, "s")
    with pytest.raises(InvalidInputError, match=r"^solution must be a non-empty str, got ' \\n'$"):
        check_text(" \n", "solution", empty=False)


def test_a_credential_refusal_counts_the_other_findings() -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    refuse_credentials([("code", "x = 1")], "a thing")
    with pytest.raises(
        MemoryRefusedError, match=r"^refusing to store a thing: its b contains "
    ) as info:
        refuse_credentials(
            [("a", "ok"), ("b", f"k = '{key}'\nj = '{key}'"), ("c", key)], "a thing"
        )
    assert "(and 1 more finding(s)); credentials are never stored" in str(info.value)
    assert key not in str(info.value) and info.value.kind.startswith("credential:")
    with pytest.raises(MemoryRefusedError) as info:
        refuse_credentials([("b", f"k = '{key}'")], "a thing")
    assert "more finding" not in str(info.value)


def test_search_thresholds_and_limits_are_checked_at_their_bounds(fm: FailureMemory) -> None:
    for ok in (-1, 1, 1.0, -1.0):
        assert fm.search_similar_failures("KeyError: 'x'", threshold=ok) == []
    for bad in (1.0001, -1.5):
        with pytest.raises(
            InvalidInputError, match=rf"^threshold must be in \[-1, 1\] \(cosine\), got {bad}$"
        ):
            fm.search_similar_failures("e", threshold=bad)
    for wrong in (True, "0.5"):
        with pytest.raises(
            InvalidInputError, match=r"^threshold must be a number in \[-1, 1\], got "
        ):
            fm.search_similar_failures("e", threshold=wrong)  # type: ignore[arg-type]
    assert fm.search_similar_failures("e", limit=1) == []
    for bad in (0, True, 1.0):
        with pytest.raises(InvalidInputError, match=rf"^limit must be an int >= 1, got {bad!r}$"):
            fm.search_similar_failures("e", limit=bad)  # type: ignore[arg-type]


def test_a_search_is_logged_exactly(fm: FailureMemory) -> None:
    fid = fm.store_failure("KeyError", "'a'")
    assert fid is not None
    fm.update_solution(fid, "fix")
    fm.search_similar_failures("KeyError: 'b'", threshold=0.5)
    fm.search_similar_failures("ZeroDivisionError: x", threshold=0.99)
    fm.search_similar_failures("KeyError: 'b'", record=False)
    logs = [rec for _, rec in fm.store.iter_records(SEARCH_KIND)]
    for rec in logs:
        assert isinstance(rec.pop("t"), float)
    assert logs == [
        {
            "memory": "failure",
            "hits": 1,
            "best": pytest.approx(1.0),
            "threshold": 0.5,
            "ids": [fid],
        },
        {"memory": "failure", "hits": 0, "best": None, "threshold": 0.99, "ids": []},
    ]


def test_each_failure_argument_is_checked_by_name(fm: FailureMemory) -> None:
    calls: dict[str, tuple[Any, ...]] = {
        "error_type": (3, "m"),
        "error_message": ("KeyError", 3),
        "code_context": ("KeyError", "m", 3),
        "task_id": ("KeyError", "m", "", 3),
    }
    for name, args in calls.items():
        with pytest.raises(InvalidInputError, match=f"^{name} must be a str, got int 3$"):
            fm.store_failure(*args)
    with pytest.raises(InvalidInputError, match=r"^failure_id must be a non-empty str, got ' '$"):
        fm.get_failure(" ")
    with pytest.raises(InvalidInputError, match=r"^solution must be a non-empty str, got ' '$"):
        fm.update_solution("failure:x", " ")
    with pytest.raises(InvalidInputError, match=r"^task_id must be a str, got int 3$"):
        fm.open_failures(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"^error_message must be a str, got int 3$"):
        fm.search_similar_failures(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"^error_type must be a str, got int 3$"):
        fm.search_similar_failures("m", error_type=3)  # type: ignore[arg-type]


def test_failure_defaults_and_a_credential_in_a_solution(fm: FailureMemory) -> None:
    assert failure_signature("", "oops") == "oops"  # no ": " in front of a bare message
    fid = fm.store_failure("ValueError", "bad value")
    assert fid is not None
    rec = fm.get_failure(fid)
    assert (rec["code_context"], rec["task_id"], rec["iteration"]) == ("", "", 0)
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    with pytest.raises(MemoryRefusedError, match=f"^refusing to store a solution of '{fid}': "):
        fm.update_solution(fid, f"k = '{key}'")
    assert fm.get_failure(fid)["solved"] is False


def test_without_a_store_the_memory_opens_the_memory_settings_store(tmp_path: Any) -> None:
    from costeer_lab.settings import MemorySettings

    url = f"sqlite:///{tmp_path / 'memory.db'}"
    fm = FailureMemory(embedder="hashing", settings=MemorySettings(store_url=url))
    assert fm.owns_store
    fid = fm.store_failure("KeyError", "'a'")
    fm.close()
    other = get_store(url)
    assert [key for key, _ in other.iter_records("memory.failure")] != [] and fid is not None
    other.close()


def test_the_memory_embedder_comes_from_the_memory_settings_then_the_top_level(
    settings_env: Any,
) -> None:
    from costeer_lab.embed import _registry, get_embedder, register_embedder
    from costeer_lab.settings import MemorySettings

    register_embedder("hashing-64", lambda **kw: get_embedder("hashing", dim=64))
    try:
        settings_env(EMBEDDER="hashing-64")
        top = FailureMemory(":memory:")
        assert top.embedder.id == "hashing@1:64"
        own = FailureMemory(":memory:", settings=MemorySettings(embedder="hashing"))
        assert own.embedder.id == "hashing@1:384"
    finally:
        del _registry._factories["hashing-64"]


def test_a_bad_embedder_is_named_and_a_cached_embedder_is_used_as_it_is() -> None:
    from costeer_lab.embed import CachedEmbedder, get_embedder

    with pytest.raises(
        InvalidInputError, match=r"^embedder must be a BaseEmbedder or an id, got 3$"
    ):
        FailureMemory(":memory:", embedder=3)  # type: ignore[arg-type]
    store = get_store(":memory:")
    cached = CachedEmbedder(get_embedder("hashing"), store)
    fm = FailureMemory(store, embedder=cached)
    assert fm.cached_embedder is cached  # not wrapped in a second cache
    fm.search_similar_failures("KeyError: 'a'")
    fm.search_similar_failures("KeyError: 'a'")
    assert (cached.calls, cached.misses) == (2, 1)
    store.close()


def test_a_memory_refuses_a_store_whose_vectors_come_from_another_embedder() -> None:
    from costeer_lab.embed import get_embedder
    from costeer_lab.errors import EmbedderMismatchError

    store = get_store(":memory:")
    fm = FailureMemory(store, embedder="hashing")
    fid = fm.store_failure("KeyError", "'a'")
    assert fid is not None
    fm.update_solution(fid, "fix")  # a solved failure gets a vector
    with pytest.raises(EmbedderMismatchError, match=r"'hashing@1:384' .* 'hashing@1:64'"):
        FailureMemory(store, embedder=get_embedder("hashing", dim=64))
    store.close()


def test_a_step_learned_without_a_query_is_attempt_0_and_an_empty_success_skips_one_task() -> None:
    kb, rag = memory_arm(get_store(":memory:"), embedder="hashing")
    empty, failing = Task("t/1", "t", "d"), Task("t/2", "u", "e")
    failed = SingleFeedback("e", final_decision=False, error_fingerprints=("ValueError: a",))
    trace = [
        (empty, Workspace({"main.py": " "}), OK_FB),
        (failing, Workspace({"x.py": "y"}), failed),
    ]
    rag.generate_knowledge(kb, trace, run_id="never queried")
    (fid,) = kb.memory.failures.open_failures(failing.id)  # learned after the empty success
    rec = kb.memory.failures.get_failure(fid)
    assert (rec["iteration"], rec["error_type"]) == (0, "")
    kb.memory.close()


def test_a_refused_write_never_stops_learning_from_the_other_tasks() -> None:
    kb, rag = memory_arm(get_store(":memory:"), embedder="hashing")
    secret = "key = 'AKIA" + "ABCDEFGHIJKLMNOP'\n"
    a, b, c = Task("t/a", "a", "d"), Task("t/b", "b", "e"), Task("t/c", "c", "f")
    fp = ("ValueError: a",)
    fail = SingleFeedback("e", final_decision=False, error_fingerprints=fp)
    open_a = kb.memory.failures.store_failure("", fp[0], "x = 1", task_id=a.id)
    rag.generate_knowledge(
        kb,
        [
            (a, Workspace({"main.py": secret}), OK_FB),  # no pattern, no solution: refused
            (b, Workspace({"main.py": secret}), fail),  # no failure: refused
            (c, Workspace({"main.py": "y = 2\n"}), fail),
        ],
        run_id="r",
    )
    assert kb.memory.failures.open_failures(a.id) == [open_a] and len(kb.memory.patterns) == 0
    assert kb.memory.failures.open_failures(b.id) == []
    assert len(kb.memory.failures.open_failures(c.id)) == 1
    ok = [(a, Workspace({"main.py": "z = 3\n"}), OK_FB), (b, Workspace({"x.py": "w"}), fail)]
    rag.generate_knowledge(kb, ok, run_id="r")
    assert kb.memory.failures.open_failures(a.id) == [] and len(kb.memory.patterns) == 1
    assert len(kb.memory.failures.open_failures(b.id)) == 1  # learned after a success
    kb.memory.close()


def test_an_error_fix_carries_the_similarity_of_its_match() -> None:
    kb, rag = memory_arm(get_store(":memory:"), embedder="hashing", failure_threshold=0.1)
    fid = kb.memory.failures.store_failure("", "KeyError: 'close' in frame", "df['close']")
    assert fid is not None
    kb.memory.failures.update_solution(fid, "df['$close']")
    task = Task("t/9", "t", "d")
    fp = "KeyError: 'open' missing"
    failed = SingleFeedback("e", final_decision=False, error_fingerprints=(fp,))
    (fix,) = rag.query(kb, [task], {task.id: failed}, run_id="r", attempt=1).error_fixes[task.id]
    (match,) = kb.memory.failures.search_similar_failures(fp, 0.1, record=False)
    assert fix.score == pytest.approx(match.similarity) and 0.1 < fix.score < 0.99
    kb.memory.close()


def test_the_memory_arm_passes_its_thresholds_limit_and_embedder_through() -> None:
    kb, _ = memory_arm(get_store(":memory:"), embedder="minilm")
    assert kb.memory.patterns.embedder.id.startswith("minilm@")  # the model loads on first use
    kb.memory.close()
    kb, rag = memory_arm(
        get_store(":memory:"), embedder="hashing", threshold=-1.0, failure_threshold=-1.0, limit=2
    )
    task = Task("t/1", "sum columns", "add up every column", category="frames")
    kb.memory.patterns.store_patterns([task_pattern(task, Workspace({"main.py": "x = 1\n"}))])
    other = Task("t/2", "zzz", "qqq", category="yyy")
    kb.memory.patterns.store_patterns(
        [
            {
                "problem_type": "a",
                "code": "y = 2\n",
                "description": "b",
                "metadata": {"task": other.to_dict()},  # no workspace: a plain knowledge
            }
        ]
    )
    for i, msg in enumerate(("KeyError: 'close'", "ValueError: bad shape", "OSError: disk")):
        fid = kb.memory.failures.store_failure("", msg, f"c{i}")
        assert fid is not None
        kb.memory.failures.update_solution(fid, f"s{i}")
    failed = SingleFeedback("e", final_decision=False, error_fingerprints=("NameError: q",))
    got = rag.query(kb, [task], {task.id: failed}, run_id="r", attempt=1)
    (same, plain) = got.similar_successful[task.id]  # threshold -1: every pattern, 2 at most
    assert same.score == pytest.approx(1.0)  # the query embeds what the store embedded
    assert plain.knowledge.task.id == plain.knowledge.id and plain.score < 0.5
    assert len(got.error_fixes[task.id]) == 2  # limit 2, failure threshold -1
    kb.memory.close()


def test_a_task_without_text_is_searched_by_its_problem_type() -> None:
    kb, rag = memory_arm(get_store(":memory:"), embedder="hashing", threshold=0.99)
    bare = Task("t/3", "", "", category="rolling frames")
    kb.memory.patterns.store_patterns([task_pattern(bare, Workspace({"main.py": "x = 1\n"}))])
    got = rag.query(kb, [bare], {}, run_id="r", attempt=0).similar_successful[bare.id]
    assert [round(k.score, 4) for k in got] == [1.0]
    kb.memory.close()


def test_runnable_tests_and_the_reasons_of_the_write_gate_are_exact() -> None:
    from costeer_lab.memory._verify import Verification, _last_line, runnable_tests, verify_pattern

    tests = ["def f(:", "assert f(1) == 2", "def test_a():\n    f(1)", "def helper():\n    f(1)"]
    assert runnable_tests(tests) == ["assert f(1) == 2", "def test_a():\n    f(1)"]
    assert runnable_tests(["returns a Series", "\x00"]) == []
    assert _last_line("") == "" and _last_line("a\n\n  b  \n\n") == "b"
    assert _last_line("x" * 400) == "x" * 300
    assert verify_pattern("x = 1", ["returns one"]) == Verification(
        "unverified", "no runnable tests (none holds an assert or test_*)"
    )
