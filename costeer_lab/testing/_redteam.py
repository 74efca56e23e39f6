"""Red team for evaluation integrity: run hostile candidates through the public path and check
that each one is contained.

Treat the evaluator as a security boundary. An :class:`Attack` (what one is:
:mod:`~costeer_lab.testing._redteam_base`; the programs: ``_redteam_verdicts``, ``_redteam_reads``
and ``_redteam_harm``; the host bait: ``_redteam_host``) is handed in exactly as a coder's code
would be —
``suite.evaluator().evaluate(task, Workspace({"main.py": code}), suite.ground_truth(task.id))``,
optionally through :class:`~costeer_lab.evaluate.MultiEvaluator` or a whole
:func:`~costeer_lab.experiment.run_experiment` — and is **contained** when all of these hold:

a. the verdict is not a success (the code never solves its task);
b. no secret reaches the feedback: ground-truth markers (hidden-test and reference-solution
   lines), the host bait's secrets, the attack's own canaries, and the ``WIN`` token an attack
   prints when it did something the host cannot observe afterwards;
c. nothing is left behind: no files named with the run's marker in ``/tmp``, ``/var/tmp``,
   ``/dev/shm``, site-packages, the project or other host directories, no SysV IPC object with
   the run's key, no process whose command line holds the marker; no connection reached the
   host's listeners, the host decoy process still runs;
d. no host writer is blocked: a write transaction on the host SQLite file succeeds with
   ``timeout=0``.

The evaluator must also return (within ``timeout_s``), keep its feedback bounded (at most
:data:`MAX_FEEDBACK_CHARS` characters and :data:`MAX_FINGERPRINTS` error fingerprints), not
raise, leave no run directory behind (a ``costeer-sbx-*`` directory holding the run's marker),
never open the host's time-zone bait file, and spend little of the trusted process: its CPU time
and its *peak* resident memory (the kernel's high-water mark ``VmHWM``, reset before each call)
are measured per attack, reported in :class:`AttackResult` and must stay within
:data:`TRUSTED_CPU_S` and :data:`TRUSTED_RSS_MB`.

Some attacks need more than one run: a ``prelude`` before the code (or at the same time, for two
runs that try to meet), several adaptive ``attempts`` that each see what the earlier ones were
told, cheaper evaluator ``settings``, or an ``honest`` final run that must still succeed after
the attack sabotaged what it shares (see :class:`~costeer_lab.testing._redteam_base.Attack`).
Leftovers are removed after each attack (processes killed by pid).

Example:
    >>> from costeer_lab.testing import ATTACKS, RedTeam
    >>> with RedTeam() as team:                                    # doctest: +SKIP
    ...     result = team.run(ATTACKS[0])
    >>> result.contained, result.detail                            # doctest: +SKIP
    (False, 'LEAKED: final_decision=True: the evaluator accepted this code for humaneval/0')
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from costeer_lab.evaluate import _budget
from costeer_lab.records import SingleFeedback, Task, Workspace
from costeer_lab.testing._redteam_base import A158, PLACEHOLDERS, ROUTES, Attack, expand_includes
from costeer_lab.testing._redteam_harm import HOST_HARM, RESOURCE_ESCAPES
from costeer_lab.testing._redteam_host import (
    HostBait,
    clean_up,
    leftovers,
    snapshot,
    watched_dirs,
)
from costeer_lab.testing._redteam_reads import FEEDBACK_LEAKS, READS
from costeer_lab.testing._redteam_round2 import ROUND2
from costeer_lab.testing._redteam_verdicts import FORGED_VERDICTS

__all__ = [
    "ATTACKS",
    "MAX_FEEDBACK_CHARS",
    "MAX_FINGERPRINTS",
    "ROUTES",
    "TRUSTED_CPU_S",
    "TRUSTED_RSS_MB",
    "AlwaysPassEvaluator",
    "Attack",
    "AttackResult",
    "RedTeam",
    "benign_controls",
    "run_all",
    "run_attack",
    "run_experiment_attacks",
    "truth_markers",
]

#: Every attack, in a stable order: forged verdicts, reads, feedback leaks, host harm, resources.
ATTACKS: tuple[Attack, ...] = (
    *FORGED_VERDICTS,
    *READS,
    *FEEDBACK_LEAKS,
    *HOST_HARM,
    *RESOURCE_ESCAPES,
    *ROUND2,
)

#: Largest feedback (all sections) a run may produce, in characters.
MAX_FEEDBACK_CHARS = _budget.MAX_FEEDBACK_CHARS
#: Most error fingerprints one feedback may carry (each one becomes failure memory).
MAX_FINGERPRINTS = _budget.MAX_FINGERPRINTS
#: CPU seconds and peak resident-memory growth (MiB) the trusted process may spend on one
#: candidate: the evaluators' stated budget (:mod:`costeer_lab.evaluate._budget`), checked on
#: the whole evaluation when it runs in this process (a normal one needs a few ms and MiB).
TRUSTED_CPU_S = float(_budget.TRUSTED_CPU_S)
TRUSTED_RSS_MB = float(_budget.TRUSTED_RSS_MB)
#: Lines of a reference that are too generic to prove a leak when they show up.
_GENERIC_LINES = {'if __name__ == "__main__":', "if __name__ == '__main__':"}


@dataclass(frozen=True)
class AttackResult:
    """Whether one attack was contained, and what leaked if not.

    Attributes:
        name: the attack's name.
        route: the attack's route.
        contained: every check held (see the module docstring).
        detail: ``"contained: ..."`` or ``"LEAKED: <what>; <what>"`` — names exactly what leaked.
        final_decision: the verdict the evaluator gave (``None``: no feedback).
        leaks: one line per failed check.
        duration_s: wall time of the run(s) and the checks.
        trusted_cpu_s: most CPU time the trusted process spent on one evaluation of the attack.
        trusted_peak_rss_mb: largest growth of the trusted process's peak resident memory
            during one evaluation (MiB).
    """

    name: str
    route: str
    contained: bool
    detail: str
    final_decision: bool | None = None
    leaks: tuple[str, ...] = ()
    duration_s: float = 0.0
    trusted_cpu_s: float = 0.0
    trusted_peak_rss_mb: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-able dict."""
        return {
            "name": self.name,
            "route": self.route,
            "contained": self.contained,
            "detail": self.detail,
            "final_decision": self.final_decision,
            "leaks": list(self.leaks),
            "duration_s": self.duration_s,
            "trusted_cpu_s": self.trusted_cpu_s,
            "trusted_peak_rss_mb": self.trusted_peak_rss_mb,
        }


