"""``repo_root`` and ``in_repo``: where a notebook of ``notebooks/`` finds the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.errors import ConfigurationError
from costeer_lab.viz import REPO_ROOT_ENV, in_repo, repo_root

REPO_ROOT = Path(__file__).resolve().parents[2]


def _checkout(root: Path) -> Path:
    (root / "costeer_lab").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\n", encoding="utf-8")
    (root / "notebooks").mkdir()
    return root.resolve()


def test_the_checkout_is_found_from_its_root_and_from_below(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "clone")
    assert repo_root(root, environ={}) == root
    assert repo_root(root / "notebooks", environ={}) == root


def test_the_variable_wins_over_the_working_directory(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "clone")
    other = _checkout(tmp_path / "other")
    assert repo_root(other / "notebooks", environ={REPO_ROOT_ENV: str(root)}) == root


def test_outside_a_checkout_the_installed_one_is_used(tmp_path: Path) -> None:
    # the package under test lives in this repository's costeer_lab/
    assert repo_root(tmp_path, environ={}) == REPO_ROOT


def test_no_checkout_anywhere_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import costeer_lab.viz._notebook as notebook

    # a package installed outside any checkout (as from a wheel)
    monkeypatch.setattr(
        notebook, "__file__", str(tmp_path / "site" / "costeer_lab" / "viz" / "x.py")
    )
    with pytest.raises(ConfigurationError, match=f"set {REPO_ROOT_ENV}"):
        repo_root(tmp_path, environ={})


def test_relative_paths_go_under_the_checkout_absolute_ones_stay(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "clone")
    assert in_repo("runs/demo", root=root) == root / "runs" / "demo"
    assert in_repo(tmp_path / "abs", root=root) == tmp_path / "abs"
    assert in_repo("~/x", root=root) == Path.home() / "x"
