"""Fixtures that execute the notebooks in notebooks/ with a real Jupyter kernel (nbclient).

The kernel is this interpreter (``sys.executable``) through a kernelspec written into a temporary
directory, so a ``python3`` kernelspec installed elsewhere on the machine can never be picked up.
Every notebook parameter comes from ``COSTEER_LAB_NB_*`` environment variables passed to the kernel
(a tiny experiment: 3 tasks, 1 seed, 2 steps, thread executor); all outputs go to temporary
directories.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
KERNEL_NAME = "costeer-lab-nbtest"
CELL_TIMEOUT_S = 300

#: The tiny experiment every executed notebook runs or reads.
TINY_PARAMS: dict[str, str] = {
    "COSTEER_LAB_NB_TASK_LIMIT": "3",
    "COSTEER_LAB_NB_SEEDS": "0",
    "COSTEER_LAB_NB_MAX_LOOP": "2",
    "COSTEER_LAB_NB_EXECUTOR": "thread",
    "COSTEER_LAB_NB_WORKERS": "2",
    "COSTEER_LAB_NB_N_INSTRUMENTS": "10",
    "COSTEER_LAB_NB_N_DAYS": "120",
    "COSTEER_LAB_NB_N_BOOT": "50",
    "COSTEER_LAB_NB_PROGRESS": "0",
}

RunNotebook = Callable[..., nbformat.NotebookNode]


@dataclass(frozen=True)
class TinyRun:
    """The experiment notebook 02 ran once for the whole session."""

    out_dir: Path
    notebook: nbformat.NotebookNode
    cwd: Path


@pytest.fixture(scope="session")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kernels/ directory holding one kernelspec that runs ``sys.executable``."""
    root = tmp_path_factory.mktemp("kernels")
    spec_dir = root / KERNEL_NAME
    spec_dir.mkdir()
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "costeer_lab notebook tests",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the synthetic alpha158 panel is generated (shared by every notebook run)."""
    return tmp_path_factory.mktemp("cache")


def kernel_env(cache: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """The test process's environment without notebook parameters, plus ``extra``.

    The kernel imports ``costeer_lab`` from this checkout (first on ``PYTHONPATH``), the one
    under test, whichever checkout the interpreter has installed.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("COSTEER_LAB_NB_") and k not in ("COSTEER_LAB_REPO_ROOT", "MPLBACKEND")
    }
    env.update(TINY_PARAMS)
    env["COSTEER_LAB_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def notebook_params(*, repo_root: bool = True, **params: str | Path) -> dict[str, str]:
    """The kernel environment of one notebook run: ``COSTEER_LAB_NB_<NAME>`` for each parameter,
    and ``COSTEER_LAB_REPO_ROOT`` (this checkout) unless ``repo_root`` is false, so that the
    notebook must find the checkout from its working directory.

    Example: ``notebook_params(OUT_DIR=out)`` sets ``COSTEER_LAB_NB_OUT_DIR``.
    """
    env = {f"COSTEER_LAB_NB_{name}": str(value) for name, value in params.items()}
    if repo_root:
        env["COSTEER_LAB_REPO_ROOT"] = str(REPO_ROOT)
    return env


@pytest.fixture(scope="session")
def run_notebook(kernel_dir: Path, cache_dir: Path) -> RunNotebook:
    """``run_notebook(name, cwd=..., env={...})`` executes ``notebooks/<name>`` in a fresh kernel
    started in ``cwd`` and returns the executed notebook (the file on disk is not touched).

    A failing cell raises ``nbclient.exceptions.CellExecutionError`` with its traceback.
    """
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from traitlets import default

    class IsolatedKernelManager(AsyncKernelManager):
        """Finds kernelspecs only in ``kernel_dir``."""

        @default("kernel_spec_manager")
        def _only_test_kernels(self) -> KernelSpecManager:
            return KernelSpecManager(kernel_dirs=[str(kernel_dir)])

    def run(name: str, *, cwd: Path, env: Mapping[str, str]) -> nbformat.NotebookNode:
        nb: nbformat.NotebookNode = nbformat.read(  # type: ignore[no-untyped-call]
            NOTEBOOKS_DIR / name, as_version=4
        )
        # the client creates (and therefore shuts down and closes) its own kernel manager
        client = NotebookClient(
            nb,
            kernel_name=KERNEL_NAME,
            kernel_manager_class=IsolatedKernelManager,
            timeout=CELL_TIMEOUT_S,
            resources={"metadata": {"path": str(cwd)}},
        )
        client.execute(env=kernel_env(cache_dir, env))
        return nb

    return run


@pytest.fixture(scope="session")
def tiny_run(run_notebook: RunNotebook, tmp_path_factory: pytest.TempPathFactory) -> TinyRun:
    """Notebook 02 executed once (3 arms × 1 seed × 3 tasks × 2 steps) in an empty directory."""
    cwd = tmp_path_factory.mktemp("nb02-cwd")
    out = tmp_path_factory.mktemp("nb-run") / "run"
    nb = run_notebook("02_evolution_experiment.ipynb", cwd=cwd, env=notebook_params(OUT_DIR=out))
    return TinyRun(out_dir=out, notebook=nb, cwd=cwd)
