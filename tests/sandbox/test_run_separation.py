"""Runs cannot reach each other through kernel state that namespaces of the worker share.

Two channels that a mount, PID and IPC namespace per run leave open: abstract unix sockets
(scoped by the network namespace, which runs shared with the worker) and the kernel keyrings
(no namespace covers them: a key added under a uid stays for the next run of that uid).
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from costeer_lab import Workspace
from costeer_lab.evaluate import Limits, Sandbox

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(Limits(wall_time_s=30, cpu_time_s=30), preimport=()) as sb:
        yield sb


LISTENER = """
import json, socket
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind("\\0" + NAME)
server.listen()
server.settimeout(WAIT_S)
try:
    conn, _ = server.accept()
    print(json.dumps({"accepted": conn.recv(64).decode()}))
except OSError as exc:
    print(json.dumps({"accepted": None, "error": type(exc).__name__}))
"""

CONNECTOR = """
import json, socket, time
outcome = None
for _ in range(20):  # a few tries, in case the listener is slow to accept
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect("\\0" + NAME)
        client.sendall(b"hello from the other run")
        outcome = "connected"
        break
    except OSError as exc:
        outcome = exc.errno
        time.sleep(0.05)
    finally:
        client.close()
print(json.dumps({"connect": outcome}))
"""


def _abstract_socket_listed(name: str) -> bool:
    """Whether a unix socket bound to the abstract ``name`` exists in any network namespace
    (each process's ``/proc/<pid>/net/unix`` lists its namespace's sockets)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/net/unix", encoding="utf-8", errors="replace") as fh:
                if f"@{name}" in fh.read():
                    return True
        except OSError:
            continue
    return False


@pytest.mark.skipif(os.geteuid() != 0, reason="finding the listener in every namespace needs root")
def test_concurrent_runs_cannot_talk_through_an_abstract_unix_socket(sandbox: Sandbox) -> None:
    """One run listens on an abstract unix socket; once the socket exists (seen from the host),
    a second run tries to connect. The first waits a bounded time for it, then gives up."""
    name = f"costeer-test-{uuid.uuid4().hex}"
    prelude = f"NAME = {name!r}\nWAIT_S = 5\n"
    with ThreadPoolExecutor(2) as pool:
        listening = pool.submit(sandbox.run, Workspace({"main.py": prelude + LISTENER}))
        deadline = time.monotonic() + 60
        while not _abstract_socket_listed(name) and not listening.done():
            assert time.monotonic() < deadline, "the listening run never bound its socket"
            time.sleep(0.02)
        connecting = sandbox.run(Workspace({"main.py": prelude + CONNECTOR}))
        listener = listening.result()
    assert listener.ok and connecting.ok, (listener.describe(), connecting.describe())
    assert json.loads(connecting.stdout)["connect"] != "connected"
    assert json.loads(listener.stdout)["accepted"] is None


KEYRINGS = """
import ctypes, json, os
NUMBERS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}  # add_key, request_key, keyctl
add_key, request_key, keyctl = NUMBERS[os.uname().machine]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
USER_KEYRING = -4
def call(*args):
    ctypes.set_errno(0)
    ret = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return ret if ret != -1 else -ctypes.get_errno()
print(json.dumps({
    "add_key": call(add_key, b"user", DESCRIPTION, b"left for the next run", 20, USER_KEYRING),
    "request_key": call(request_key, b"user", DESCRIPTION, None, 0),
    "keyctl": call(keyctl, 0, USER_KEYRING, 0),  # KEYCTL_GET_KEYRING_ID, no create
}))
"""


def test_keyring_calls_are_refused_and_leave_nothing_for_the_next_run(sandbox: Sandbox) -> None:
    """``add_key``, ``request_key`` and ``keyctl`` fail with ``EPERM`` (a seccomp filter, not a
    kill: the run carries on), so a key one run tries to leave is not found by the next."""
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip(f"no keyring filter for {os.uname().machine}")
    code = f"DESCRIPTION = b'costeer-test-{uuid.uuid4().hex}'\n" + KEYRINGS
    first = sandbox.run(Workspace({"main.py": code}))
    second = sandbox.run(Workspace({"main.py": code}))
    assert first.ok and second.ok, (first.describe(), second.describe())
    eperm = -1  # EPERM, negated by the probe
    for result in (first, second):
        assert json.loads(result.stdout) == {"add_key": eperm, "request_key": eperm,
                                             "keyctl": eperm}  # fmt: skip