class AlwaysPassEvaluator:
    """A deliberately leaky toy evaluator: every implementation succeeds, nothing runs.

    Used as the harness's control: every attack must be reported as *not* contained with it.

    Example:
        >>> fb = AlwaysPassEvaluator().evaluate(Task("t", "t", ""), Workspace({"main.py": ""}))
        >>> fb.final_decision
        True
    """

    def evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None = None
    ) -> SingleFeedback:
        return SingleFeedback(execution="not run", return_checking="accepted", final_decision=True)


def truth_markers(suite: str, task: Task, gt: Workspace) -> list[str]:
    """Strings that prove the ground truth was read when they show up in feedback.

    Hidden tests: the ``def check(candidate)`` line and ``METADATA``. Reference code: every
    stripped line of at least 16 (humaneval) or 24 (alpha158) characters that is neither in the
    task's public text nor generic. (Assertion lines are not markers: the current feedback shows
    the failing one on purpose; ``failing_assert_expected_value`` checks that separately.)

    Example:
        >>> t = Task("d/f", "f", "Return one.", extra={"prompt": "def f():\\n"})
        >>> gt = Workspace({"main.py": "def f():\\n    return int('1') + 0 * 12345\\n",
        ...                 "tests.py": "def check(candidate):\\n    assert candidate() == 1\\n"})
        >>> truth_markers("humaneval", t, gt)
        ['def check(candidate)', "return int('1') + 0 * 12345"]
    """
    public = "\n".join(
        [task.description, task.formulation, json.dumps(dict(task.variables))]
        + [str(v) for v in task.extra.values()]
    )
    out: list[str] = []
    tests = gt.files.get("tests.py", "")
    for marker in ("def check(candidate)", "METADATA"):
        if marker in tests:
            out.append(marker)
    main = gt.files.get("main.py", "")
    prompt = str(task.extra.get("prompt", ""))
    body = main[len(prompt) :] if prompt and main.startswith(prompt) else main
    min_len = 16 if suite == "humaneval" else 24
    for line in body.splitlines():
        text = line.strip()
        generic = text in public or text in _GENERIC_LINES or text in out
        if len(text) >= min_len and not generic:
            out.append(text)
    return out


