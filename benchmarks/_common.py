"""Helpers shared by every benchmark: arguments, machine info, timing, results table and JSON.

A benchmark module looks like this::

    from benchmarks._common import Results, finish, parse_args, percentile, time_calls

    def main(argv: list[str] | None = None) -> int:
        args = parse_args("mything", "What it measures.", argv)
        results = Results("mything")
        base = time_calls(baseline, repeat=50)
        ours = time_calls(candidate, repeat=50)
        results.add("n=1000", "baseline_p50", percentile(base, 50) * 1e3, "ms")
        results.add("n=1000", "ours_p50", percentile(ours, 50) * 1e3, "ms")
        results.add_ratio("n=1000", "speedup_ratio", percentile(base, 50), percentile(ours, 50))
        return finish(results, args)

    if __name__ == "__main__":
        raise SystemExit(main())

JSON written with ``--json PATH`` (``-`` for stdout)::

    {"benchmark": name, "machine": {...},
     "results": [{"case": str, "metric": str, "value": float, "unit": str}, ...]}

Every benchmark includes a baseline measured in the same run and at least one metric whose name
ends in ``_ratio`` (baseline / ours, so > 1 means ours is faster), because absolute times depend
on the machine while ratios travel.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

__all__ = [
    "Result",
    "Results",
    "finish",
    "machine_info",
    "parse_args",
    "percentile",
    "time_calls",
]


def parse_args(
    name: str,
    description: str,
    argv: Sequence[str] | None = None,
    extra: Callable[[argparse.ArgumentParser], None] | None = None,
) -> argparse.Namespace:
    """Parse the standard benchmark options ``--quick``, ``--json PATH|-`` and ``--seed``.

    Args:
        name: the benchmark name (``python -m benchmarks.<name>``).
        description: one line shown by ``--help``.
        argv: arguments (default ``sys.argv[1:]``).
        extra: adds benchmark-specific options to the parser.

    Example:
        >>> parse_args("index", "Vector index speed.", ["--quick"]).quick
        True
    """
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks.{name}", description=description)
    parser.add_argument("--quick", action="store_true", help="small sizes, under a minute")
    parser.add_argument(
        "--json", metavar="PATH", default=None, help="also write results as JSON ('-': stdout)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    if extra is not None:
        extra(parser)
    return parser.parse_args(argv)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except (OSError, ValueError):
        pass
    return None


def machine_info(packages: Sequence[str] = ("numpy", "faiss-cpu")) -> dict[str, Any]:
    """CPU, memory, OS, Python and package versions of this machine (JSON-ready).

    Example:
        >>> sorted(machine_info())[:3]
        ['cpu_count', 'cpu_model', 'load_avg_1m']
    """
    versions: dict[str, str | None] = {}
    for pkg in packages:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    affinity = getattr(os, "sched_getaffinity", None)
    loadavg = getattr(os, "getloadavg", None)
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "load_avg_1m": round(loadavg()[0], 2) if loadavg else None,
        "memory_gb": _memory_gb(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "usable_cpus": len(affinity(0)) if affinity else os.cpu_count(),
        "thread_env": {
            var: os.environ.get(var)
            for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
        },
        "versions": versions,
    }


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values`` with linear interpolation.

    Example:
        >>> percentile([1.0, 2.0, 3.0, 4.0], 50)
        2.5
    """
    if not values:
        raise ValueError("percentile of an empty sequence")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be within [0, 100], got {q}")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def time_calls(fn: Callable[[], object], repeat: int, *, warmup: int = 2) -> list[float]:
    """Seconds taken by each of ``repeat`` calls of ``fn`` (after ``warmup`` untimed calls).

    Example:
        >>> len(time_calls(lambda: sum(range(10)), repeat=5))
        5
    """
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


@dataclass(frozen=True)
class Result:
    """One measured number: ``case`` (what was measured) × ``metric`` (which quantity)."""

    case: str
    metric: str
    value: float
    unit: str


