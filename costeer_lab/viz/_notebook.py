"""Where a notebook of ``notebooks/`` works: the costeer_lab checkout and paths under it.

Every notebook starts with the same two lines, whether Jupyter was started from the repository
root, from ``notebooks/`` or from elsewhere::

    from costeer_lab.viz import in_repo, repo_root

    print("repo root:", repo_root())

and then writes its outputs to ``in_repo(OUT_DIR)``: an absolute ``OUT_DIR`` as given, a
relative one under the repository root (not under the kernel's working directory).

Example:
    >>> import os, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp()).resolve()
    >>> (root / "costeer_lab").mkdir(); (root / "pyproject.toml").touch()
    >>> (root / "notebooks").mkdir()
    >>> repo_root(root / "notebooks", environ={}) == root
    True
    >>> in_repo("runs/demo", root=root) == root / "runs" / "demo"
    True
    >>> in_repo(root / "elsewhere", root=pathlib.Path("/unused")) == root / "elsewhere"
    True
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from costeer_lab.errors import ConfigurationError

__all__ = ["REPO_ROOT_ENV", "in_repo", "repo_root"]

#: Environment variable naming the checkout explicitly (for a kernel started anywhere).
REPO_ROOT_ENV = "COSTEER_LAB_REPO_ROOT"


def _is_checkout(folder: Path) -> bool:
    return (folder / "pyproject.toml").is_file() and (folder / "costeer_lab").is_dir()


def repo_root(
    start: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> Path:
    """The costeer_lab checkout a notebook works in (an absolute, resolved path).

    In order: ``$COSTEER_LAB_REPO_ROOT`` when set; else the nearest folder at or above ``start``
    (default: the working directory) holding ``pyproject.toml`` and ``costeer_lab/``; else the
    checkout this package was imported from (``make setup`` installs it in editable mode).

    Args:
        start: where to start looking (default: the working directory).
        environ: the environment to read (default: ``os.environ``).

    Raises:
        ConfigurationError: none of the three is a checkout.
    """
    env = os.environ if environ is None else environ
    named = env.get(REPO_ROOT_ENV)
    if named:
        return Path(named).expanduser().resolve()
    here = Path.cwd() if start is None else Path(start)
    here = here.resolve()
    for folder in (here, *here.parents):
        if _is_checkout(folder):
            return folder
    installed = Path(__file__).resolve().parents[2]
    if _is_checkout(installed):
        return installed
    raise ConfigurationError(
        f"no costeer_lab checkout at or above {here}, and the installed package is not in one; "
        f"set {REPO_ROOT_ENV}"
    )


def in_repo(path: str | os.PathLike[str], *, root: Path | None = None) -> Path:
    """``path`` itself when absolute (``~`` expanded), else the same path under the checkout.

    Args:
        path: a notebook parameter such as ``OUT_DIR``.
        root: the checkout (default: :func:`repo_root`).
    """
    p = Path(path).expanduser()
    if p.is_absolute():
        return p
    return (repo_root() if root is None else root) / p
