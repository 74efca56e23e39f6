"""The ``hashing`` embedder: signed feature hashing of words, word pairs and character n-grams.

No model, no network, no dependency beyond numpy. Vectors are a deterministic function of the
text: features are hashed with :func:`hashlib.blake2b` (never Python's salted ``hash()``), so two
processes — or two machines — produce the same vectors.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import threading

import numpy as np
import numpy.typing as npt

from costeer_lab.embed._base import BaseEmbedder
from costeer_lab.errors import InvalidInputError

__all__ = ["HashingEmbedder", "tokenize"]

_CAMEL_1 = re.compile(r"([a-z0-9])([A-Z])")  # rollingMean -> rolling Mean
_CAMEL_2 = re.compile(r"([A-Z]+)([A-Z][a-z])")  # HTTPServer -> HTTP Server
_TOKEN = re.compile(r"[^\W\d_]+|\d+")  # runs of letters or runs of digits (Unicode aware)

#: Very common English words: kept as weak unigrams, no character n-grams, no word pairs.
_STOPWORDS = frozenset(
    (  # noqa: SIM905 - a word list reads better as one string
        "a an and are as at be by for from has have in into is it its of on or that the this to "
        "was were will with which each per all any than then"
    ).split(" ")
)

_UNIGRAM_W = 1.0
_STOPWORD_W = 0.25
_BIGRAM_W = 0.5
_CHAR_BLOCK_W = 1.0  # total (L2) weight of one token's character n-grams
_EMPTY_FEATURE = "\x00empty"
_CACHE_LIMIT = 200_000
_CHUNK = 2048  # texts per vectorised accumulation (bounds memory at _CHUNK * dim floats)


def tokenize(text: str) -> list[str]:
    """Split identifiers and prose into lowercase word tokens.

    ``snake_case``, ``camelCase``, punctuation and letter/digit boundaries all separate tokens.

    Example:
        >>> tokenize("df['close'].rollingMean(window=5)")
        ['df', 'close', 'rolling', 'mean', 'window', '5']
    """
    text = _CAMEL_2.sub(r"\1 \2", _CAMEL_1.sub(r"\1 \2", text))
    return _TOKEN.findall(text.lower())


def _stem(token: str) -> str:
    """A light plural folding for unigram features (``prices`` -> ``price``)."""
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


class HashingEmbedder(BaseEmbedder):
    """Deterministic feature-hashing embedder (the default; offline and fast).

    Each text is lowercased and split into word tokens (identifiers are split at ``_`` and case
    changes, so ``rolling_mean``, ``rollingMean`` and ``rolling mean`` agree). Features:

    * word unigrams (light plural folding), weight 1; common English stopwords weight 0.25;
    * word pairs of consecutive non-stopword tokens, weight 0.5;
    * character 3–5-grams of each non-stopword token with ``<`` ``>`` word-boundary marks, scaled
      so that one token's n-grams together have L2 weight 1 (robust to spelling variants).

    Each feature is hashed with blake2b to a column and a sign; the row is L2-normalized.
    A text with no word token (``""``, ``"  "``, ``"!!"``) maps to one fixed unit vector, the
    same for all such texts, so every row has unit norm.

    Args:
        dim: vector dimension (default 384).

    Example:
        >>> e = HashingEmbedder(dim=64)
        >>> v = e.embed(["rolling_mean", "rolling mean", "bond yield"])
        >>> bool(v[0] @ v[1] > 0.99), bool(v[0] @ v[2] < 0.5)
        (True, True)
    """

    name = "hashing"
    version = "1"

    def __init__(self, dim: int = 384) -> None:
        super().__init__()
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 2:
            raise InvalidInputError(f"hashing embedder dim must be an int >= 2, got {dim!r}")
        self.dim = dim
        self._token_cache: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = {}
        self._pair_cache: dict[tuple[str, str], tuple[int, float]] = {}
        self._lock = threading.Lock()
        col, val = self._hash_feature(_EMPTY_FEATURE, 1.0)
        self._empty = (np.array([col], dtype=np.int64), np.array([val], dtype=np.float64))

    # -- feature hashing ---------------------------------------------------------------------
    def _hash_feature(self, feature: str, weight: float) -> tuple[int, float]:
        h = int.from_bytes(
            hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
        )
        return h % self.dim, (weight if (h >> 63) & 1 else -weight)

    def _token_features(self, token: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """Columns and signed weights of a token's unigram and character n-grams (cached)."""
        found = self._token_cache.get(token)
        if found is not None:
            return found
        if token in _STOPWORDS:
            feats = [self._hash_feature("w:" + token, _STOPWORD_W)]
        else:
            feats = [self._hash_feature("w:" + _stem(token), _UNIGRAM_W)]
            marked = f"<{token}>"
            grams = [marked[i : i + n] for n in (3, 4, 5) for i in range(len(marked) - n + 1)]
            if grams:
                w = _CHAR_BLOCK_W / math.sqrt(len(grams))
                feats.extend(self._hash_feature("c:" + g, w) for g in grams)
        cols = np.fromiter((c for c, _ in feats), dtype=np.int64, count=len(feats))
        vals = np.fromiter((v for _, v in feats), dtype=np.float64, count=len(feats))
        result = (cols, vals)
        with self._lock:
            if len(self._token_cache) >= _CACHE_LIMIT:
                self._token_cache.clear()
            self._token_cache[token] = result
        return result

    def _pair_feature(self, a: str, b: str) -> tuple[int, float]:
        key = (a, b)
        found = self._pair_cache.get(key)
        if found is None:
            found = self._hash_feature(f"b:{_stem(a)} {_stem(b)}", _BIGRAM_W)
            with self._lock:
                if len(self._pair_cache) >= _CACHE_LIMIT:
                    self._pair_cache.clear()
                self._pair_cache[key] = found
        return found

    def _text_features(
        self, text: str
    ) -> tuple[list[npt.NDArray[np.int64]], list[npt.NDArray[np.float64]]]:
        """Per-token (then word-pair) feature arrays, in the order they are summed. The caches
        are read inline: this runs once per token of every text embedded."""
        tokens = tokenize(text)
        if not tokens:
            return [self._empty[0]], [self._empty[1]]
        cols: list[npt.NDArray[np.int64]] = []
        vals: list[npt.NDArray[np.float64]] = []
        cache = self._token_cache
        for tok in tokens:
            found = cache.get(tok)
            if found is None:
                found = self._token_features(tok)
            cols.append(found[0])
            vals.append(found[1])
        content = [t for t in tokens if t not in _STOPWORDS]
        if len(content) > 1:
            pair_cache = self._pair_cache
            pairs = [
                pair_cache.get(key) or self._pair_feature(*key)
                for key in itertools.pairwise(content)
            ]
            cols.append(np.array([c for c, _ in pairs], dtype=np.int64))
            vals.append(np.array([v for _, v in pairs], dtype=np.float64))
        return cols, vals

    # -- embedding ---------------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _CHUNK):
            chunk = texts[start : start + _CHUNK]
            all_cols: list[npt.NDArray[np.int64]] = []
            all_vals: list[npt.NDArray[np.float64]] = []
            parts = np.zeros(len(chunk), dtype=np.int64)  # feature arrays per text
            for i, text in enumerate(chunk):
                cols, vals = self._text_features(text)
                all_cols.extend(cols)
                all_vals.extend(vals)
                parts[i] = len(cols)
            sizes = np.fromiter(map(len, all_cols), dtype=np.int64, count=len(all_cols))
            rows = np.repeat(np.repeat(np.arange(len(chunk), dtype=np.int64), parts), sizes)
            flat = rows * self.dim + np.concatenate(all_cols)
            dense = np.bincount(
                flat, weights=np.concatenate(all_vals), minlength=len(chunk) * self.dim
            ).reshape(len(chunk), self.dim)
            norms = np.sqrt(np.square(dense).sum(axis=1, keepdims=True))
            # Collisions can cancel every feature of a text; fall back to the empty vector.
            for j in np.flatnonzero(norms[:, 0] == 0.0).tolist():
                dense[j, :] = 0.0
                dense[j, int(self._empty[0][0])] = self._empty[1][0]
                norms[j, 0] = 1.0
            out[start : start + len(chunk)] = dense / norms
        return out