class Results:
    """Collects :class:`Result` rows of one benchmark run.

    Example:
        >>> r = Results("demo")
        >>> r.add("n=10", "scan_ms", 1.5, "ms")
        >>> r.add_ratio("n=10", "speed_ratio", 3.0, 1.5)
        >>> r.value("n=10", "speed_ratio")
        2.0
    """

    def __init__(self, benchmark: str) -> None:
        self.benchmark = benchmark
        self.rows: list[Result] = []
        #: Cases that could not run here, with the reason (an optional extra not installed, …).
        self.skipped: list[dict[str, str]] = []

    def skip(self, case: str, reason: str) -> None:
        """Record that ``case`` did not run, and why (listed under ``"skipped"`` in the JSON)."""
        self.skipped.append({"case": str(case), "reason": str(reason)})

    def add(self, case: str, metric: str, value: float, unit: str) -> None:
        """Record ``value`` (converted to float) of ``metric`` for ``case``."""
        self.rows.append(Result(str(case), str(metric), float(value), str(unit)))

    def add_ratio(self, case: str, metric: str, numerator: float, denominator: float) -> None:
        """Record ``numerator / denominator`` (unit ``x``); ``metric`` must end in ``_ratio``."""
        if not metric.endswith("_ratio"):
            raise ValueError(f"ratio metric names end in '_ratio', got {metric!r}")
        value = numerator / denominator if denominator else math.inf
        self.add(case, metric, value, "x")

    def value(self, case: str, metric: str) -> float:
        """The recorded value of ``metric`` for ``case`` (KeyError if absent)."""
        for row in self.rows:
            if row.case == case and row.metric == metric:
                return row.value
        raise KeyError((case, metric))

    def to_dict(self, machine: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON document: ``{"benchmark", "machine", "results"}`` (and ``"skipped"``: the
        cases that did not run, with the reason, when there are any)."""
        doc: dict[str, Any] = {
            "benchmark": self.benchmark,
            "machine": machine if machine is not None else machine_info(),
            "results": [asdict(r) for r in self.rows],
        }
        if self.skipped:
            doc["skipped"] = list(self.skipped)
        return doc

    def table(self) -> str:
        """The rows as an aligned plain-text table (also valid Markdown)."""
        header = ("case", "metric", "value", "unit")
        body = [(r.case, r.metric, _fmt(r.value), r.unit) for r in self.rows]
        widths = [max(len(row[i]) for row in [header, *body]) for i in range(4)]

        def line(cells: Sequence[str]) -> str:
            padded = [
                c.rjust(w) if i == 2 else c.ljust(w)
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            ]
            return "| " + " | ".join(padded) + " |"

        rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        return "\n".join([line(header), rule, *(line(row) for row in body)])

    def print_table(self, file: TextIO | None = None) -> None:
        """Print :meth:`table` under a title line."""
        out = file if file is not None else sys.stdout
        print(f"benchmark: {self.benchmark}", file=out)
        print(self.table(), file=out)
        for s in self.skipped:
            print(f"skipped {s['case']}: {s['reason']}", file=out)

    def write_json(self, path: str | Path, machine: dict[str, Any] | None = None) -> None:
        """Write :meth:`to_dict` to ``path`` (``"-"``: stdout), creating its directory; the
        file appears whole or not at all (temporary file, then rename)."""
        text = json.dumps(self.to_dict(machine), indent=2, allow_nan=False)
        if str(path) == "-":
            sys.stdout.write(text + "\n")
            return
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        partial.write_text(text + "\n")
        os.replace(partial, target)


def _fmt(value: float) -> str:
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:.3e}"


def finish(results: Results, args: argparse.Namespace) -> int:
    """Print the table (to stderr when JSON goes to stdout), write JSON if asked; return 0."""
    machine = machine_info()
    to_stdout = args.json == "-"
    out = sys.stderr if to_stdout else sys.stdout
    results.print_table(out)
    print(
        f"machine: {machine['cpu_model']}, {machine['usable_cpus']} usable CPUs, "
        f"{machine['memory_gb']} GB, Python {machine['python']}, "
        f"load average (1 min) at the end {machine['load_avg_1m']}",
        file=out,
    )
    if args.json is not None:
        results.write_json(args.json, machine)
    return 0
