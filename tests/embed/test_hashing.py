"""The hashing embedder: determinism across processes, normalisation, similarity structure."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from costeer_lab.embed import HashingEmbedder
from costeer_lab.embed._hashing import tokenize
from costeer_lab.errors import InvalidInputError

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [
    "rolling mean of closing price over 5 days",
    "df['close'].rolling(20).std()",
    "KeyError: 'volume'",
    "Ünïcödé tëxt and 数据 too",
    "",
    "   ",
    "!!! ???",
]

_CHILD = """
import hashlib, json, sys
from costeer_lab.embed import HashingEmbedder
texts = json.loads(sys.argv[1])
v = HashingEmbedder(dim=int(sys.argv[2])).embed(texts)
print(hashlib.sha256(v.tobytes()).hexdigest())
"""


def _child_digest(texts: list[str], dim: int, hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(texts), str(dim)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    return proc.stdout.strip()


def test_vectors_identical_across_processes_with_different_hash_seeds() -> None:
    local = hashlib.sha256(HashingEmbedder(dim=128).embed(TEXTS).tobytes()).hexdigest()
    assert _child_digest(TEXTS, 128, "1") == local
    assert _child_digest(TEXTS, 128, "2") == local


def test_rows_are_float32_unit_norm_including_empty_texts() -> None:
    v = HashingEmbedder().embed(TEXTS)
    assert v.dtype == np.float32 and v.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)


def test_texts_without_words_share_one_fixed_vector() -> None:
    v = HashingEmbedder().embed(["", "   ", "!!! ???", "rolling mean"])
    np.testing.assert_array_equal(v[0], v[1])
    np.testing.assert_array_equal(v[0], v[2])
    assert np.count_nonzero(v[0]) == 1
    assert abs(float(v[0] @ v[3])) < 0.5


def test_identifier_styles_map_to_the_same_vector() -> None:
    v = HashingEmbedder().embed(["rolling_mean", "rollingMean", "rolling mean", "Rolling-Mean"])
    for row in v[1:]:
        np.testing.assert_allclose(row, v[0], atol=1e-6)


def test_tokenize_splits_identifiers_digits_and_punctuation() -> None:
    assert tokenize("df['close'].rollingMean(window=5)") == [
        "df",
        "close",
        "rolling",
        "mean",
        "window",
        "5",
    ]
    assert tokenize("HTTPServer ma5 snake_case_name") == [
        "http",
        "server",
        "ma",
        "5",
        "snake",
        "case",
        "name",
    ]


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    v = HashingEmbedder().embed(
        [
            "rolling mean of closing price",
            "rolling mean of the close prices",
            "parse json configuration file",
        ]
    )
    assert v[0] @ v[1] > 0.5
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3


def test_batching_does_not_change_vectors() -> None:
    texts = [f"factor {i} of close and volume_{i % 7}" for i in range(2100)]  # > one chunk
    emb = HashingEmbedder(dim=64)
    batch = emb.embed(texts)
    alone = np.vstack([HashingEmbedder(dim=64).embed([t]) for t in texts[::300]])
    np.testing.assert_array_equal(batch[::300], alone)


def test_dimension_and_id() -> None:
    emb = HashingEmbedder(dim=64)
    assert emb.id == "hashing@1:64"
    assert emb.embed(["x"]).shape == (1, 64)
    assert HashingEmbedder().id == "hashing@1:384"


@pytest.mark.parametrize("dim", [0, 1, -5, 3.5, True, "384"])
def test_invalid_dimension_is_rejected(dim: object) -> None:
    with pytest.raises(InvalidInputError, match="dim"):
        HashingEmbedder(dim=dim)  # type: ignore[arg-type]


def test_counters_count_calls_and_texts() -> None:
    emb = HashingEmbedder(dim=16)
    emb.embed(["a", "b"])
    emb.embed(["c"])
    assert (emb.calls, emb.texts_embedded) == (2, 3)