def _render(text: str, values: Mapping[str, str]) -> str:
    """Expand the includes of ``text`` and fill in its placeholders."""
    text = expand_includes(text)
    for key, value in values.items():
        text = text.replace(f"@@{key}@@", value)
    for key in PLACEHOLDERS:
        if f"@@{key}@@" in text:
            raise ValueError(f"placeholder @@{key}@@ has no value")
    return text


def _feedback_text(fb: SingleFeedback | None, error: str | None) -> dict[str, str]:
    """The parts of a feedback a coder could see, by section."""
    parts: dict[str, str] = {}
    if fb is not None:
        parts = {
            "execution": fb.execution or "",
            "return_checking": fb.return_checking or "",
            "code": fb.code or "",
            "details": json.dumps(dict(fb.details), default=str),
            "error_fingerprints": "\n".join(fb.error_fingerprints),
        }
    if error:
        parts["exception"] = error
    return parts


def _find(text_parts: Mapping[str, str], needle: str) -> tuple[str, str] | None:
    """``(section, surrounding text)`` of the first occurrence of ``needle``."""
    for section, text in text_parts.items():
        at = text.find(needle)
        if at >= 0:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            return section, text[start : end if end >= 0 else len(text)][:160]
    return None


def _status_mb(field_name: str) -> float | None:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``) in MiB, or ``None``."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


def _rss_mb() -> float:
    """Resident memory of this process in MiB."""
    return _status_mb("VmRSS") or 0.0


def _reset_peak_rss() -> bool:
    """Reset the kernel's high-water mark of this process's resident memory (``VmHWM``) to its
    current size; ``False`` where the kernel does not allow it (then only sampling measures)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class _Outcome:
    """One evaluation seen from the trusted process."""

    fb: SingleFeedback | None
    error: str | None
    hung: bool
    cpu_s: float = 0.0
    rss_growth_mb: float = 0.0


def _measured_call(fn: Callable[[], SingleFeedback], timeout_s: float) -> _Outcome:
    """Run ``fn`` in a daemon thread with a timeout, measuring this process's CPU time and the
    growth of its *peak* resident memory meanwhile: the kernel's high-water mark (reset first),
    with 20 ms sampling as the fallback."""
    box: dict[str, Any] = {}
    done = threading.Event()
    base_rss = peak_rss = _rss_mb()
    exact = _reset_peak_rss()
    base_cpu = _cpu_s()

    def target() -> None:
        try:
            box["fb"] = fn()
        except BaseException as exc:  # the evaluator's failure is a finding, not our crash
            box["error"] = exc
        finally:
            done.set()

    thread = threading.Thread(target=target, name="redteam-evaluate", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not done.wait(0.02):
        peak_rss = max(peak_rss, _rss_mb())
        if time.monotonic() > deadline:
            return _Outcome(None, None, True, _cpu_s() - base_cpu, peak_rss - base_rss)
    peak_rss = max(peak_rss, _rss_mb(), (_status_mb("VmHWM") or 0.0) if exact else 0.0)
    exc = box.get("error")
    error = None if exc is None else f"{type(exc).__name__}: {exc}"
    return _Outcome(box.get("fb"), error, False, _cpu_s() - base_cpu, peak_rss - base_rss)


def _told(fb: SingleFeedback | None) -> str:
    """What a coder is shown of one feedback (adaptive attacks get it)."""
    if fb is None:
        return ""
    return f"{fb.execution or ''}\n{fb.return_checking or ''}"


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """Set an environment variable for the duration (restored after)."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


