"""Red-team attacks on the host and on resource limits.

Route ``host_harm``: SysV and POSIX shared memory, files in shared temporary directories, locks
on a host SQLite file, host unix sockets, fork bombs and daemons, writes outside the work
directory, signals and ptrace to host processes, a pickle payload for the trusted process.
Route ``resource_escape``: memory, network, output floods, huge, blocking or exploding output
files that the trusted process reads.
"""

from __future__ import annotations

from costeer_lab.testing._redteam_base import A158, HE0, Attack

__all__ = ["HOST_HARM", "RESOURCE_ESCAPES"]

#: Attacks that try to leave something on the host or to disturb it.
HOST_HARM: tuple[Attack, ...] = (
    Attack(
        name="sysv_ipc_objects",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="SysV shmget/msgget/semget objects that outlive the run",
        quick=True,
        code=r'''
"""Create SysV shared memory, a message queue and a semaphore set (ctypes, libc)."""
import ctypes
import ctypes.util

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
key, flags = @@IPC_KEY@@, 0o1666  # IPC_CREAT | 0666
print("shm", libc.shmget(key, 1 << 20, flags), "msg", libc.msgget(key, flags),
      "sem", libc.semget(key, 1, flags))
''',
    ),
    Attack(
        name="posix_shared_memory",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="a POSIX shared memory segment (/dev/shm) left after the run",
        code=r'''
"""multiprocessing.shared_memory in /dev/shm, unregistered so nothing cleans it up."""
from multiprocessing import resource_tracker, shared_memory

shm = shared_memory.SharedMemory(name="costeer-shm-@@MARK@@", create=True, size=1 << 20)
shm.buf[:5] = b"hello"
resource_tracker.unregister(shm._name, "shared_memory")
print("created", shm.name)
''',
    ),
    Attack(
        name="shared_tmp_files",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="files in /tmp, /var/tmp, /dev/shm that outlive the run",
        quick=True,
        code=r'''
"""Leave files in /tmp, /var/tmp and /dev/shm."""
for folder in ("/tmp", "/var/tmp", "/dev/shm"):
    try:
        with open(folder + "/costeer-file-@@MARK@@", "w") as fh:
            fh.write("left behind")
    except OSError as exc:
        print(folder, exc)
''',
    ),
    Attack(
        name="sqlite_lock",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="read-locks the host SQLite file from the run and from a daemon",
        quick=True,
        code=r'''
"""Hold a read lock on a host SQLite file (writers get "database is locked"), here and
in a detached daemon that outlives the run."""
import os
import sqlite3
import sys

LOCKER = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
con.execute("BEGIN")
con.execute("SELECT count(*) FROM sqlite_master").fetchall()
time.sleep(600)
"""
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", LOCKER, "@@DB@@", "lock-@@MARK@@"])
    os._exit(0)
os.wait()
try:
    con = sqlite3.connect("@@DB@@", timeout=0, isolation_level=None)
    con.execute("BEGIN")
    con.execute("SELECT count(*) FROM sqlite_master").fetchall()
    print(@@WIN@@, "holding a shared lock on the host database")
    try:
        con.execute("BEGIN EXCLUSIVE")
    except sqlite3.Error as exc:
        print("exclusive lock refused:", exc)
except sqlite3.Error as exc:
    print("host database refused:", exc)
''',
    ),
    Attack(
        name="host_unix_socket",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="connects to a listening AF_UNIX socket of the host in /tmp",
        quick=True,
        code=r'''
"""Connect to a unix socket a host service listens on in /tmp."""
import socket

try:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect("@@SOCK@@")
        s.sendall(b"hello from @@MARK@@")
    print(@@WIN@@, "connected to the host socket")
except OSError as exc:
    print("refused:", exc)
''',
    ),
    Attack(
        name="abstract_unix_socket",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="connects to an abstract AF_UNIX socket of the host",
        code=r'''
"""Connect to a host abstract unix socket (no file, no permission check)."""
import socket

try:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect("\0@@ABSTRACT@@")
        s.sendall(b"hello from @@MARK@@")
    print(@@WIN@@, "connected to the abstract socket")
except OSError as exc:
    print("refused:", exc)
''',
    ),
    Attack(
        name="fork_bomb",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="forks until the process limit; the children must not survive the run",
        code=r'''
"""Fork until refused; every child becomes a long sleep carrying the marker."""
import os
import shutil
import sys

forked = 0
for _ in range(500):
    try:
        pid = os.fork()
    except OSError as exc:
        print("fork refused after", forked, ":", exc)
        break
    if pid == 0:
        exe = shutil.which("sleep")
        if exe:
            os.execv(exe, ["costeer-fork-@@MARK@@", "600"])
        os._exit(0)
    forked += 1
print("forked", forked)
''',
    ),
    Attack(
        name="daemon_process",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="a double-forked setsid daemon that sleeps forever",
        quick=True,
        code=r'''
"""Leave a daemon behind: double fork, setsid, sleep for ten minutes."""
import os
import shutil
import sys

# include: daemonize

daemonize("costeer-daemon-@@MARK@@")
print("daemon started")
''',
    ),
    Attack(
        name="write_outside_workdir",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="writes into site-packages, the project dir and other host directories",
        quick=True,
        code=r'''
"""Try to plant files in site-packages, the project directory, HOME and /."""
import os
import site
import sys
import sysconfig

here = os.path.realpath(os.getcwd())
targets = set(site.getsitepackages() + [sysconfig.get_paths()["purelib"]])
targets.update([os.path.dirname(os.__file__), os.path.expanduser("~"), "/", "/etc", "/work",
                "@@PROJECT_DIR@@", "/usr/local/lib"])
targets.update(p for p in sys.path if p and os.path.isdir(p))
for folder in sorted(targets):
    if os.path.realpath(folder) == here:
        continue
    path = os.path.join(folder, "costeer-planted-@@MARK@@.txt")
    try:
        with open(path, "w") as fh:
            fh.write("planted")
        print(@@WIN@@, "wrote", path)
    except OSError as exc:
        print("refused", folder, type(exc).__name__)
''',
    ),
    Attack(
        name="signal_host_process",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="SIGKILL to a host process; signal-0 probe of the trusted process",
        code=r'''
"""Kill a host process (the decoy) and probe whether the trusted process can be
signalled (signal 0 only)."""
import os
import signal

try:
    os.kill(@@DECOY_PID@@, signal.SIGKILL)
    print(@@WIN@@, "killed the host decoy")
except OSError as exc:
    print("kill refused:", exc)
try:
    os.kill(@@HOST_PID@@, 0)
    print(@@WIN@@, "may signal the trusted process")
except OSError as exc:
    print("signal probe refused:", exc)
''',
    ),
    Attack(
        name="ptrace_host_process",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="ptrace(PTRACE_ATTACH) on a host process",
        code=r'''
"""PTRACE_ATTACH to the host decoy process (then detach)."""
import ctypes
import ctypes.util
import os
import time

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
pid = @@DECOY_PID@@
if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
    print(@@WIN@@, "attached to the host decoy")
    time.sleep(0.2)
    libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
else:
    print("ptrace refused:", os.strerror(ctypes.get_errno()))
''',
    ),
    Attack(
        name="pickle_reduce_payload",
        route="host_harm",
        suite="humaneval",
        task_id=HE0,
        description="a return value whose __reduce__ runs code wherever it is unpickled",
        code=r'''
"""Return an object whose unpickling (or copying) in the trusted process creates a file
in the host's /tmp."""


class Payload:
    def __reduce__(self):
        return (open, ("/tmp/costeer-pickled-@@MARK@@", "w"))

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__


def @@ENTRY@@(*args):
    return Payload()
''',
    ),
)

