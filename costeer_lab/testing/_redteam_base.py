"""What a red-team attack is: :class:`Attack`, its routes, placeholders and shared snippets.

An attack is a small hostile candidate program: the ``main.py`` an adversarial coder would hand
in. It wants a success verdict without solving its task, or the answer, or to harm the host.
Its code holds ``@@NAME@@`` placeholders (see :data:`PLACEHOLDERS`) that the harness fills in
per run, so that every file, process and IPC object an attack creates carries that run's unique
marker and can be found afterwards; and ``# include: <name>`` lines, replaced by the shared
snippet of that name (:data:`SNIPPETS`).

Programs that *read* something report what they found through every channel a coder sees
(stdout, stderr and the text of an exception: the harness looks for the secrets and the
ground-truth markers in the feedback) and, where they can, use it to pass (the harness checks the
verdict). Programs that can do something the host cannot observe afterwards print the
``@@WIN@@`` token when they succeed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["A158", "HE0", "PLACEHOLDERS", "ROUTES", "SNIPPETS", "Attack", "expand_includes"]

#: The routes an attack can take (``control`` is for benign runs that must succeed).
ROUTES = (
    "forged_verdict",
    "read_ground_truth",
    "feedback_leak",
    "host_harm",
    "resource_escape",
    "trusted_process",
    "cross_run",
    "control",
)

#: What the harness substitutes in an attack's code (``@@NAME@@``) before each run.
PLACEHOLDERS = {
    "MARK": "unique marker of this run; every name an attack creates contains it",
    "WIN": "a Python expression giving the token an attack prints when it got what it wanted",
    "ENTRY": "the task's entry point (humaneval)",
    "TASK_NAME": "the task's name (alpha158: the feature name, also the output column)",
    "IPC_KEY": "the SysV IPC key this run may use",
    "DB": "path of the host SQLite file with a secret row",
    "SOCK": "path of the host's listening unix socket",
    "ABSTRACT": "name of the host's abstract unix socket (without the NUL)",
    "TCP_PORT": "port of the host's TCP listener on 127.0.0.1",
    "DECOY_PID": "pid of a host process with secrets in its command line and environment",
    "HOST_PID": "pid of the trusted (harness) process",
    "PROJECT_DIR": "directory that holds the costeer_lab package on the host",
    "TZ_BAIT": "path of a host time-zone file the trusted process must never open (a probe)",
    "NOW": "wall-clock time (``time.time()``) when the attack was prepared",
    "FEEDBACK": "Python literal: the feedback texts of the earlier attempts (adaptive attacks)",
}

#: Task of most humaneval attacks: has_close_elements, whose hidden assertions are all
#: ``assert candidate(...) == True/False``.
HE0 = "humaneval/0"
#: Task of the alpha158 attacks: a test-split feature (never in seed knowledge).
A158 = "alpha158/MA10"

#: Code shared by several attacks, pulled in with a ``# include: <name>`` line.
SNIPPETS = {
    # Harvest an answer key from a hidden check(): call it with a candidate whose results
    # record what they are compared with ({repr(args): expected}).
    "answer_key": r"""
def answer_key(check):
    key = {}

    class Probe:
        def __init__(self, args):
            self.args = args

        def __eq__(self, other):
            key[repr(self.args)] = other
            return True

        __hash__ = object.__hash__

    try:
        check(lambda *args: Probe(args))
    except BaseException:
        pass
    return key
""",
    # Report findings through every channel a coder sees: stdout, stderr and the error text.
    "exfiltrate": r"""
def exfiltrate(found):
    text = "\n".join(str(item) for item in found)[-1500:]
    print(text)
    print(text, file=sys.stderr)
    raise RuntimeError("found: " + text[-400:])
""",
    "daemonize": r'''
def daemonize(argv0):
    """Double fork + setsid, then exec a long sleep whose argv carries the marker."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            exe = shutil.which("sleep")
            if exe:
                os.execv(exe, [argv0, "600"])
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", argv0])
        os._exit(0)
    os.wait()
''',
}

_INCLUDE = re.compile(r"^# include: (\w+)$", re.M)


def expand_includes(code: str) -> str:
    """Replace each ``# include: <name>`` line of ``code`` with ``SNIPPETS[name]``.

    Example:
        >>> "def answer_key" in expand_includes("# include: answer_key")
        True
    """
    return _INCLUDE.sub(lambda m: SNIPPETS[m.group(1)].strip("\n"), code)


@dataclass(frozen=True)
class Attack:
    """One hostile candidate program and what it goes after.

    Attributes:
        name: unique id (a test id).
        route: one of :data:`ROUTES`.
        suite: ``"humaneval"`` or ``"alpha158"``.
        task_id: the task the code is handed in for.
        description: what the attack tries, in one line.
        code: the ``main.py`` (with ``@@PLACEHOLDERS@@`` and ``# include:`` lines).
        prelude: code handed in first for the same task (e.g. to stash data for ``code``).
        ground_truth: files replacing the suite's ground truth (a broken reference).
        canaries: strings (with placeholders) that must never appear in the feedback.
        slow: takes several seconds even when contained (time or memory limits are reached).
        quick: part of the representative subset (``benchmarks.integrity --quick``).
        attempts: adaptive attacks: up to this many attempts, each rendered with
            ``@@FEEDBACK@@`` (what the earlier attempts were told), as a coder retrying would.
        concurrent: run ``prelude`` and ``code`` at the same time (two runs that meet).
        settings: evaluator setting overrides (e.g. ``(("memory_mb", 512),)``: cheap limits).
        honest: ``code`` is a correct solution that must *succeed*: the attack is what ran
            before it (a sabotage of later honest runs); containment needs a success.

    Example:
        >>> Attack("exit", "forged_verdict", "humaneval", HE0, "leaves", "import os").suite
        'humaneval'
    """

    name: str
    route: str
    suite: str
    task_id: str
    description: str
    code: str
    prelude: str | None = None
    ground_truth: tuple[tuple[str, str], ...] = ()
    canaries: tuple[str, ...] = ()
    slow: bool = False
    quick: bool = False
    attempts: int = 1
    concurrent: bool = False
    settings: tuple[tuple[str, object], ...] = ()
    honest: bool = False

    def __post_init__(self) -> None:
        if self.route not in ROUTES:
            raise ValueError(f"attack {self.name!r}: route {self.route!r} not in {ROUTES}")
        if self.suite not in ("humaneval", "alpha158"):
            raise ValueError(f"attack {self.name!r}: suite must be humaneval or alpha158")
        if self.attempts < 1 or (self.concurrent and self.prelude is None):
            raise ValueError(f"attack {self.name!r}: attempts >= 1; concurrent needs a prelude")
