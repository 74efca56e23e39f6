"""Helpers of the vector index tests: seeded random unit vectors and a brute-force oracle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

#: Types of the ``vecs`` and ``oracle`` fixtures.
Vecs = Callable[..., npt.NDArray[np.float32]]
Oracle = tuple[Callable[..., Any], Callable[..., None]]


def unit_vectors(n: int, dim: int, seed: int) -> npt.NDArray[np.float32]:
    """``n`` seeded random unit vectors of dimension ``dim``."""
    x = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return np.asarray(x / np.linalg.norm(x, axis=1, keepdims=True), dtype=np.float32)


def brute_force(
    matrix: npt.NDArray[np.floating[Any]], ids: list[str], query: npt.NDArray[np.float32], k: int
) -> tuple[list[str], list[float]]:
    """Exact top-``k`` ids and cosine scores by a float64 numpy scan."""
    q = query.astype(np.float64) / np.linalg.norm(query)
    sims = np.asarray(matrix, dtype=np.float64) @ q  # no copy when given float64 already
    top = np.argpartition(-sims, k - 1)[:k] if k < sims.size else np.arange(sims.size)
    order = top[np.argsort(-sims[top], kind="stable")]
    return [ids[i] for i in order], [float(sims[i]) for i in order]


def assert_matches_oracle(
    got_ids: tuple[str, ...],
    got_scores: tuple[float, ...],
    want_ids: list[str],
    want_scores: list[float],
) -> None:
    """Same ranking as the oracle; ids may swap only where oracle scores tie within 1e-5."""
    assert len(got_ids) == len(want_ids)
    np.testing.assert_allclose(got_scores, want_scores, atol=1e-5)
    for rank, (g, w) in enumerate(zip(got_ids, want_ids, strict=True)):
        if g != w:
            tied = [
                want_ids[j] for j, s in enumerate(want_scores) if abs(s - want_scores[rank]) < 1e-5
            ]
            assert g in tied and w in tied, f"rank {rank}: got {g}, expected {w}"


@pytest.fixture(scope="module")
def big() -> tuple[list[str], npt.NDArray[np.float32]]:
    """10k random 384-d unit vectors with ids ``v0..v9999``."""
    return [f"v{i}" for i in range(10_000)], unit_vectors(10_000, 384, seed=7)


@pytest.fixture(scope="session")
def vecs() -> Vecs:
    """The :func:`unit_vectors` helper."""
    return unit_vectors


@pytest.fixture(scope="session")
def oracle() -> Oracle:
    """``(brute_force, assert_matches_oracle)`` helpers."""
    return brute_force, assert_matches_oracle
