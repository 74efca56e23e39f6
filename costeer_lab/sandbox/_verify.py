"""What a run's child verifies about itself just before the candidate's code runs.

The worker *intends* an isolation level; :func:`verify` checks, from inside the locked-down
child, the facts that level rests on — the ones a mistake elsewhere (a dumpable init, a
forgotten namespace, a capability left behind) would silently break:

* ``init_hidden``: the PID namespace's process 1 cannot be used — its ``/proc/1/root`` (the
  worker's root: the host's filesystem), its environment and memory are out of reach;
* ``alone``: no other process is visible in ``/proc``, but the run itself and (listed to members
  of root's group only) that unusable init;
* ``no_capabilities``: no thread of the process holds an effective, permitted or ambient
  capability;
* ``own_network``: a network namespace of its own, neither the worker's nor the host's (for
  runs without ``Limits.network``; ``None`` for runs that asked for the network);
* ``keyrings_blocked``: the seccomp filter refuses the keyring calls (``_seccomp.py``);
* ``view``: the run was ``chroot``-ed into its filesystem view.

The child reports the facts in its ready line; the worker records a run as ``"full"`` only when
all of them held (:func:`shortfalls`). When the worker promised full isolation, a shortfall is
a set-up failure instead: the child refuses to run the code. Stdlib only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from costeer_lab.sandbox._seccomp import keyrings_blocked

__all__ = ["IsolationCheckFailed", "netns_id", "shortfalls", "verify"]

#: Why each fact matters, for the message of a refused run.
_MEANING = {
    "init_hidden": "/proc/1 of the run (its PID namespace's init) is usable: its root link, "
    "environment or memory can be read, which reaches the worker's filesystem",
    "alone": "other processes than the run are visible in its /proc",
    "no_capabilities": "the run still holds capabilities",
    "own_network": "the run shares a network namespace with the worker or the host",
    "keyrings_blocked": "the kernel keyring calls are not refused (seccomp filter missing)",
    "view": "the run is not confined to its filesystem view",
}


class IsolationCheckFailed(RuntimeError):
    """A fact the promised isolation rests on did not hold; the run is refused."""


def netns_id(path: str = "/proc/self/ns/net") -> int | None:
    """Identity (inode number) of the network namespace at ``path``, ``None`` if unreadable."""
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _unusable(action: str, path: str) -> bool:
    """Whether ``action`` on ``path`` fails. Opening is the test for ``environ`` and ``mem``:
    the kernel checks access when they are opened."""
    try:
        if action == "readlink":
            os.readlink(path)
        elif action == "listdir":
            os.listdir(path)
        else:
            os.close(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
    except OSError:
        return True
    return False


def _init_hidden() -> bool:
    if os.getpid() == 1:  # no init: the run would be its namespace's process 1 itself
        return False
    probes = (("readlink", "/proc/1/root"), ("listdir", "/proc/1/root/"),
              ("open", "/proc/1/environ"), ("open", "/proc/1/mem"))  # fmt: skip
    return all(_unusable(action, path) for action, path in probes)


def _alone(init_hidden: bool) -> bool:
    try:
        others = {n for n in os.listdir("/proc") if n.isdigit()} - {str(os.getpid())}
    except OSError:
        return False
    return not others or (others == {"1"} and init_hidden)


def _status_field(text: str, name: str) -> int | None:
    for line in text.splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1], 16)
    return None


def _no_capabilities() -> bool:
    try:
        tasks = os.listdir("/proc/self/task")
        for task in tasks:
            with open(f"/proc/self/task/{task}/status", encoding="ascii") as fh:
                text = fh.read()
            for name in ("CapEff", "CapPrm", "CapAmb"):
                if _status_field(text, name) != 0:
                    return False
    except (OSError, ValueError):
        return False
    return bool(tasks)


def _own_network(outside: set[int | None]) -> bool:
    own = netns_id()
    return own is not None and own not in outside


def verify(*, network: bool, outside_netns: set[int | None], view: bool) -> dict[str, bool | None]:
    """Check the facts (module docstring) in the calling process and return them.

    Args:
        network: the run asked for the network (``own_network`` is then not checked).
        outside_netns: identities of the network namespaces the run must not be in (the
            worker's, read before the child's ``unshare``, and the host's when known).
        view: the child ``chroot``-ed into the filesystem view.
    """
    init_hidden = _init_hidden()
    return {
        "init_hidden": init_hidden,
        "alone": _alone(init_hidden),
        "no_capabilities": _no_capabilities(),
        "own_network": None if network else _own_network(outside_netns - {None}),
        "keyrings_blocked": keyrings_blocked(),
        "view": view,
    }


def shortfalls(facts: Mapping[str, object]) -> list[str]:
    """What each fact that did not hold means (``[]``: full isolation verified). A fact that is
    ``None`` was not asked for; one that is missing counts as not holding."""
    return [meaning for name, meaning in _MEANING.items() if facts.get(name, False) is False]
