"""The layer contracts refuse injected imports (``tools/injected_imports.py`` on a copy)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_injected_imports_are_refused_and_the_tree_is_left_alone() -> None:
    before = (REPO_ROOT / "costeer_lab" / "sandbox" / "_limits.py").read_bytes()
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "injected_imports.py"), "--rows", "3"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| `")]
    assert len(rows) == 3 and all(line.endswith("| yes |") for line in rows)
    sandbox, memory, index = rows
    assert "`import costeer_lab.store`" in sandbox and "sandbox knows nothing" in sandbox
    assert "`import costeer_lab.context`" in memory and "memory, docs and context" in memory
    assert "`import costeer_lab.embed`" in index and "index, embed and sandbox" in index
    assert (REPO_ROOT / "costeer_lab" / "sandbox" / "_limits.py").read_bytes() == before
