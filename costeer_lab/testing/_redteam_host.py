"""The host side of the red-team harness: bait that attacks go after, and what they leave behind.

:class:`HostBait` sets up, for one harness session, the things a hostile candidate could reach
if the sandbox let it: a SQLite file holding a secret row (``host.db``, readable by everyone, as
a knowledge base made with the default umask would be), a listening unix socket in ``/tmp``
(mode 0666), an abstract unix socket and a TCP listener on 127.0.0.1, a decoy process whose
command line and environment hold secrets, a fake run directory of "another run" in
``/tmp`` holding a hidden-test canary, and a time-zone file (``zone-bait``) whose access time
tells whether the trusted process opened it (a candidate's output may name host paths). Every
connection to a listener is recorded.

:func:`snapshot` / :func:`leftovers` find what one attack left on the host: entries whose name
holds the attack's marker in ``/tmp``, ``/var/tmp``, ``/dev/shm`` and the other writable-looking
places attacks aim at, SysV IPC objects with the attack's key, processes whose command line
holds the marker, and sandbox run directories (``costeer-sbx-*``) left behind that hold an entry
named with the marker. :func:`clean_up` removes them (killing only those processes, by pid;
unreadable or very deep directory trees included).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "HostBait",
    "Listener",
    "Snapshot",
    "clean_up",
    "left_run_dirs",
    "leftovers",
    "marker_processes",
    "remove_tree",
    "snapshot",
    "watched_dirs",
]

#: Table of the bait database and the prefix of its secret row.
KB_TABLE = "knowledge"
#: Name prefix of the sandbox's run directories (``costeer_lab.sandbox._fs``).
RUN_DIR_PREFIX = "costeer-sbx-"
#: How deep a left-behind run directory is searched for the attack's marker.
_RUN_DIR_DEPTH = 4


class Listener:
    """A socket that accepts connections in a thread and records what each one sent."""

    def __init__(self, sock: socket.socket, label: str) -> None:
        self.label = label
        self.sock = sock
        self.sock.settimeout(0.2)
        self.received: list[tuple[float, bytes]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"bait-{label}", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            data = b""
            with contextlib.suppress(OSError), conn:
                conn.settimeout(0.5)
                while len(data) < 4096:
                    chunk = conn.recv(1024)
                    if not chunk:
                        break
                    data += chunk
            with self._lock:
                self.received.append((time.monotonic(), data or b"<connected, sent nothing>"))

    def count(self) -> int:
        """Number of connections accepted so far."""
        with self._lock:
            return len(self.received)

    def since(self, index: int) -> list[bytes]:
        """What the connections after the first ``index`` ones sent."""
        with self._lock:
            return [data for _, data in self.received[index:]]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        with contextlib.suppress(OSError):
            self.sock.close()


@dataclass
class HostBait:
    """The session's bait on this host (start with :meth:`start`, stop with :meth:`close`).

    Attributes:
        session: random hex shared by every name of this session.
        root: the bait directory ``/tmp/costeer-redteam-<session>`` (mode 0755).
        db_path: the SQLite file with the secret row (mode 0644, rollback journal).
        sock_path: the listening unix socket (mode 0666).
        abstract_name: name of the abstract unix socket (without the leading NUL).
        secrets: name → secret value; none may ever reach a candidate or its feedback.
        tz_path: a time-zone file nobody should read: its access time is set to 0 before each
            attack (``relatime`` then records any read).
    """

    session: str = field(default_factory=lambda: secrets.token_hex(5))
    root: Path = field(init=False)
    db_path: Path = field(init=False)
    sock_path: Path = field(init=False)
    abstract_name: str = field(init=False)
    other_run_dir: Path = field(init=False)
    tz_path: Path = field(init=False)
    tcp_port: int = 0
    decoy: subprocess.Popen[bytes] | None = None
    listeners: dict[str, Listener] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = Path(f"/tmp/costeer-redteam-{self.session}")
        self.db_path = self.root / "host.db"
        self.sock_path = self.root / "host.sock"
        self.abstract_name = f"costeer-redteam-{self.session}"
        self.other_run_dir = Path(f"/tmp/costeer-sbx-redteam{self.session}")
        self.tz_path = self.root / "zone-bait"
        token = secrets.token_hex(6)
        self.secrets = {
            "environment": f"sk-costeer-redteam-env-{token}",
            "decoy command line": f"costeer-redteam-argv-secret-{token}",
            "host knowledge base row": f"kb-secret-{token}",
            "another run's hidden tests": f"other-run-hidden-test-{token}",
        }

    # -- set-up ------------------------------------------------------------------------------
    def start(self) -> HostBait:
        """Create the bait (idempotent: a started bait is returned as is)."""
        if self.listeners:
            return self
        self.root.mkdir(mode=0o755)
        self.root.chmod(0o755)
        self._make_db()
        self._make_other_run()
        self._make_tz_bait()
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind(str(self.sock_path))
        self.sock_path.chmod(0o666)
        unix.listen(16)
        abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        abstract.bind("\0" + self.abstract_name)
        abstract.listen(16)
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(16)
        self.tcp_port = int(tcp.getsockname()[1])
        self.listeners = {
            "unix socket": Listener(unix, "unix"),
            "abstract unix socket": Listener(abstract, "abstract"),
            "TCP 127.0.0.1": Listener(tcp, "tcp"),
        }
        self.start_decoy()
        return self

    def _make_db(self) -> None:
        con = sqlite3.connect(self.db_path)
        try:
            con.execute("PRAGMA journal_mode=DELETE")
            con.execute(f"CREATE TABLE {KB_TABLE} (id INTEGER PRIMARY KEY, content TEXT)")
            con.execute(
                f"INSERT INTO {KB_TABLE} (content) VALUES (?)",
                (f"def solution(): return '{self.secrets['host knowledge base row']}'",),
            )
            con.commit()
        finally:
            con.close()
        self.db_path.chmod(0o644)

    def _make_other_run(self) -> None:
        work = self.other_run_dir / "work"
        work.mkdir(parents=True)
        for d in (self.other_run_dir, work):
            d.chmod(0o755)
        tests = work / "_costeer_tests.py"
        canary = self.secrets["another run's hidden tests"]
        tests.write_text(f"def check(candidate):\n    assert candidate() == {canary!r}\n")
        tests.chmod(0o644)

    def _make_tz_bait(self) -> None:
        """A valid TZif file (a copy of the host's UTC zone when there is one)."""
        src = Path("/usr/share/zoneinfo/UTC")
        data = src.read_bytes() if src.is_file() else b"TZif2" + bytes(39)
        self.tz_path.write_bytes(data)
        self.tz_path.chmod(0o644)
        self.arm_tz_bait()

    def arm_tz_bait(self) -> None:
        """Set the bait file's access time to 0: any later read updates it."""
        with contextlib.suppress(OSError):
            os.utime(self.tz_path, (0, self.tz_path.stat().st_mtime))

    def tz_bait_problem(self) -> str | None:
        """Whether the time-zone bait was read since :meth:`arm_tz_bait` (then re-armed)."""
        try:
            read = self.tz_path.stat().st_atime > 0
        except OSError:
            return None
        if not read:
            return None
        self.arm_tz_bait()
        return f"a host file named by the candidate ({self.tz_path}) was read by the trusted side"

    def start_decoy(self) -> None:
        """(Re)start the decoy: ``sh -c 'sleep 3600; :' <argv secret>`` with a secret env."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        env["OPENAI_API_KEY"] = self.secrets["environment"]
        self.decoy = subprocess.Popen(
            ["sh", "-c", "sleep 3600; :", self.secrets["decoy command line"]],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    @property
    def decoy_pid(self) -> int:
        """Pid of the decoy process (0 before :meth:`start`)."""
        return self.decoy.pid if self.decoy is not None else 0

    # -- observation -------------------------------------------------------------------------
    def connection_counts(self) -> dict[str, int]:
        """Connections accepted so far, per listener."""
        return {name: lst.count() for name, lst in self.listeners.items()}

    def new_connections(self, before: dict[str, int]) -> list[str]:
        """One line per listener that accepted connections since ``before``."""
        out = []
        time.sleep(0.05)  # a connection made at the very end of a run is still being read
        for name, lst in self.listeners.items():
            got = lst.since(before.get(name, 0))
            if got:
                sample = got[0][:80].decode(errors="replace")
                out.append(f"{len(got)} connection(s) reached the host {name} (sent {sample!r})")
        return out

    def decoy_problem(self) -> str | None:
        """Why the decoy is not running normally any more (killed, stopped), or ``None``."""
        if self.decoy is None:
            return None
        code = self.decoy.poll()
        if code is not None:
            return f"the host decoy process {self.decoy.pid} was killed (status {code})"
        with contextlib.suppress(OSError):
            state = Path(f"/proc/{self.decoy.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state in ("T", "t"):
                return f"the host decoy process {self.decoy.pid} was stopped or traced"
        return None

    def repair_decoy(self) -> None:
        """Restart the decoy after an attack disturbed it."""
        self.stop_decoy()
        self.start_decoy()

    def _host_write(self) -> str | None:
        """One write transaction with ``timeout=0``: ``None`` or the error text."""
        try:
            con = sqlite3.connect(self.db_path, timeout=0, isolation_level=None)
            try:
                con.execute("BEGIN IMMEDIATE")
                con.execute(f"INSERT INTO {KB_TABLE} (content) VALUES ('host write')")
                con.execute("COMMIT")
            finally:
                con.close()
        except sqlite3.Error as exc:
            return str(exc)
        return None

    def db_lock_problem(self, wait_s: float = 2.0) -> str | None:
        """Whether a host writer is blocked: a write transaction with ``timeout=0`` must succeed
        right away. When it does not, how long the block lasts is measured (up to ``wait_s``)
        for the message."""
        first = self._host_write()
        if first is None:
            return None
        start = time.monotonic()
        while time.monotonic() - start < wait_s:
            time.sleep(0.1)
            if self._host_write() is None:
                waited = time.monotonic() - start
                return (
                    f"a host write to {self.db_path} failed right after the run ({first}); "
                    f"it succeeded {waited:.1f} s later"
                )
        return f"a host write to {self.db_path} failed ({first}) and still did after {wait_s:g} s"

    # -- tear-down ---------------------------------------------------------------------------
    def stop_decoy(self) -> None:
        if self.decoy is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.decoy.pid, signal.SIGKILL)  # our own session: sh and its sleep
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                self.decoy.wait(5)
            self.decoy = None

    def close(self) -> None:
        """Stop the listeners and the decoy and remove the bait files."""
        for lst in self.listeners.values():
            lst.close()
        self.listeners = {}
        self.stop_decoy()
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.rmtree(self.other_run_dir, ignore_errors=True)

    def __enter__(self) -> HostBait:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- what an attack leaves behind -------------------------------------------------------------
def watched_dirs(project_dir: Path | None = None) -> list[Path]:
    """Host directories scanned for files named with an attack's marker: the shared temporary
    directories, the interpreter's site-packages, the project, ``/work`` and a few others."""
    dirs = [Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path.home(), Path("/")]
    dirs += [Path("/etc"), Path("/usr/local/lib"), Path(sys.prefix), Path(sys.base_prefix)]
    for key in ("purelib", "platlib", "stdlib"):
        with contextlib.suppress(KeyError):
            dirs.append(Path(sysconfig.get_paths()[key]))
    dirs += [Path(p) for p in sys.path if p and os.path.isdir(p)]
    dirs.append(Path(tempfile.gettempdir()))
    with contextlib.suppress(Exception):
        from costeer_lab.settings import get_settings

        tmp_dir = get_settings().sandbox.tmp_dir
        if tmp_dir:
            dirs.append(Path(tmp_dir))
    if project_dir is not None:
        dirs.append(project_dir)
    work = Path("/work")
    if work.is_dir():
        dirs.append(work)
        with contextlib.suppress(OSError):
            dirs += [p for p in work.iterdir() if p.is_dir()]
    seen: dict[str, Path] = {}
    for d in dirs:
        with contextlib.suppress(OSError):
            seen.setdefault(os.path.realpath(d), d)
    return [Path(p) for p in seen]


def _ipc_objects() -> set[tuple[str, int, int]]:
    """``(kind, key, id)`` of every SysV IPC object visible from here."""
    found: set[tuple[str, int, int]] = set()
    for kind in ("shm", "msg", "sem"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            with contextlib.suppress(ValueError, IndexError):
                found.add((kind, int(cols[0]), int(cols[1])))
    return found


@dataclass(frozen=True)
class Snapshot:
    """Host state before a run: directory entries of the watched dirs and IPC objects."""

    entries: frozenset[str]
    ipc: frozenset[tuple[str, int, int]]


def _entries(dirs: list[Path]) -> set[str]:
    out: set[str] = set()
    for d in dirs:
        with contextlib.suppress(OSError):
            out.update(str(d / name) for name in os.listdir(d))
    return out


def snapshot(dirs: list[Path]) -> Snapshot:
    """Record the host state that :func:`leftovers` compares against."""
    return Snapshot(frozenset(_entries(dirs)), frozenset(_ipc_objects()))


def marker_processes(marker: str) -> list[tuple[int, str]]:
    """``(pid, command line)`` of live processes whose command line holds ``marker``."""
    found = []
    needle = marker.encode()
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            raw = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in raw and state not in ("Z", "X"):
            found.append((int(name), raw.replace(b"\0", b" ").decode(errors="replace")[:120]))
    return found


def leftovers(
    before: Snapshot, dirs: list[Path], marker: str, ipc_key: int, wait_s: float = 5.0
) -> list[str]:
    """What the attack with ``marker`` left behind, one line per kind of leftover.

    Processes get ``wait_s`` to disappear (a SIGKILL is delivered asynchronously).
    """
    problems = []
    new = sorted(e for e in _entries(dirs) - before.entries if marker in os.path.basename(e))
    if new:
        problems.append(f"files left on the host: {new[:6]}")
    run_dirs = left_run_dirs(before, dirs, marker)
    if run_dirs:
        problems.append(f"run directories left behind (holding the run's files): {run_dirs[:3]}")
    objs = sorted(o for o in _ipc_objects() - before.ipc if o[1] == ipc_key)
    if objs:
        kinds = ", ".join(f"{kind} id {ident}" for kind, _, ident in objs)
        problems.append(f"SysV IPC objects with key {ipc_key:#x} survive the run: {kinds}")
    deadline = time.monotonic() + wait_s
    procs = marker_processes(marker)
    while procs and time.monotonic() < deadline:
        time.sleep(0.1)
        procs = marker_processes(marker)
    if procs:
        problems.append(f"{len(procs)} process(es) of the run survive it: {procs[:3]}")
    return problems


def _holds_marker(path: Path, marker: str, depth: int) -> bool:
    """Whether ``path`` holds an entry named with ``marker`` within ``depth`` levels."""
    try:
        names = os.listdir(path)
    except OSError:
        return False
    if any(marker in name for name in names):
        return True
    if depth <= 1:
        return False
    subdirs = [path / n for n in names if (path / n).is_dir() and not (path / n).is_symlink()]
    return any(_holds_marker(d, marker, depth - 1) for d in subdirs)


def left_run_dirs(before: Snapshot, dirs: list[Path], marker: str) -> list[str]:
    """Sandbox run directories (``costeer-sbx-*``) that appeared since ``before`` and hold an
    entry named with ``marker``: the trusted side failed to remove a run of this attack."""
    found = []
    for entry in sorted(_entries(dirs) - before.entries):
        path = Path(entry)
        is_run_dir = path.name.startswith(RUN_DIR_PREFIX) and path.is_dir()
        if is_run_dir and not path.is_symlink() and _holds_marker(path, marker, _RUN_DIR_DEPTH):
            found.append(entry)
    return found


def remove_tree(path: Path) -> None:
    """Remove a directory tree however deep, or unreadable to its owner (``chmod 000``)."""
    if not path.exists() and not path.is_symlink():
        return
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(["chmod", "-R", "u+rwX", str(path)], capture_output=True, timeout=120)
        subprocess.run(["rm", "-rf", "--", str(path)], capture_output=True, timeout=120)
    shutil.rmtree(path, ignore_errors=True)


def _remove_ipc(kind: str, ident: int) -> None:
    flag = {"shm": "-m", "msg": "-q", "sem": "-s"}[kind]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(["ipcrm", flag, str(ident)], capture_output=True, timeout=10, check=False)


def clean_up(before: Snapshot, dirs: list[Path], marker: str, ipc_key: int) -> None:
    """Remove what :func:`leftovers` reports (files, IPC objects, processes by pid)."""
    for pid, _ in marker_processes(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for entry in left_run_dirs(before, dirs, marker):
        remove_tree(Path(entry))
    for entry in _entries(dirs) - before.entries:
        if marker not in os.path.basename(entry):
            continue
        path = Path(entry)
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
    for kind, key, ident in _ipc_objects() - before.ipc:
        if key == ipc_key:
            _remove_ipc(kind, ident)
