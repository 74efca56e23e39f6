"""``is_skippable_failure``: syntax typos and infrastructure errors are skipped, mistakes of the
code are kept. The failures are produced for real: an interpreter reading a typo, a process
interrupted with SIGINT, an OpenAI client timing out against a server that never answers."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab._fingerprint import is_skippable_failure, skip_reason


def _stderr_of(code: str, tmp_path: Path) -> str:
    main = tmp_path / "main.py"
    main.write_text(code)
    proc = subprocess.run(
        [sys.executable, str(main)], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode != 0
    return proc.stderr


@pytest.mark.parametrize(
    "code",
    ["def f(:\n    pass\n", "x = [1, 2\n", "if True\n    pass\n", "def g():\nreturn 1\n"],
)
def test_syntax_typos_are_skipped(code: str, tmp_path: Path) -> None:
    tb = _stderr_of(code, tmp_path)
    assert skip_reason(tb) == "syntax typo"
    assert is_skippable_failure(tb)


def test_structural_syntax_errors_and_mistakes_of_the_code_are_kept(tmp_path: Path) -> None:
    for code in ("return 1\n", "import numpyy\n", "x = {}\nx['a']\n", "1 / 0\n"):
        tb = _stderr_of(code, tmp_path)
        assert skip_reason(tb) is None, tb
    # the evaluator's own time limit means an endless loop: a mistake of the code
    assert not is_skippable_failure("the hidden tests ran too long", error_type="TimeoutError")


def test_an_interrupted_run_is_skipped() -> None:
    # the child raises KeyboardInterrupt on SIGINT even when its parent ignores SIGINT (as
    # mutmut's runner does: an ignored signal stays ignored in the child)
    code = (
        "import signal, time\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "print('ready', flush=True)\ntime.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert "KeyboardInterrupt" in stderr
    assert skip_reason(stderr) == "interrupted run: KeyboardInterrupt"


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_an_api_time_out_is_skipped(silent_server: int) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(
        base_url=f"http://127.0.0.1:{silent_server}/v1", api_key="test", timeout=0.3, max_retries=0
    )
    try:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    except openai.APITimeoutError as exc:
        tb = "".join(traceback.format_exception(exc))
        message = str(exc)
    else:  # pragma: no cover - the server never answers
        pytest.fail("the request did not time out")
    assert skip_reason(tb) == "infrastructure error: openai.APITimeoutError"
    assert is_skippable_failure(message, error_type="openai.APITimeoutError")


@pytest.mark.parametrize(
    ("text", "error_type", "reason"),
    [
        ("Request timed out.", "APITimeoutError", "infrastructure error: APITimeoutError"),
        ("timed out", "httpx.ReadTimeout", "infrastructure error: httpx.ReadTimeout"),
        (
            "Rate limit reached",
            "openai.RateLimitError",
            "infrastructure error: openai.RateLimitError",
        ),
        (
            "the reference implementation failed (exit code 1)",
            "costeer_lab.errors.GroundTruthError",
            "infrastructure error: costeer_lab.errors.GroundTruthError",
        ),
        (
            "Not evaluated: the evaluation infrastructure failed (the reference ...)",
            None,
            "infrastructure error: not evaluated",
        ),
        (
            "",
            "concurrent.futures.process.BrokenProcessPool",
            "interrupted run: concurrent.futures.process.BrokenProcessPool",
        ),
        (
            "",
            "asyncio.exceptions.CancelledError",
            "interrupted run: asyncio.exceptions.CancelledError",
        ),
        (
            "read timed out",
            "requests.exceptions.Timeout",
            "infrastructure error: requests.exceptions.Timeout",
        ),
        ("refused", "httpx.ConnectError", "infrastructure error: httpx.ConnectError"),
        ("bad status: 500: retry", "requests.exceptions.HTTPError", None),
        ("too slow", "mylib.Timeout", None),
        (
            "Request timed out: after 0.3 s: retry",
            "openai.APITimeoutError",
            "infrastructure error: openai.APITimeoutError",
        ),
        ("unexpected indent", "IndentationError", "syntax typo"),
        ("'return' outside function", "SyntaxError", None),
        (
            "connection refused",
            "ConnectionRefusedError",
            "infrastructure error: ConnectionRefusedError",
        ),
    ],
)
def test_reasons(text: str, error_type: str | None, reason: str | None) -> None:
    assert skip_reason(text, error_type) == reason


def test_non_strings_are_not_skipped() -> None:
    assert skip_reason(None) is None  # type: ignore[arg-type]
    assert not is_skippable_failure("")