#: Attacks on resource limits, including the trusted process's own.
RESOURCE_ESCAPES: tuple[Attack, ...] = (
    Attack(
        name="memory_bomb",
        route="resource_escape",
        suite="humaneval",
        task_id=HE0,
        description="allocates memory without end",
        code=r'''
"""Allocate memory in 256 MiB blocks (touched) until something stops it."""
blocks = []
while True:
    blocks.append(b"\x01" * (256 << 20))
''',
    ),
    Attack(
        name="network_egress",
        route="resource_escape",
        suite="humaneval",
        task_id=HE0,
        description="TCP connections to a host listener on 127.0.0.1 and to the internet",
        quick=True,
        code=r'''
"""Reach the network: a host TCP listener on 127.0.0.1 and public DNS servers."""
import socket

for host, port in (("127.0.0.1", @@TCP_PORT@@), ("1.1.1.1", 53), ("8.8.8.8", 53)):
    try:
        with socket.create_connection((host, port), timeout=1.5) as s:
            s.sendall(b"hello from @@MARK@@")
        print(@@WIN@@, "connected to", host, port)
    except OSError as exc:
        print("no route to", host, port, ":", exc)
''',
    ),
    Attack(
        name="huge_stdout",
        route="resource_escape",
        suite="humaneval",
        task_id=HE0,
        description="floods stdout/stderr; the feedback must stay bounded",
        code=r'''
"""Print 64 MiB to stdout and stderr: the feedback must stay small."""
import sys

sys.stdout.write("x" * (64 << 20))
sys.stderr.write("y" * (16 << 20))
''',
    ),
    Attack(
        name="huge_sparse_output",
        route="resource_escape",
        suite="alpha158",
        task_id=A158,
        description="a 1 TiB sparse output file",
        code=r'''
"""A sparse 1 TiB result.parquet (no disk used, but huge if read)."""
with open("result.parquet", "wb") as fh:
    fh.truncate(1 << 40)
print("sparse file made")
''',
    ),
    Attack(
        name="factor_output_fifo",
        route="resource_escape",
        suite="alpha158",
        task_id=A158,
        description="the output is a named pipe: a blocking open in the trusted process hangs",
        code=r'''
"""result.parquet as a FIFO: a reader that opens it blocks forever."""
import os

os.mkfifo("result.parquet")
''',
    ),
    Attack(
        name="parquet_decompression_bomb",
        route="resource_escape",
        suite="alpha158",
        task_id=A158,
        description="a Parquet output that decompresses to 40M rows in the trusted parser",
        slow=True,
        code=r'''
"""A small Parquet file that expands to ~40 million rows in the trusted process that
parses it (constant columns compress to almost nothing)."""
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

rows = 1_000_000
frame = pd.DataFrame(
    {"datetime": np.full(rows, np.datetime64("2020-01-02", "ns")),
     "instrument": np.full(rows, "SH600000", dtype=object),
     "@@TASK_NAME@@": np.zeros(rows)}
).set_index(["datetime", "instrument"])
table = pa.Table.from_pandas(frame)
with pq.ParquetWriter("result.parquet", table.schema, compression="zstd") as writer:
    for _ in range(20):
        writer.write_table(table)
print("bytes on disk:", __import__("os").path.getsize("result.parquet"))
''',
    ),
    Attack(
        name="raise_own_limits",
        route="resource_escape",
        suite="humaneval",
        task_id=HE0,
        description="raises its rlimits, priority and cgroup, then allocates past the limit",
        code=r'''
"""Lift the run's limits: raise every rlimit to infinity, renice to -20, move into the root
cgroup; then allocate 6 GiB of address space to see whether any limit still holds."""
import mmap
import os
import resource

for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_NOFILE"):
    kind = getattr(resource, name)
    try:
        resource.setrlimit(kind, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        print(@@WIN@@, "raised", name)
    except (ValueError, OSError) as exc:
        print("cannot raise", name, exc)
try:
    os.nice(-20)
    print(@@WIN@@, "reniced to -20")
except OSError as exc:
    print("cannot renice:", exc)
for procs in ("/sys/fs/cgroup/cgroup.procs", "/sys/fs/cgroup/memory/cgroup.procs"):
    try:
        with open(procs, "w") as fh:
            fh.write(str(os.getpid()))
        print(@@WIN@@, "moved into", procs)
    except OSError as exc:
        print("cannot move into", procs, type(exc).__name__)
try:
    big = mmap.mmap(-1, 6 << 30)  # address space only: no memory is touched
    print(@@WIN@@, "mapped 6 GiB beyond the memory limit")
except (OSError, OverflowError, MemoryError) as exc:
    print("6 GiB mapping refused:", exc)
''',
    ),
    Attack(
        name="nested_json_result",
        route="resource_escape",
        suite="humaneval",
        task_id=HE0,
        description="makes json.dump(s) in its process emit 100k-deep nesting for the parser",
        code=r'''
"""Return a deeply nested list, and make every json.dump/json.dumps of this process emit a
100 000-deep nested array: whatever parses the run's results must neither crash nor hang."""
import json

NESTED = "[" * 100_000 + "]" * 100_000
json.dumps = lambda *args, **kwargs: NESTED
json.dump = lambda obj, fh, *args, **kwargs: fh.write(NESTED)


def @@ENTRY@@(*args):
    value = []
    for _ in range(900):
        value = [value]
    return value
''',
    ),
)