@dataclass
class _Run:
    """Per-run values of one attack (marker, key, rendered code) and its canaries."""

    mark: str
    ipc_key: int
    values: dict[str, str]
    code: str
    prelude: str | None
    gt: Workspace | None
    canaries: dict[str, str] = field(default_factory=dict)  # text -> label


class RedTeam:
    """A harness session: the host bait, the suites and one evaluator per suite (reused).

    Args:
        alpha158_options: options of ``load_suite("alpha158", ...)`` (default: a 6 x 60 panel
            in a temporary cache directory).
        evaluators: suite name → evaluator to use instead of ``suite.evaluator()`` (controls).
        timeout_s: how long one evaluation may take before it counts as a hang of the
            evaluator (the trusted process).

    Example:
        >>> with RedTeam() as team:                                       # doctest: +SKIP
        ...     results = [team.run(a) for a in ATTACKS if a.quick]
    """

    def __init__(
        self,
        *,
        alpha158_options: Mapping[str, Any] | None = None,
        evaluators: Mapping[str, Any] | None = None,
        timeout_s: float = 240.0,
    ) -> None:
        self._own_cache: str | None = None
        options = dict(alpha158_options or {"n_instruments": 6, "n_days": 60})
        if "cache_dir" not in options:
            self._own_cache = tempfile.mkdtemp(prefix="costeer-redteam-cache-")
            options["cache_dir"] = self._own_cache
        self.alpha158_options = options
        self.timeout_s = timeout_s
        self.bait = HostBait()
        self._given = dict(evaluators or {})
        self._suites: dict[str, Any] = {}
        self._evaluators: dict[tuple[str, tuple[tuple[str, object], ...]], Any] = {}
        self._multi: dict[str, Any] = {}
        self._lock = threading.Lock()
        import costeer_lab

        self.project_dir = Path(costeer_lab.__file__).resolve().parent.parent
        self.dirs = watched_dirs(self.project_dir)

    # -- life cycle --------------------------------------------------------------------------
    def start(self) -> RedTeam:
        """Set up the host bait (done by ``with`` and by the first run)."""
        self.bait.start()
        return self

    def close(self) -> None:
        """Close the evaluators this session made and remove the bait."""
        for ev in [*self._multi.values(), *self._evaluators.values()]:
            close = getattr(ev, "close", None)
            if callable(close):
                with contextlib.suppress(Exception):
                    close()
        self._multi.clear()
        self._evaluators.clear()
        self.bait.close()
        if self._own_cache is not None:
            shutil.rmtree(self._own_cache, ignore_errors=True)

    def __enter__(self) -> RedTeam:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the public path ---------------------------------------------------------------------
    def suite(self, name: str) -> Any:
        """``load_suite(name)`` (built once per session)."""
        from costeer_lab.suites import load_suite

        with self._lock:
            if name not in self._suites:
                options = self.alpha158_options if name == "alpha158" else {}
                self._suites[name] = load_suite(name, **options)
            return self._suites[name]

    def evaluator(self, name: str, settings: tuple[tuple[str, object], ...] = ()) -> Any:
        """The suite's default evaluator, ``suite.evaluator()`` (built once per session), or one
        with the evaluator ``settings`` overridden (an attack's cheaper limits)."""
        if name in self._given:
            return self._given[name]
        suite = self.suite(name)
        key = (name, settings)
        with self._lock:
            if key not in self._evaluators:
                if settings:
                    from costeer_lab.settings import get_settings

                    base = get_settings().evaluator
                    changed = base.model_copy(update=dict(settings))
                    self._evaluators[key] = suite.evaluator(settings=changed)
                else:
                    self._evaluators[key] = suite.evaluator()
            return self._evaluators[key]

    def multi_evaluator(self, name: str) -> Any:
        """``MultiEvaluator(suite.evaluators())`` with its default (process) pool, one worker."""
        from costeer_lab.evaluate import MultiEvaluator

        suite = self.suite(name)
        with self._lock:
            if name not in self._multi:
                given = self._given.get(name)
                evs = [given] if given is not None else suite.evaluators()
                self._multi[name] = MultiEvaluator(evs, max_workers=1)
            return self._multi[name]

    def _evaluate(
        self, via: str, attack: Attack, task: Task, code: str, gt: Workspace | None
    ) -> _Outcome:
        ws = Workspace({"main.py": code})
        if via == "multi":
            ev = self.multi_evaluator(attack.suite)
        else:
            ev = self.evaluator(attack.suite, attack.settings)

        def call() -> SingleFeedback:
            if via == "multi":
                fb = ev.evaluate([task], [ws], [gt])[0]
                assert fb is not None
                return fb  # type: ignore[no-any-return]
            return ev.evaluate(task, ws, gt)  # type: ignore[no-any-return]

        outcome = _measured_call(call, self.timeout_s)
        if via == "multi":  # the work happened in a pool process: nothing measured here
            outcome = _Outcome(outcome.fb, outcome.error, outcome.hung)
        return outcome

    # -- one attack --------------------------------------------------------------------------
    def prepare(self, attack: Attack) -> _Run:
        """Fill in the placeholders of ``attack`` for a new run and collect its canaries."""
        self.start()
        suite = self.suite(attack.suite)
        task = suite.task(attack.task_id)
        mark = "rtmk" + secrets.token_hex(5)
        values = {
            "MARK": mark,
            "WIN": f"('won-' + {mark!r})",
            "ENTRY": str(task.extra.get("entry_point", task.name)),
            "TASK_NAME": task.name,
            "IPC_KEY": str(0x5E000000 + secrets.randbelow(1 << 24)),
            "DB": str(self.bait.db_path),
            "SOCK": str(self.bait.sock_path),
            "ABSTRACT": self.bait.abstract_name,
            "TCP_PORT": str(self.bait.tcp_port),
            "DECOY_PID": str(self.bait.decoy_pid),
            "HOST_PID": str(os.getpid()),
            "PROJECT_DIR": str(self.project_dir),
            "TZ_BAIT": str(self.bait.tz_path),
            "NOW": repr(time.time()),
            "FEEDBACK": "[]",
        }
        code = _render(attack.code, values)
        prelude = None if attack.prelude is None else _render(attack.prelude, values)
        if attack.ground_truth:
            gt: Workspace | None = Workspace(
                {name: _render(text, values) for name, text in attack.ground_truth}
            )
        else:
            gt = suite.ground_truth(task.id)
        run = _Run(mark, int(values["IPC_KEY"]), values, code, prelude, gt)
        seen = code + "\n" + (prelude or "")
        if gt is not None:
            for marker in truth_markers(attack.suite, task, gt):
                if marker not in seen:
                    label = "a hidden-test marker" if len(marker) < 22 else "a reference line"
                    run.canaries[marker] = label
        for label, value in self.bait.secrets.items():
            run.canaries[value] = f"the {label} secret"
        for canary in attack.canaries:
            run.canaries[_render(canary, values)] = "a canary of the attack"
        run.canaries["won-" + mark] = "the attack's success report"
        return run

    def _runs(
        self, attack: Attack, via: str, task: Task, run: _Run
    ) -> list[tuple[_Outcome, bool]]:
        """Every evaluation of one attack, in order: ``(outcome, is the attack's own code)``.

        The prelude first (or at the same time as the code, for ``concurrent`` attacks); then
        the code, once or — adaptive attacks — again with what the earlier attempts were told,
        until it succeeds or ``attack.attempts`` are used up."""
        if run.prelude is not None and attack.concurrent:
            return self._concurrent(attack, via, task, run)
        out: list[tuple[_Outcome, bool]] = []
        if run.prelude is not None:
            out.append((self._evaluate(via, attack, task, run.prelude, run.gt), False))
        told: list[str] = []
        for _ in range(attack.attempts):
            code = run.code
            if told:
                code = _render(attack.code, {**run.values, "FEEDBACK": repr(told)})
            outcome = self._evaluate(via, attack, task, code, run.gt)
            out.append((outcome, True))
            if outcome.fb is None or outcome.fb.final_decision is True:
                break
            told.append(_told(outcome.fb))
        return out

    def _concurrent(
        self, attack: Attack, via: str, task: Task, run: _Run
    ) -> list[tuple[_Outcome, bool]]:
        """The prelude and the code at the same time (the code starts 0.5 s later)."""
        assert run.prelude is not None
        prelude = run.prelude
        box: dict[str, _Outcome] = {}

        def first() -> None:
            box["outcome"] = self._evaluate(via, attack, task, prelude, run.gt)

        thread = threading.Thread(target=first, name="redteam-prelude", daemon=True)
        thread.start()
        time.sleep(0.5)
        second = self._evaluate(via, attack, task, run.code, run.gt)
        thread.join(self.timeout_s)
        return [(box.get("outcome", _Outcome(None, None, True)), False), (second, True)]

    def run(
        self, attack: Attack, *, via: Literal["evaluator", "multi"] = "evaluator"
    ) -> AttackResult:
        """Run ``attack`` through the public path and decide whether it was contained."""
        start = time.monotonic()
        run = self.prepare(attack)
        task = self.suite(attack.suite).task(attack.task_id)
        before = snapshot(self.dirs)
        conns = self.bait.connection_counts()
        self.bait.arm_tz_bait()
        leaks: list[str] = []
        outcomes: list[tuple[_Outcome, bool]] = []
        try:
            with _environment("OPENAI_API_KEY", self.bait.secrets["environment"]):
                outcomes = self._runs(attack, via, task, run)
            for outcome, own in outcomes:
                leaks += self._judge_outcome(attack, outcome, run, own_canaries=own)
            if attack.honest:
                leaks += _judge_honest(outcomes[-1][0])
            leaks += self._judge_host(before, conns, [run.mark], run.ipc_key)
        finally:
            clean_up(before, self.dirs, run.mark, run.ipc_key)
        last = outcomes[-1][0] if outcomes else _Outcome(None, None, False)
        fb, err = last.fb, last.error
        decision = None if fb is None else fb.final_decision
        if leaks:
            detail = "LEAKED: " + "; ".join(leaks)
        else:
            head = (fb.execution.splitlines() or [""])[0][:100] if fb is not None else err
            detail = f"contained: final_decision={decision}; {head}"
        return AttackResult(
            attack.name,
            attack.route,
            not leaks,
            detail,
            decision,
            tuple(leaks),
            time.monotonic() - start,
            max((o.cpu_s for o, _ in outcomes), default=0.0),
            max((o.rss_growth_mb for o, _ in outcomes), default=0.0),
        )

    def _judge_outcome(
        self, attack: Attack, outcome: _Outcome, run: _Run, *, own_canaries: bool
    ) -> list[str]:
        fb, error = outcome.fb, outcome.error
        leaks = []
        if outcome.hung:
            return [f"the evaluator did not return within {self.timeout_s:g} s (trusted hang)"]
        if outcome.cpu_s > TRUSTED_CPU_S or outcome.rss_growth_mb > TRUSTED_RSS_MB:
            leaks.append(
                f"the trusted process spent {outcome.cpu_s:.1f} s of CPU and its peak memory "
                f"grew by {outcome.rss_growth_mb:.0f} MiB evaluating this candidate (limits "
                f"{TRUSTED_CPU_S:g} s, {TRUSTED_RSS_MB:g} MiB)"
            )
        if fb is not None and fb.final_decision is True and not attack.honest:
            leaks.append(
                f"final_decision=True: the evaluator accepted this code for {attack.task_id}"
            )
        if error is not None and not error.startswith("GroundTruthError"):  # no verdict: fine
            leaks.append(f"the evaluator raised {error[:200]}")
        parts = _feedback_text(fb, error)
        for canary, label in run.canaries.items():
            if not own_canaries and label == "a canary of the attack":
                continue
            hit = _find(parts, canary)
            if hit is not None:
                leaks.append(f"{label} {canary[:60]!r} is in the feedback ({hit[0]}: {hit[1]!r})")
        size = sum(len(p) for p in parts.values())
        if size > MAX_FEEDBACK_CHARS:
            leaks.append(f"the feedback is {size} characters long (limit {MAX_FEEDBACK_CHARS})")
        n_fps = 0 if fb is None else len(fb.error_fingerprints)
        if n_fps > MAX_FINGERPRINTS:
            leaks.append(
                f"the feedback carries {n_fps} error fingerprints (limit {MAX_FINGERPRINTS}): "
                "each one is stored as failure memory"
            )
        return leaks

    def _judge_host(
        self, before: Any, conns: dict[str, int], marks: Sequence[str], ipc_key: int | None
    ) -> list[str]:
        leaks = []
        for mark in marks:
            leaks += leftovers(before, self.dirs, mark, ipc_key if ipc_key is not None else -1)
        leaks += self.bait.new_connections(conns)
        problem = self.bait.decoy_problem()
        if problem is not None:
            leaks.append(problem)
            self.bait.repair_decoy()
        locked = self.bait.db_lock_problem()
        if locked is not None:
            leaks.append(locked)
        opened = self.bait.tz_bait_problem()
        if opened is not None:
            leaks.append(opened)
        return leaks


