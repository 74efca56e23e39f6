"""Every bad input of the CLI, specs, task files and stores ends in one clear error, a non-zero
exit, and an untouched workspace (the cases: ``costeer_lab.testing.BAD_INPUTS``)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.cli import main
from costeer_lab.experiment import load_results
from costeer_lab.settings import get_settings
from costeer_lab.testing import BAD_INPUTS, BadInput, build_workspace, snapshot
from tests._processes import default_sigint

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield build_workspace(tmp_path_factory.mktemp("bad-inputs"))


def _cli(
    argv: list[str], cwd: Path, timeout: float = 300, extra_env: tuple[tuple[str, str], ...] = ()
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **dict(extra_env)}
    return subprocess.run(
        [sys.executable, "-m", "costeer_lab", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_catalogue_has_at_least_160_distinct_inputs_in_every_area() -> None:
    assert len(BAD_INPUTS) >= 160  # 77 before issue 28's second round, which asked for 45 more
    assert len({c.name for c in BAD_INPUTS}) == len(BAD_INPUTS)
    assert len({c.argv for c in BAD_INPUTS}) == len(BAD_INPUTS)
    assert {c.area for c in BAD_INPUTS} >= {
        "cli",
        "spec",
        "task file",
        "run output",
        "report",
        "store",
    }


@pytest.mark.parametrize("case", BAD_INPUTS, ids=lambda c: c.name)
def test_bad_input_ends_in_one_clear_error_and_writes_nothing(
    case: BadInput,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(workspace)
    for name, value in case.env:
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    before = snapshot(workspace)
    try:
        code = main(list(case.argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
    err = capsys.readouterr().err
    assert code == case.exit_code != 0
    assert case.expect in err, err
    assert "Traceback" not in err
    assert len([ln for ln in err.splitlines() if ln.startswith("costeer-lab")]) == 1, err
    if case.area != "cli":  # argparse prints its usage first; everything else is one line
        assert len(err.strip().splitlines()) == 1, err
    assert snapshot(workspace) == before  # nothing created, changed or removed


@pytest.mark.parametrize(
    "name", ["spec-coder_typo", "kb-missing", "report-corrupt", "out-is-file", "cli-k-zero"]
)
def test_the_real_command_exits_non_zero_with_the_message(name: str, workspace: Path) -> None:
    case = next(c for c in BAD_INPUTS if c.name == name)
    before = snapshot(workspace)
    proc = _cli(list(case.argv), workspace, extra_env=case.env)
    assert proc.returncode == case.exit_code
    assert case.expect in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""
    assert snapshot(workspace) == before


def test_a_failed_start_leaves_the_folder_free_for_the_corrected_run(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    out = tmp_path / "run"
    assert main(["run", "specs/coder_typo.yaml", "--out", str(out), "--quiet"]) == 2
    assert not out.exists()  # the configuration error was not recorded as failed attempts
    fixed = (workspace / "specs" / "coder_typo.yaml").read_text(encoding="utf-8")
    (tmp_path / "fixed.yaml").write_text(fixed.replace("reuze", "reuse"), encoding="utf-8")
    assert main(["run", str(tmp_path / "fixed.yaml"), "--out", str(out), "--quiet"]) == 0
    results = load_results(out)
    assert set(results["arm"]) == {"none", "v1", "v2"} and len(results) > 0
    # output files get the usual mode (0666 minus the umask), not mkstemp's 0600
    umask = os.umask(0o022)
    os.umask(umask)
    for f in (out / "results.parquet", out / "spec.json"):
        assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~umask


def test_ctrl_c_stops_a_run_with_one_line_and_the_rerun_resumes(
    workspace: Path, tmp_path: Path
) -> None:
    spec = (workspace / "specs" / "good.yaml").read_text(encoding="utf-8")
    spec = spec.replace("limit: 4", "limit: 40").replace("max_loop: 1", "max_loop: 3")
    (tmp_path / "long.yaml").write_text(spec, encoding="utf-8")
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "costeer_lab", "run", "long.yaml", "--out", "run", "--quiet"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,  # as from a terminal, even under `make test &`
    )
    deadline = time.monotonic() + 120
    while not list((out / "kb").glob("v1-seed0.db")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert "costeer-lab: interrupted (rerun the same command to resume)" in err
    assert "Traceback" not in err
    rerun = _cli(["run", "long.yaml", "--out", "run", "--quiet"], tmp_path, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert set(load_results(out)["arm"]) == {"none", "v1", "v2"}
