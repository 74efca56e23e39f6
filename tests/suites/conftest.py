"""Fixtures of the suite tests: a small Alpha158 suite whose panel lives in a temp cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.suites import Suite, alpha158_suite


@pytest.fixture(scope="session")
def alpha_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("alpha158_cache")


@pytest.fixture(scope="session")
def small_alpha(alpha_cache: Path) -> Suite:
    """12 instruments x 120 days: every evaluation takes a few tens of milliseconds."""
    return alpha158_suite(n_instruments=12, n_days=120, seed=7, cache_dir=alpha_cache)