def _judge_honest(outcome: _Outcome) -> list[str]:
    """An honest final run (see ``Attack.honest``) must succeed after the attack."""
    fb = outcome.fb
    if fb is not None and fb.final_decision is True:
        return []
    why = (fb.return_checking or fb.execution or "")[:160] if fb is not None else outcome.error
    return [f"an honest correct solution run after the attack was not accepted ({why!r})"]


def run_attack(
    attack: Attack,
    *,
    team: RedTeam | None = None,
    via: Literal["evaluator", "multi"] = "evaluator",
) -> AttackResult:
    """Run one attack through the public path (a temporary :class:`RedTeam` when ``team`` is
    ``None``) and decide containment.

    Example:
        >>> run_attack(ATTACKS[0]).contained                              # doctest: +SKIP
        True
    """
    if team is not None:
        return team.run(attack, via=via)
    with RedTeam() as own:
        return own.run(attack, via=via)


def run_all(
    attacks: Sequence[Attack] | None = None,
    *,
    team: RedTeam | None = None,
    progress: bool = False,
) -> list[AttackResult]:
    """Run ``attacks`` (default: every attack) one after the other, with a tqdm bar if asked.

    Example:
        >>> results = run_all([a for a in ATTACKS if a.quick])           # doctest: +SKIP
        >>> sum(r.contained for r in results) / len(results)             # doctest: +SKIP
        1.0
    """
    chosen = list(ATTACKS if attacks is None else attacks)

    def each(t: RedTeam) -> list[AttackResult]:
        if not progress:
            return [t.run(a) for a in chosen]
        from tqdm import tqdm

        return [t.run(a) for a in tqdm(chosen, desc="red team", unit="attack")]

    if team is not None:
        return each(team)
    with RedTeam() as own:
        return each(own)


