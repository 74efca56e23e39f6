"""Evaluation integrity: how many red-team attacks the evaluators contain.

Every attack of :data:`costeer_lab.testing.ATTACKS` (hostile candidate programs that forge a
verdict, read the ground truth, make the feedback leak it, harm the host or escape resource
limits) is run through the public path — the default evaluator of its suite — by
:class:`costeer_lab.testing.RedTeam`, which decides containment (verdict, feedback, leftovers
on the host, blocked host writers; see :mod:`costeer_lab.testing._redteam`).

One row per attack (name, route, contained/LEAKED, what leaked), then the metrics:
``contained_ratio`` overall and per route; the baseline measured in the same run is the same
attacks against a toy evaluator that accepts everything (its ratio must be 0: the harness sees
a leak when there is one), and ``control_success_ratio`` is the share of benign correct
solutions judged successes by the real evaluators (must be 1).

Run: ``python -m benchmarks.integrity [--quick] [--json PATH|-] [--attacks a,b]``.
``--quick`` runs the representative subset (``Attack.quick``), under a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

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


def _extra(p: argparse.ArgumentParser) -> None:
    p.add_argument("--attacks", default=None, help="comma-separated attack names to run")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _choose(args: argparse.Namespace) -> list[Attack]:
    if args.attacks:
        wanted = [n.strip() for n in args.attacks.split(",") if n.strip()]
        by_name = {a.name: a for a in ATTACKS}
        unknown = [n for n in wanted if n not in by_name]
        if unknown:
            raise SystemExit(f"unknown attack(s) {unknown}; known: {sorted(by_name)}")
        return [by_name[n] for n in wanted]
    return [a for a in ATTACKS if a.quick] if args.quick else list(ATTACKS)


def attack_table(rows: Sequence[AttackResult], width: int = 110) -> str:
    """One line per attack: name, route, contained/LEAKED and the (shortened) detail."""
    header = ("attack", "route", "status", "detail")
    body = [
        (
            r.name,
            r.route,
            "contained" if r.contained else "LEAKED",
            r.detail if len(r.detail) <= width else r.detail[: width - 1] + "…",
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(3)]
    lines = []
    for row in [header, *body]:
        cells = [c.ljust(w) for c, w in zip(row[:3], widths, strict=True)]
        lines.append("| " + " | ".join([*cells, row[3]]) + " |")
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|---|")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args("integrity", __doc__.splitlines()[0], argv, extra=_extra)
    attacks = _choose(args)
    results = Results("integrity")
    start = time.perf_counter()
    with RedTeam() as team:
        rows = run_all(attacks, team=team, progress=not args.no_progress and sys.stderr.isatty())
        controls = [team.run(c) for c in benign_controls(team)]
    total = time.perf_counter() - start
    toy = AlwaysPassEvaluator()
    with RedTeam(evaluators={"humaneval": toy, "alpha158": toy}) as leaky:
        baseline = [leaky.run(a) for a in attacks]

    for r in rows:
        results.add(f"{r.route}/{r.name}", "contained", float(r.contained), "bool")
    for route in dict.fromkeys(r.route for r in rows):
        mine = [r for r in rows if r.route == route]
        results.add_ratio(route, "contained_ratio", sum(r.contained for r in mine), len(mine))
    results.add_ratio("all attacks", "contained_ratio", sum(r.contained for r in rows), len(rows))
    results.add_ratio(
        "always-pass evaluator (baseline)",
        "contained_ratio",
        sum(r.contained for r in baseline),
        len(baseline),
    )
    ok = sum(r.final_decision is True for r in controls)
    results.add_ratio("benign controls", "control_success_ratio", ok, len(controls))
    results.add("all attacks", "run_total", total, "s")

    to_stdout = args.json == "-"
    out = sys.stderr if to_stdout else sys.stdout
    print(attack_table(rows), file=out)
    summary = Results("integrity")
    summary.rows = [r for r in results.rows if r.metric != "contained"]
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
