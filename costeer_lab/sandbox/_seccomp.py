"""A seccomp filter that keeps runs away from the kernel's key management.

Kernel keyrings (``add_key``, ``request_key``, ``keyctl``) belong to no namespace: the user
keyring of a uid, and keys linked into it, outlive the process that added them, so one run
could leave data for a later run of the same uid (every rootless run, or a reused uid slot),
and the keyring code is a kernel attack surface candidates have no use for. The child installs
:func:`deny_keyrings` as the last step before candidate code (``PR_SET_NO_NEW_PRIVS`` is set:
no privilege is needed); those calls then fail with ``EPERM``, like any other refused call, and
the filter is inherited by every process and thread the run starts.

The filter is a classic BPF program over ``struct seccomp_data``
(``{int nr; u32 arch; u64 instruction_pointer; u64 args[6]}``): it checks the architecture
first, since the same number means different calls on different ABIs. Calls made through
another ABI than the native one (``int 0x80`` i386 calls from an x86_64 process, x32 calls,
which carry bit ``0x40000000`` in ``nr``) are all refused with ``EPERM``. On a machine whose
architecture is not in :data:`_ARCHES` there is no filter: :func:`deny_keyrings` raises, and the
child then refuses to run code when full isolation is expected (``_verify.py``).

Stdlib only (the worker and its children import it).
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from dataclasses import dataclass

__all__ = [
    "SeccompUnavailable",
    "deny_keyrings",
    "deny_new_processes",
    "filter_program",
    "keyrings_blocked",
    "process_filter_program",
]

# BPF instruction fields (linux/bpf_common.h)
_BPF_LD, _BPF_W, _BPF_ABS = 0x00, 0x00, 0x20
_BPF_JMP, _BPF_JEQ, _BPF_JGE, _BPF_JSET, _BPF_K = 0x05, 0x10, 0x30, 0x40, 0x00
_BPF_RET = 0x06
# offsets in struct seccomp_data (linux/seccomp.h)
_NR_OFFSET, _ARCH_OFFSET, _ARG0_OFFSET = 0, 4, 16  # args[0]: its low word (little-endian)
# seccomp return values and modes (linux/seccomp.h)
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_SET_MODE_FILTER = 1
_FILTER_FLAG_TSYNC = 1
_X32_SYSCALL_BIT = 0x40000000
_KEYCTL_GET_KEYRING_ID = 0
_KEY_SPEC_SESSION_KEYRING = -3


@dataclass(frozen=True)
class _Arch:
    audit_arch: int  # AUDIT_ARCH_* (linux/audit.h): EM_* | 64-bit | little-endian
    denied: tuple[int, ...]  # add_key, request_key, keyctl
    seccomp_nr: int  # the seccomp(2) call itself
    has_x32: bool
    new_process: tuple[int, ...] = ()  # fork, vfork: always a new process
    clone: int = -1  # clone: a new process unless CLONE_THREAD is set
    clone3: int = 435  # its flags lie in memory a filter cannot read


#: Native ABIs the filter knows, by ``os.uname().machine`` (numbers from asm/unistd_64.h and
#: asm-generic/unistd.h).
_ARCHES = {
    "x86_64": _Arch(0xC000003E, (248, 249, 250), 317, True, new_process=(57, 58), clone=56),
    "aarch64": _Arch(0xC00000B7, (217, 218, 219), 277, False, clone=220),
}


class SeccompUnavailable(OSError):
    """The filter cannot be installed here (unknown architecture, or the kernel refused)."""


def _stmt(code: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, 0, 0, k)


def _jump(code: int, k: int, jt: int, jf: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def filter_program(machine: str) -> bytes:
    """The BPF program (``struct sock_filter`` array) for ``machine``: allow every call of the
    native ABI except the keyring calls; ``EPERM`` for those and for any other ABI."""
    arch = _ARCHES.get(machine)
    if arch is None:
        raise SeccompUnavailable(
            errno.ENOSYS, f"no seccomp filter for the {machine!r} architecture"
        )
    deny = _stmt(_BPF_RET | _BPF_K, _RET_ERRNO | errno.EPERM)
    checks = [_jump(_BPF_JMP | _BPF_JEQ | _BPF_K, nr, 0, 0) for nr in arch.denied]
    if arch.has_x32:  # x32 calls share the architecture value; their numbers carry this bit
        checks.insert(0, _jump(_BPF_JMP | _BPF_JGE | _BPF_K, _X32_SYSCALL_BIT, 0, 0))
    # each check jumps, when true, over the checks after it and the ALLOW to the final DENY
    checks = [c[:2] + bytes([len(checks) - i]) + c[3:] for i, c in enumerate(checks)]
    program = [
        _stmt(_BPF_LD | _BPF_W | _BPF_ABS, _ARCH_OFFSET),
        _jump(_BPF_JMP | _BPF_JEQ | _BPF_K, arch.audit_arch, 0, len(checks) + 2),
        _stmt(_BPF_LD | _BPF_W | _BPF_ABS, _NR_OFFSET),
        *checks,
        _stmt(_BPF_RET | _BPF_K, _RET_ALLOW),
        deny,
    ]
    return b"".join(program)


#: ``CLONE_THREAD`` (linux/sched.h): the new task shares this process (a thread).
_CLONE_THREAD = 0x00010000


def process_filter_program(machine: str) -> bytes:
    """The BPF program that keeps a run to one process: ``fork``, ``vfork`` and ``clone``
    without ``CLONE_THREAD`` fail with ``EAGAIN`` (what a full process table gives: Python
    raises ``BlockingIOError``); ``clone3``, whose flags a filter cannot read, fails with
    ``ENOSYS``, on which the C library starts threads with ``clone`` instead. Threads, ``exec``
    and every other call are allowed (other ABIs are the keyring filter's to refuse)."""
    arch = _ARCHES.get(machine)
    if arch is None:
        raise SeccompUnavailable(
            errno.ENOSYS, f"no seccomp filter for the {machine!r} architecture"
        )
    allow, again, nosys = "allow", "again", "nosys"
    code: list[tuple[int, int, str | None, str | None]] = [  # (op, k, jump if true, if false)
        (_BPF_LD | _BPF_W | _BPF_ABS, _ARCH_OFFSET, None, None),
        (_BPF_JMP | _BPF_JEQ | _BPF_K, arch.audit_arch, None, allow),
        (_BPF_LD | _BPF_W | _BPF_ABS, _NR_OFFSET, None, None),
        *[(_BPF_JMP | _BPF_JEQ | _BPF_K, nr, again, None) for nr in arch.new_process],
        (_BPF_JMP | _BPF_JEQ | _BPF_K, arch.clone3, nosys, None),
        (_BPF_JMP | _BPF_JEQ | _BPF_K, arch.clone, None, allow),
        (_BPF_LD | _BPF_W | _BPF_ABS, _ARG0_OFFSET, None, None),
        (_BPF_JMP | _BPF_JSET | _BPF_K, _CLONE_THREAD, allow, again),
    ]
    labels = {allow: len(code), again: len(code) + 1, nosys: len(code) + 2}
    program = []
    for at, (op, k, true, false) in enumerate(code):
        if op & 0x07 == _BPF_JMP:
            jt = labels[true] - at - 1 if true else 0
            jf = labels[false] - at - 1 if false else 0
            program.append(_jump(op, k, jt, jf))
        else:
            program.append(_stmt(op, k))
    program += [
        _stmt(_BPF_RET | _BPF_K, _RET_ALLOW),
        _stmt(_BPF_RET | _BPF_K, _RET_ERRNO | errno.EAGAIN),
        _stmt(_BPF_RET | _BPF_K, _RET_ERRNO | errno.ENOSYS),
    ]
    return b"".join(program)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_LIBC: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    """The C library, through the symbols the interpreter already has (``dlopen(NULL)``:
    ``find_library`` would start ``ldconfig``, a process, inside the run)."""
    if not _LIBC:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        _LIBC.append(libc)
    return _LIBC[0]


def deny_keyrings() -> None:
    """Install the keyring filter on every thread of the calling process
    (``SECCOMP_FILTER_FLAG_TSYNC``: threads a library started earlier are covered too). Needs
    ``PR_SET_NO_NEW_PRIVS`` (or ``CAP_SYS_ADMIN``). Raises :class:`SeccompUnavailable`."""
    _install(filter_program(os.uname().machine))


def deny_new_processes() -> None:
    """Install :func:`process_filter_program` (as :func:`deny_keyrings` does): the run stays
    one process, so its per-process limits (``RLIMIT_AS``) bound it as a whole. The sandbox's
    fallback where no cgroup bounds a run. Raises :class:`SeccompUnavailable`."""
    _install(process_filter_program(os.uname().machine))


def _install(program: bytes) -> None:
    machine = os.uname().machine
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.addressof(buffer))
    libc = _libc()
    nr = _ARCHES[machine].seccomp_nr
    args = (ctypes.c_long(nr), ctypes.c_ulong(_SET_MODE_FILTER))
    ret = libc.syscall(*args, ctypes.c_ulong(_FILTER_FLAG_TSYNC), ctypes.byref(prog))
    if ret != 0:
        err = ctypes.get_errno() or errno.EINVAL
        # TSYNC returns the id of a thread it could not synchronise as a positive value
        detail = os.strerror(err) if ret < 0 else f"thread {ret} could not be synchronised"
        raise SeccompUnavailable(err, f"seccomp filter not installed: {detail}")


def keyrings_blocked() -> bool:
    """Whether the keyring calls are refused for this process (the filter is in force): a
    harmless ``keyctl(KEYCTL_GET_KEYRING_ID, session keyring, create=0)`` fails with
    ``EPERM``."""
    arch = _ARCHES.get(os.uname().machine)
    if arch is None:
        return False
    libc = _libc()
    ctypes.set_errno(0)
    ret = libc.syscall(
        ctypes.c_long(arch.denied[2]),
        ctypes.c_long(_KEYCTL_GET_KEYRING_ID),
        ctypes.c_long(_KEY_SPEC_SESSION_KEYRING),
        ctypes.c_long(0),
    )
    return bool(ret == -1 and ctypes.get_errno() == errno.EPERM)
