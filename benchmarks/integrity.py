"""Evaluation integrity: how many red-team attacks the evaluators contain, as root and rootless.

Every attack of :data:`costeer_lab.testing.ATTACKS` (hostile candidate programs that forge a
verdict, read the ground truth, make the feedback leak it, harm the host, escape resource limits,
exhaust or crash the trusted process, or reach another run) is run through the public path — the
default evaluator of its suite — by :class:`costeer_lab.testing.RedTeam`, which decides
containment (verdict, feedback, leftovers on the host, blocked host writers, the trusted
process's CPU time and peak memory; see :mod:`costeer_lab.testing._redteam`).

Two modes: ``root`` (this process, when it is root: the sandbox gives each run its own uid) and
``rootless`` (the same attacks in a child process run as a real unprivileged system user,
``costeer-redteam``, through :func:`costeer_lab.testing._unprivileged.run_as_unprivileged`: the
sandbox then isolates with user namespaces only). Not started as root, only the ``rootless``
mode runs (here). ``--as-this-user`` runs one mode here, named after this process's uid.

One row per attack and mode (``<mode>/<route>/<name>``: ``contained``, ``trusted_cpu_s``,
``trusted_peak_rss_mb``), then the metrics: ``contained_ratio`` per mode and route, per mode and
overall (``all attacks``); the budget of the trusted process (``trusted budget``); the baseline,
measured in the same run, is the same attacks against a toy evaluator that accepts everything
(its ratio must be 0: the harness sees a leak when there is one; ``honest`` attacks, whose last
run must succeed, are left out of it), and ``control_success_ratio`` is the share of benign
correct solutions judged successes by the real evaluators (must be 1), per mode.

Run: ``python -m benchmarks.integrity [--quick] [--json PATH|-] [--attacks a,b]
[--modes root,rootless] [--as-this-user]``. ``--quick`` runs the representative subset
(``Attack.quick``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import Results, machine_info, parse_args
from costeer_lab.testing import (
    ATTACKS,
    AlwaysPassEvaluator,
    Attack,
    AttackResult,
    RedTeam,
    benign_controls,
    run_all,
)
from costeer_lab.testing._redteam import TRUSTED_CPU_S, TRUSTED_RSS_MB

MODES = ("root", "rootless")
#: Longest the rootless child may take (seconds).
_CHILD_TIMEOUT_S = 3600.0


def _extra(p: argparse.ArgumentParser) -> None:
    p.add_argument("--attacks", default=None, help="comma-separated attack names to run")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--modes", default="root,rootless", help="modes to run (root, rootless; default both)"
    )
    p.add_argument(
        "--as-this-user",
        action="store_true",
        help="run one mode here as the current user (no child process)",
    )
    p.add_argument("--results-out", default=None, help=argparse.SUPPRESS)  # child -> parent


def _choose(args: argparse.Namespace) -> list[Attack]:
    if args.attacks:
        wanted = [n.strip() for n in args.attacks.split(",") if n.strip()]
        by_name = {a.name: a for a in ATTACKS}
        unknown = [n for n in wanted if n not in by_name]
        if unknown:
            raise SystemExit(f"unknown attack(s) {unknown}; known: {sorted(by_name)}")
        return [by_name[n] for n in wanted]
    return [a for a in ATTACKS if a.quick] if args.quick else list(ATTACKS)


def this_mode() -> str:
    """``"root"`` when this process is root, else ``"rootless"``."""
    return "root" if os.geteuid() == 0 else "rootless"


def attack_table(rows: Sequence[tuple[str, AttackResult]], width: int = 100) -> str:
    """One line per attack and mode: mode, name, route, contained/LEAKED, the trusted process's
    CPU seconds and peak memory growth (MiB), and the (shortened) detail."""
    header = ("mode", "attack", "route", "status", "cpu s", "rss MiB", "detail")
    body = [
        (
            mode,
            r.name,
            r.route,
            "contained" if r.contained else "LEAKED",
            f"{r.trusted_cpu_s:.2f}",
            f"{r.trusted_peak_rss_mb:.0f}",
            r.detail if len(r.detail) <= width else r.detail[: width - 1] + "…",
        )
        for mode, r in rows
    ]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(6)]
    lines = []
    for row in [header, *body]:
        cells = [c.ljust(w) for c, w in zip(row[:6], widths, strict=True)]
        lines.append("| " + " | ".join([*cells, row[6]]) + " |")
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|---|")
    return "\n".join(lines)


def run_here(
    attacks: Sequence[Attack], *, progress: bool
) -> tuple[list[AttackResult], list[AttackResult], float]:
    """The attacks and the benign controls in this process: ``(attacks, controls, seconds)``."""
    start = time.perf_counter()
    with RedTeam() as team:
        rows = run_all(attacks, team=team, progress=progress)
        controls = [team.run(c) for c in benign_controls(team)]
    return rows, controls, time.perf_counter() - start


def _result(d: dict[str, Any]) -> AttackResult:
    """An :class:`AttackResult` from its ``to_dict``."""
    return AttackResult(
        d["name"],
        d["route"],
        bool(d["contained"]),
        d["detail"],
        d["final_decision"],
        tuple(d["leaks"]),
        float(d["duration_s"]),
        float(d["trusted_cpu_s"]),
        float(d["trusted_peak_rss_mb"]),
    )


def run_rootless_child(
    attacks: Sequence[Attack],
) -> tuple[list[AttackResult], list[AttackResult], float]:
    """The attacks and controls in a child process run as the unprivileged red-team user."""
    from costeer_lab.testing._unprivileged import run_as_unprivileged

    with tempfile.TemporaryDirectory(prefix="costeer-integrity-") as home:
        out = Path(home) / "results.json"
        argv = [sys.executable, "-m", "benchmarks.integrity", "--as-this-user", "--no-progress"]
        argv += ["--attacks", ",".join(a.name for a in attacks), "--results-out", str(out)]
        checkout = Path(__file__).resolve().parent.parent
        env = {k: v for k, v in os.environ.items() if k.startswith("COSTEER_LAB_")}
        done = run_as_unprivileged(
            argv, cwd=checkout, extra_env=env, timeout_s=_CHILD_TIMEOUT_S, home=home
        )
        if done.returncode != 0 or not out.is_file():
            raise RuntimeError(
                f"the rootless pass failed (exit {done.returncode}):\n{done.stderr[-4000:]}"
            )
        doc = json.loads(out.read_text())
    attack_rows = [_result(d) for d in doc["attacks"]]
    controls = [_result(d) for d in doc["controls"]]
    return attack_rows, controls, float(doc["seconds"])


def _add_rows(results: Results, mode: str, rows: Sequence[AttackResult]) -> None:
    for r in rows:
        case = f"{mode}/{r.route}/{r.name}"
        results.add(case, "contained", float(r.contained), "bool")
        results.add(case, "trusted_cpu_s", r.trusted_cpu_s, "s")
        results.add(case, "trusted_peak_rss_mb", r.trusted_peak_rss_mb, "MiB")
    for route in dict.fromkeys(r.route for r in rows):
        mine = [r for r in rows if r.route == route]
        n_ok = sum(r.contained for r in mine)
        results.add_ratio(f"{mode}/{route}", "contained_ratio", n_ok, len(mine))
    n_ok = sum(r.contained for r in rows)
    results.add_ratio(f"{mode}/all attacks", "contained_ratio", n_ok, len(rows))


def _baseline(attacks: Sequence[Attack]) -> list[AttackResult]:
    """The attacks (honest ones left out) against an evaluator that accepts everything."""
    toy = AlwaysPassEvaluator()
    with RedTeam(evaluators={"humaneval": toy, "alpha158": toy}) as leaky:
        return [leaky.run(a) for a in attacks if not a.honest]


def _modes(args: argparse.Namespace) -> list[str]:
    if args.as_this_user:
        return [this_mode()]
    wanted = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in wanted if m not in MODES]
    if unknown:
        raise SystemExit(f"unknown mode(s) {unknown}; known: {list(MODES)}")
    if os.geteuid() != 0:
        return ["rootless"] if "rootless" in wanted else []
    return wanted


def main(argv: list[str] | None = None) -> int:
    args = parse_args("integrity", __doc__.splitlines()[0], argv, extra=_extra)
    attacks = _choose(args)
    progress = not args.no_progress and sys.stderr.isatty()
    runs: dict[str, tuple[list[AttackResult], list[AttackResult], float]] = {}
    for mode in _modes(args):
        here = args.as_this_user or mode == this_mode()
        runs[mode] = run_here(attacks, progress=progress) if here else run_rootless_child(attacks)
    if args.results_out:
        rows, controls, seconds = runs[this_mode()]
        doc = {
            "attacks": [r.to_dict() for r in rows],
            "controls": [r.to_dict() for r in controls],
            "seconds": seconds,
        }
        Path(args.results_out).write_text(json.dumps(doc))
        return 0
    baseline = _baseline(attacks)

    results = Results("integrity")
    for mode, (rows, _, _) in runs.items():
        _add_rows(results, mode, rows)
    every = [r for rows, _, _ in runs.values() for r in rows]
    results.add_ratio(
        "all attacks", "contained_ratio", sum(r.contained for r in every), len(every)
    )
    n_ok = sum(r.contained for r in baseline)
    results.add_ratio("always-pass evaluator (baseline)", "contained_ratio", n_ok, len(baseline))
    for mode, (_, controls, _) in runs.items():
        ok = sum(r.final_decision is True for r in controls)
        results.add_ratio(f"{mode}/benign controls", "control_success_ratio", ok, len(controls))
    results.add("trusted budget", "trusted_cpu_s_limit", TRUSTED_CPU_S, "s")
    results.add("trusted budget", "trusted_peak_rss_mb_limit", TRUSTED_RSS_MB, "MiB")
    for mode, (_, _, seconds) in runs.items():
        results.add(f"{mode}/all attacks", "run_total", seconds, "s")

    to_stdout = args.json == "-"
    out = sys.stderr if to_stdout else sys.stdout
    print(attack_table([(m, r) for m, (rows, _, _) in runs.items() for r in rows]), file=out)
    summary = Results("integrity")
    per_attack = ("contained", "trusted_cpu_s", "trusted_peak_rss_mb")
    summary.rows = [r for r in results.rows if r.metric not in per_attack]
    summary.print_table(out)
    machine = machine_info()
    print(
        f"machine: {machine['cpu_model']}, {machine['usable_cpus']} usable CPUs, "
        f"Python {machine['python']}, load average (1 min) {machine['load_avg_1m']}",
        file=out,
    )
    if args.json is not None:
        results.write_json(args.json, machine)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
