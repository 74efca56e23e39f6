"""Every command the README shows works verbatim on the demo it ships with.

The commands are read from README.md: every line of its ``bash`` blocks, and every inline code span
that starts a command (``costeer-lab …``, ``make …``, ``python …``, ``.venv/bin/python …``). Each
one is either run here — verbatim, in a real subprocess, in a temporary folder holding a smaller
run of the demo spec (``data/specs/demo.yaml`` with fewer seeds, tasks and days, but the same name,
arms and stages, so every path of the README is the same) — or listed in :data:`SKIP` with the
reason. A new README command that is neither fails
:func:`test_every_readme_command_is_run_or_skipped`.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
README = REPO_ROOT / "README.md"

#: README commands not run here, and why.
SKIP: dict[str, str] = {
    "make run": "sets up .venv and runs the full demo (minutes); its commands are run below",
    "make test": "the whole check suite (CI runs it; minutes to an hour)",
    "make setup-llm": "compiles llama-cpp-python (minutes) and needs the local model files",
    "make test-fast": "lint and the fast tests (minutes; a test suite cannot run itself)",
    "make mutation": "mutation testing (about an hour on 2 cores)",
    "python tools/bad_inputs.py": "regenerates docs/bad_inputs.md from every bad input (minutes)",
    ".venv/bin/python tools/browser_check.py --out runs/browser-check": (
        "needs Chromium and JupyterLab (tests/browser runs it when Chromium is installed)"
    ),
    "python -m benchmarks.integrity": (
        "73 sandbox attacks, run twice (root and a real unprivileged user it creates; minutes)"
    ),
    "costeer-lab docs ingest\\|query": "a table cell naming two subcommands, not a command line",
    "python -m benchmarks.NAME [--quick] [--json PATH\\|-]": "a pattern, not a command line",
}

_FENCE = re.compile(r"^```(\w*)\s*$")
_INLINE = re.compile(r"`((?:costeer-lab|make|python3?|\.venv/bin/python) [^`]+)`")


def readme_commands(text: str) -> list[str]:
    """The commands of a README: lines of ``bash``/``sh``/``console`` blocks (comments and a
    ``$`` prompt removed) and inline spans starting a command, in order, without repeats."""
    found: list[str] = []
    lang: str | None = None
    for line in text.splitlines():
        fence = _FENCE.match(line.strip())
        if fence:
            lang = None if lang is not None else fence.group(1)
            continue
        if lang is not None:
            if lang in ("bash", "sh", "shell", "console"):
                words = shlex.split(line.strip().removeprefix("$ "), comments=True)
                if words:
                    found.append(shlex.join(words))
            continue
        found += [m.group(1).strip() for m in _INLINE.finditer(line)]
    return list(dict.fromkeys(found))


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))
RUN = [c for c in COMMANDS if c not in SKIP]
Completed = subprocess.CompletedProcess[str]


def _small_demo_spec() -> dict[str, Any]:
    """The shipped demo spec, cheaper: one seed, two formula families per stage, fewer days and
    instruments, one attempt less. Name, arms and stages (hence every folder) are unchanged."""
    spec: dict[str, Any] = yaml.safe_load((REPO_ROOT / "data/specs/demo.yaml").read_text("utf-8"))
    spec["seeds"] = [0]
    spec["max_loop"] = 2
    spec["suite_options"] = {**spec["suite_options"], "n_instruments": 8, "n_days": 120}
    for stage, window in zip(spec["stages"], ("10", "60"), strict=True):
        stage["tasks"]["match"] = f"^alpha158/(STD|MIN){window}$"
    return spec


def _program(command: str) -> list[str]:
    """The argv of a README command: ``costeer-lab`` is the console script beside this Python."""
    words = shlex.split(command)
    if words[0] == "costeer-lab":
        script = Path(sys.executable).parent / "costeer-lab"
        head = [str(script)] if script.is_file() else [sys.executable, "-m", "costeer_lab"]
        return [*head, *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    raise AssertionError(f"no way to run README command {command!r}; add it to SKIP with why")


@pytest.fixture(scope="module")
def ran(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, Completed]]:
    """Run every README command in README order in one folder (a command may need the run of an
    earlier one, as the reader's would)."""
    cwd = tmp_path_factory.mktemp("readme")
    spec_file = cwd / "data" / "specs" / "demo.yaml"
    spec_file.parent.mkdir(parents=True)
    spec_file.write_text(yaml.safe_dump(_small_demo_spec(), sort_keys=False), encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),  # this checkout's package, also for the console script
        "COSTEER_LAB_CACHE_DIR": str(cwd / "cache"),
    }
    done: dict[str, Completed] = {}
    for command in RUN:
        done[command] = subprocess.run(
            _program(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=900
        )
    yield done


def test_the_readme_shows_the_commands_this_test_knows() -> None:
    assert "costeer-lab run data/specs/demo.yaml --out runs/demo" in COMMANDS
    assert any(c.startswith("costeer-lab kb stats runs/demo/kb/") for c in COMMANDS)
    assert any(c.startswith("costeer-lab kb query runs/demo/kb/") for c in COMMANDS)


def test_every_readme_command_is_run_or_skipped() -> None:
    unknown = [c for c in RUN if shlex.split(c)[0] not in ("costeer-lab", "python")]
    assert not unknown, (
        f"README commands neither run here nor in SKIP (with the reason): {unknown}"
    )
    stale = [c for c in SKIP if c not in COMMANDS]
    assert not stale, f"SKIP lists commands the README no longer shows: {stale}"


@pytest.mark.parametrize("command", RUN)
def test_readme_command_works_verbatim(command: str, ran: dict[str, Completed]) -> None:
    proc = ran[command]
    assert proc.returncode == 0, f"{command}\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), f"{command}: no output"
    assert "Traceback" not in proc.stderr


def test_readme_kb_commands_read_the_demo_stages(
    ran: dict[str, Completed],
) -> None:
    stats = next(p for c, p in ran.items() if c.startswith("costeer-lab kb stats"))
    counts = dict(line.split() for line in stats.stdout.splitlines())
    assert int(counts["nodes.task_description"]) > 0 and int(counts["attempts.v2"]) > 0
    query = next(p for c, p in ran.items() if c.startswith("costeer-lab kb query"))
    assert "component" in query.stdout and "no matching knowledge" not in query.stdout
