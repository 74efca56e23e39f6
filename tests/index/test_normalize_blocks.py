"""``normalize_rows`` works a block of rows at a time: the result and the errors are those of
one pass over every row, whatever block a row falls in (issue 27: peak memory of a rebuild)."""

from __future__ import annotations

import numpy as np
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.index._validate import _BLOCK, normalize_rows


def _one_pass(x: np.ndarray) -> np.ndarray:
    """The unit rows computed over all rows at once (float64, then rounded to float32)."""
    a = np.asarray(x, dtype=np.float64)
    return np.ascontiguousarray(a / np.linalg.norm(a, axis=1)[:, None], dtype=np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_blocks_give_the_bits_of_one_pass(dtype: type) -> None:
    rng = np.random.default_rng(7)
    x: np.ndarray = (rng.standard_normal((2 * _BLOCK + 3, 9)) * 50).astype(dtype)
    x[:, 0] = 1  # no zero row
    got = normalize_rows(x, 9)
    assert got.dtype == np.float32 and got.flags.c_contiguous and got.shape == x.shape
    assert np.array_equal(got.view(np.uint32), _one_pass(x).view(np.uint32))
    assert np.array_equal(normalize_rows(x[:5].tolist(), 9), _one_pass(x[:5]))


def test_errors_name_the_row_in_any_block_and_nan_comes_first() -> None:
    x = np.ones((_BLOCK + 10, 3), dtype=np.float32)
    x[_BLOCK + 4] = 0.0
    with pytest.raises(InvalidInputError, match=rf"row {_BLOCK + 4} is a zero vector"):
        normalize_rows(x, 3)
    x[_BLOCK + 7, 1] = np.nan  # a later NaN is named before an earlier zero row, as before
    with pytest.raises(InvalidInputError, match=rf"row {_BLOCK + 7} contains NaN"):
        normalize_rows(x, 3)
