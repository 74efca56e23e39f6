"""FailureMemory: fingerprints, the skip rule, solutions, thresholds."""

from __future__ import annotations

import logging

import pytest

from costeer_lab._fingerprint import error_fingerprint
from costeer_lab.embed import get_embedder
from costeer_lab.errors import InvalidInputError, NotFoundError
from costeer_lab.memory import FailureMemory, open_memory, skip_reason
from costeer_lab.memory._failure import failure_signature

TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/tmp/ws/main.py", line 3, in <module>\n'
    "    x = df['close']\n"
    "KeyError: 'close'\n"
)


def test_signature_is_the_knowledge_base_fingerprint() -> None:
    assert failure_signature("KeyError", "'close'") == error_fingerprint("KeyError: 'close'")
    assert failure_signature("", TRACE) == error_fingerprint(TRACE) == "KeyError: <str>"
    assert failure_signature("KeyError", "'open'") == failure_signature("KeyError", "'volume'")


@pytest.mark.parametrize(
    ("etype", "message", "reason"),
    [
        ("SyntaxError", "invalid syntax", "syntax typo"),
        ("IndentationError", "unexpected indent", "syntax typo"),
        ("KeyboardInterrupt", "", "interrupted run: KeyboardInterrupt"),
        (
            "openai.APITimeoutError",
            "Request timed out.",
            "infrastructure error: openai.APITimeoutError",
        ),
        ("RateLimitError", "429", "infrastructure error: RateLimitError"),
    ],
)
def test_the_fingerprint_skip_rule_decides(
    etype: str, message: str, reason: str, sqlite_url: str
) -> None:
    """The memory applies the error fingerprints' rule and keeps its reason."""
    assert skip_reason(message, etype) == reason
    fm = FailureMemory(sqlite_url, embedder="hashing")
    assert fm.store_failure(etype, message, "code", "t", 1) is None
    assert fm.last_skip_reason == reason and len(fm) == 0
    assert fm.store_failure("KeyError", "'close'", "code", "t", 1) is not None
    assert fm.last_skip_reason is None
    fm.close()


@pytest.mark.parametrize(
    ("etype", "message"),
    [
        ("KeyError", "'close'"),
        ("NameError", "name 'pd' is not defined"),
        ("", "ValueError: cannot reindex on an axis with duplicate labels"),
        ("AttributeError", "'DataFrame' object has no attribute 'rolling_mean'"),
    ],
)
def test_real_mistakes_are_kept(etype: str, message: str) -> None:
    assert skip_reason(message, etype or None) is None


def test_skipped_failures_are_not_stored(sqlite_url: str) -> None:
    fm = FailureMemory(sqlite_url, embedder="hashing")
    assert fm.store_failure("SyntaxError", "invalid syntax", "def f(:", "t", 1) is None
    assert fm.store_failure("KeyboardInterrupt", "", "", "t", 1) is None
    assert len(fm) == 0
    fm.close()


def test_only_solved_failures_are_found(store_url: str) -> None:
    with open_memory(store_url, embedder="hashing") as memory:
        fm = memory.failures
        a = fm.store_failure("KeyError", "'close'", "df['close']", task_id="t1", iteration=1)
        b = fm.store_failure("ZeroDivisionError", "division by zero", "1 / n", task_id="t2")
        assert a is not None and b is not None
        assert fm.open_failures("t1") == [a]
        assert fm.search_similar_failures(TRACE) == []
        fm.update_solution(a, "df['$close']")
        (hit,) = fm.search_similar_failures(TRACE.replace("close", "volume"))
        assert (hit.id, hit.solution, hit.task_id, hit.iteration) == (a, "df['$close']", "t1", 1)
        assert hit.similarity == pytest.approx(1.0, abs=1e-5)  # same fingerprint
        assert hit.fingerprint == "KeyError: <str>" and fm.open_failures("t1") == []
        assert fm.search_similar_failures("ZeroDivisionError: division by zero") == []


def test_failure_threshold_is_a_cosine_floor(sqlite_url: str) -> None:
    fm = FailureMemory(sqlite_url, embedder="hashing")
    fid = fm.store_failure("ValueError", "could not convert string to float: 'abc'")
    assert fid is not None
    fm.update_solution(fid, "float(x.strip() or 'nan')")
    query = "TypeError: could not convert string to float"
    emb = get_embedder("hashing")
    vecs = emb.embed([failure_signature("", query), fm.get_failure(fid)["fingerprint"]])
    cos = float(vecs[0] @ vecs[1])
    assert 0.0 < cos < 1.0
    assert [m.id for m in fm.search_similar_failures(query, threshold=cos - 1e-4)] == [fid]
    assert fm.search_similar_failures(query, threshold=cos + 1e-3) == []
    fm.close()


def test_failure_errors(sqlite_url: str) -> None:
    fm = FailureMemory(sqlite_url, embedder="hashing")
    with pytest.raises(NotFoundError, match="no failure 'failure:x'"):
        fm.update_solution("failure:x", "fix")
    with pytest.raises(InvalidInputError, match="iteration must be an int >= 0, got -1"):
        fm.store_failure("KeyError", "'a'", iteration=-1)
    with pytest.raises(InvalidInputError, match="needs an error_type or an error_message"):
        fm.store_failure("", " ")
    fm.close()


# -- the specified skip rules for infrastructure failures (issue 26) -------------------------
INFRASTRUCTURE = [
    ("sqlite3.OperationalError", "database is locked", "database is locked"),
    ("sqlite3.OperationalError", "database table is locked", "database table is locked"),
    ("psycopg.OperationalError", "connection failed: server at 127.0.0.1", "psycopg"),
    ("psycopg2.OperationalError", "server closed the connection unexpectedly", "psycopg2"),
    ("sqlalchemy.exc.OperationalError", "(psycopg.OperationalError) timeout", "sqlalchemy"),
    ("ConnectionRefusedError", "[Errno 111] Connection refused", "ConnectionRefusedError"),
    ("ConnectionResetError", "[Errno 104] Connection reset by peer", "ConnectionResetError"),
    ("socket.timeout", "timed out", "socket.timeout"),
    (
        "",
        'Traceback (most recent call last):\n  File "w.py", line 3, in <module>\n'
        "sqlite3.OperationalError: database is locked",
        "database is locked",
    ),
]


@pytest.mark.parametrize(("error_type", "message", "named"), INFRASTRUCTURE)
def test_infrastructure_failures_are_not_stored(
    error_type: str, message: str, named: str, caplog: pytest.LogCaptureFixture
) -> None:
    mem = FailureMemory(":memory:", embedder="hashing")
    with caplog.at_level(logging.INFO, logger="costeer_lab.memory._failure"):
        assert mem.store_failure(error_type, message, "conn.execute(q)", task_id="t9") is None
    assert len(mem) == 0
    reason = mem.last_skip_reason
    assert reason is not None and reason.startswith("infrastructure error") and named in reason
    assert any(reason in r.getMessage() and "'t9'" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("error_type", "message"),
    [
        ("sqlite3.OperationalError", "no such table: prices"),  # the code's own SQL mistake
        ("TimeoutError", "the evaluation took longer than 10 s"),  # an endless loop
        ("KeyError", "'close'"),
    ],
)
def test_mistakes_of_the_code_are_still_stored(error_type: str, message: str) -> None:
    mem = FailureMemory(":memory:", embedder="hashing")
    assert mem.store_failure(error_type, message, "x", task_id="t") is not None
    assert mem.last_skip_reason is None