def benign_controls(team: RedTeam) -> list[Attack]:
    """Correct solutions handed in like attacks: the same harness must judge them successes
    (so they come back *not* contained) — proof that containment depends on the verdict."""
    he, alpha = team.suite("humaneval"), team.suite("alpha158")
    out = []
    for tid in ("humaneval/0", "humaneval/8"):
        code = he.ground_truth(tid).files["main.py"]
        name = f"control_{tid.replace('/', '_')}"
        what = "the canonical solution: must succeed"
        out.append(Attack(name, "control", "humaneval", tid, what, code))
    code = alpha.ground_truth(A158).files["main.py"]
    what = "the reference factor: must succeed"
    out.append(
        Attack(f"control_{A158.replace('/', '_')}", "control", "alpha158", A158, what, code)
    )
    return out


def run_experiment_attacks(
    attacks: Sequence[Attack], *, team: RedTeam, out: str | os.PathLike[str]
) -> list[AttackResult]:
    """Hand ``attacks`` (humaneval, one task each) to :func:`run_experiment` through the
    ``scripted`` coder and judge every row of the results table.

    Each attack's code becomes the scripted coder's workspace for its task (one arm, no
    knowledge, one loop). Rows must all be failures with clean feedback; the host checks of
    :meth:`RedTeam.run` apply to every attack's marker.
    """
    import pandas as pd

    from costeer_lab.experiment import run_experiment

    tasks = [a.task_id for a in attacks]
    if any(a.suite != "humaneval" for a in attacks) or len(set(tasks)) != len(tasks):
        raise ValueError("run_experiment_attacks takes humaneval attacks on distinct tasks")
    start = time.monotonic()
    runs = {a.name: team.prepare(a) for a in attacks}
    limit = max(int(t.split("/")[-1]) for t in tasks) + 1
    script = {a.task_id: [{"files": {"main.py": runs[a.name].code}}] for a in attacks}
    spec = {
        "name": "redteam",
        "suite": "humaneval",
        "suite_options": {"limit": limit},
        "tasks": {"ids": tasks, "split": None},
        "seed_knowledge": {"split": None},
        "coder": {"name": "costeer_lab.testing:ScriptedCoder", "script": script},
        "arms": [{"name": "attack", "rag": "none"}],
        "max_loop": 1,
        "parallelism": {"executor": "serial"},
    }
    before = snapshot(team.dirs)
    conns = team.bait.connection_counts()
    with _environment("OPENAI_API_KEY", team.bait.secrets["environment"]):
        path = run_experiment(spec, out, progress=False, resume=False)
    table = pd.read_parquet(path)
    shared = team._judge_host(before, conns, [], None)  # listeners, decoy, database
    results = []
    for attack in attacks:
        run = runs[attack.name]
        rows = table[table["task_id"] == attack.task_id]
        leaks = [] if len(rows) else [f"no results row for {attack.task_id}"]
        if rows["success"].astype(bool).any():
            leaks.append(f"a results row has success=True for {attack.task_id}")
        if len(rows) and not rows["coder_strategy"].eq("scripted").all():
            # the attack's code never reached the evaluator: "no success" would prove nothing
            leaks.append(f"the scripted coder did not run for {attack.task_id}")
        parts = {
            col: "\n".join(rows[col].astype(str))
            for col in ("execution", "return_checking", "code_feedback")
            if col in rows
        }
        for canary, label in run.canaries.items():
            hit = _find(parts, canary)
            if hit is not None:
                leaks.append(f"{label} {canary[:60]!r} is in the results ({hit[0]}: {hit[1]!r})")
        leaks += leftovers(before, team.dirs, run.mark, run.ipc_key)
        leaks += shared
        clean_up(before, team.dirs, run.mark, run.ipc_key)
        detail = "LEAKED: " + "; ".join(leaks) if leaks else "contained: success=False"
        results.append(
            AttackResult(
                f"experiment:{attack.name}",
                attack.route,
                not leaks,
                detail,
                bool(rows["success"].astype(bool).any()) if len(rows) else None,
                tuple(leaks),
                time.monotonic() - start,
            )
        )
    return results
