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
from array import array

import numpy as np
import numpy.typing as npt

from costeer_lab.embed._base import BaseEmbedder
from costeer_lab.errors import InvalidInputError

__all__ = ["HashingEmbedder", "tokenize"]

_CAMEL_1 = re.compile(r"([a-z0-9])([A-Z])")  # rollingMean -> rolling Mean
_CAMEL_2 = re.compile(r"([A-Z]+)([A-Z][a-z])")  # HTTPServer -> HTTP Server
_TOKEN = re.compile(r"[^\W\d_]+|\d+")  # runs of letters or runs of digits (Unicode aware)
#: The tokens of an ASCII text, camel-case splits included, found in one scan of the text as
#: it is (lowercased after): a lowercase run, a digit run, a capital and its lowercase run, or
#: a run of capitals not followed by a lowercase letter (``HTTPServer``: ``HTTP``, ``Server``).
#: The same tokens as the two substitutions and the scan for other texts, in half the time.
_TOKEN_ASCII = re.compile(r"[a-z]+|[0-9]+|[A-Z][a-z]+|[A-Z]+(?![a-z])")

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
    if text.isascii():  # tokens hold no space: lowercased as one string
        return " ".join(_TOKEN_ASCII.findall(text)).lower().split()
    text = _CAMEL_2.sub(r"\1 \2", _CAMEL_1.sub(r"\1 \2", text)).lower()
    return _TOKEN.findall(text)


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
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        """Empty the feature tables (also when they reach ``_CACHE_LIMIT`` entries).

        A token's features (its unigram, then its character n-grams) are rows
        ``_starts[t] .. _starts[t + 1]`` of ``_cols`` / ``_vals``, ``t`` its number in
        ``_tokens``; a word pair is one feature, row ``_pairs[(a, b)]`` of ``_pair_cols`` /
        ``_pair_vals``, whose row 0 is the feature of a text without words. Growable arrays, so
        a text's Python work is a number per token and per pair; numpy gathers the features.
        ``_grams``: each character n-gram hashed so far → its column, or ``~column`` for a
        negative sign (n-grams recur across tokens: a new token mostly hashes only its
        unigram)."""
        self._grams: dict[str, int] = {}
        self._tokens: dict[str, int] = {}
        self._starts = array("q", [0])
        self._cols = array("q")
        self._vals = array("d")
        self._pairs: dict[tuple[str, str], int] = {}
        self._pair_cols = array("q")
        self._pair_vals = array("d")
        self._append_features(self._pair_cols, self._pair_vals, [_EMPTY_FEATURE], [1.0])

    # -- feature hashing ---------------------------------------------------------------------
    def _append_features(
        self, cols: array[int], vals: array[float], features: list[str], weights: list[float]
    ) -> None:
        """Hash each feature with blake2b to a column (``h % dim``) and a sign (the top bit of
        ``h``); append the column and the signed weight."""
        for feature, w in zip(features, weights, strict=True):
            code = self._code(feature)
            cols.append(code if code >= 0 else ~code)
            vals.append(w if code >= 0 else -w)

    def _code(self, feature: str) -> int:
        """The column of ``feature`` (``h % dim``, ``h`` its 64-bit blake2b), or ``~column``
        when its sign is negative (the top bit of ``h`` clear)."""
        h = int.from_bytes(
            hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
        )
        return h % self.dim if h >> 63 else ~(h % self.dim)

    def _add_token(self, token: str) -> int:
        """Number a new token and append its unigram and character n-gram features."""
        cols, vals = self._cols, self._vals
        if token in _STOPWORDS:
            self._append_features(cols, vals, ["w:" + token], [_STOPWORD_W])
        else:
            self._append_features(cols, vals, ["w:" + _stem(token)], [_UNIGRAM_W])
            marked = f"<{token}>"
            grams = [marked[i : i + n] for n in (3, 4, 5) for i in range(len(marked) - n + 1)]
            w = _CHAR_BLOCK_W / math.sqrt(len(grams))
            known = self._grams
            if len(known) >= _CACHE_LIMIT:
                known.clear()
            for gram in grams:
                code = known.get(gram)
                if code is None:
                    code = known[gram] = self._code("c:" + gram)
                cols.append(code if code >= 0 else ~code)
                vals.append(w if code >= 0 else -w)
        self._starts.append(len(self._cols))
        number = self._tokens[token] = len(self._tokens)
        return number

    def _add_pair(self, pair: tuple[str, str]) -> int:
        """Number a new word pair and append its feature."""
        feature = f"b:{_stem(pair[0])} {_stem(pair[1])}"
        self._append_features(self._pair_cols, self._pair_vals, [feature], [_BIGRAM_W])
        number = self._pairs[pair] = len(self._pair_cols) - 1
        return number

    def _text_numbers(self, text: str, tokens: list[int], pairs: list[int]) -> tuple[int, int]:
        """Append the numbers of ``text``'s tokens and word pairs (the empty feature for a text
        without words); returns how many of each, in the order they are summed."""
        words = tokenize(text)
        if not words:
            pairs.append(0)
            return 0, 1
        known = self._tokens
        tokens.extend([known.get(t) or self._numbered(t) for t in words])
        content = [t for t in words if t not in _STOPWORDS]
        if len(content) < 2:
            return len(words), 0
        seen = self._pairs
        pairs.extend([seen.get(k) or self._add_pair(k) for k in itertools.pairwise(content)])
        return len(words), len(content) - 1

    def _numbered(self, token: str) -> int:
        # ``known.get(t) or …`` also lands here for token number 0: look it up before adding
        found = self._tokens.get(token)
        return self._add_token(token) if found is None else found

    # -- embedding ---------------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            for start in range(0, len(texts), _CHUNK):
                chunk = texts[start : start + _CHUNK]
                out[start : start + len(chunk)] = self._embed_chunk(chunk)
        return out

    def _embed_chunk(self, chunk: list[str]) -> npt.NDArray[np.float64]:
        if len(self._tokens) + len(self._pairs) >= _CACHE_LIMIT:
            self._reset()
        tokens: list[int] = []
        pairs: list[int] = []
        n_tokens = np.empty(len(chunk), dtype=np.int64)
        n_pairs = np.empty(len(chunk), dtype=np.int64)
        for i, text in enumerate(chunk):
            n_tokens[i], n_pairs[i] = self._text_numbers(text, tokens, pairs)
        rows = np.arange(len(chunk), dtype=np.int64)
        # every token's feature rows, text after text (a token's features in their order)
        t = np.array(tokens, dtype=np.int64)
        starts = np.frombuffer(self._starts, dtype=np.int64)
        first, sizes = starts[t], starts[t + 1] - starts[t]
        ends = np.cumsum(sizes)
        take = np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
        take += np.repeat(first - (ends - sizes), sizes)
        p = np.array(pairs, dtype=np.int64)
        # tokens' features, then pairs', so each text's features are summed in its order
        cols = np.concatenate(
            (np.frombuffer(self._cols, dtype=np.int64)[take],
             np.frombuffer(self._pair_cols, dtype=np.int64)[p])
        )  # fmt: skip
        vals = np.concatenate(
            (np.frombuffer(self._vals, dtype=np.float64)[take],
             np.frombuffer(self._pair_vals, dtype=np.float64)[p])
        )  # fmt: skip
        owner = np.concatenate(
            (np.repeat(np.repeat(rows, n_tokens), sizes), np.repeat(rows, n_pairs))
        )
        dense = np.bincount(
            owner * self.dim + cols, weights=vals, minlength=len(chunk) * self.dim
        ).reshape(len(chunk), self.dim)
        del starts  # views of the growable arrays end before they can grow again
        norms = np.sqrt(np.square(dense).sum(axis=1, keepdims=True))
        # Collisions can cancel every feature of a text; fall back to the empty vector.
        for j in np.flatnonzero(norms[:, 0] == 0.0).tolist():
            dense[j, :] = 0.0
            dense[j, self._pair_cols[0]] = self._pair_vals[0]
            norms[j, 0] = 1.0
        result: npt.NDArray[np.float64] = dense / norms
        return result
