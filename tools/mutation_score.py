"""Mutation score per module, from the results mutmut left in ``mutants/`` (``make mutation``).

Usage: ``python tools/mutation_score.py costeer_lab._fingerprint costeer_lab.store._codec ...``

A mutant counts as detected when a test failed (``killed``), hung past mutmut's limit
(``timeout``) or crashed; as undetected when every test passed (``survived``) or no test ran
the mutated function (``no tests``). Mutants not run (``not checked``, ``skipped``) are left out.
Exits 1 when a module scores below ``--min`` (default 80 %).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from pathlib import Path

DETECTED = {"killed", "timeout", "segfault", "caught by type check", "suspicious"}
UNDETECTED = {"survived", "no tests"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="+", help="dotted module names, e.g. costeer_lab.x")
    parser.add_argument("--min", type=float, default=80.0, help="lowest passing score (%%)")
    args = parser.parse_args(argv)
    mutmut = Path(sys.executable).with_name("mutmut")
    out = subprocess.run(
        [str(mutmut), "results", "--all", "true"], capture_output=True, text=True, check=True
    ).stdout
    counts: dict[str, Counter[str]] = {m: Counter() for m in args.modules}
    survivors: dict[str, list[str]] = {m: [] for m in args.modules}
    for line in out.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if not sep:
            continue
        module = name.split(".x", 1)[0].split(".x_", 1)[0]
        # a package's submodules count for the package (costeer_lab._fingerprint._mask)
        module = next((m for m in counts if module.startswith(m + ".")), module)
        if module in counts:
            counts[module][status] += 1
            if status in UNDETECTED:
                survivors[module].append(f"{name} ({status})")
    failed = False
    print(f"{'module':45} {'mutants':>8} {'killed':>7} {'survived':>9} {'score':>7}")
    for module, c in counts.items():
        detected = sum(c[s] for s in DETECTED)
        undetected = sum(c[s] for s in UNDETECTED)
        total = detected + undetected
        score = 100.0 * detected / total if total else float("nan")
        failed |= not total or score < args.min
        print(f"{module:45} {total:8d} {detected:7d} {undetected:9d} {score:6.1f}%")
    for names in survivors.values():
        for name in names:
            print(f"  surviving: {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
