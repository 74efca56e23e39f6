"""The knowledge sampler: picks among ranked candidates with a seeded, order-independent RNG."""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from typing import TypeVar

from costeer_lab.errors import InvalidInputError

__all__ = ["KnowledgeSampler"]

T = TypeVar("T")
_MODES = ("top", "random", "weighted", "keep")


class KnowledgeSampler:
    """Chooses ``n`` of ``k`` ranked candidates.

    Every draw is seeded from ``(seed, *key)``, so results do not depend on how many draws came
    before (runs reproduce, also when resumed or run in another process).

    Args:
        mode: ``top`` (the first ``n``), ``random`` (uniform without replacement),
            ``weighted`` (without replacement, probability ∝ ``exp(score / temperature)``) or
            ``keep`` (each item kept when a seeded ``uniform() <= keep_probability``, in
            ranked order, at most ``n``: the keep-probability form; may return fewer).
        seed: base seed.
        temperature: softmax temperature of ``weighted``.
        keep_probability: ``p`` of ``keep``, in [0, 1].

    Example:
        >>> KnowledgeSampler("top").sample(["a", "b", "c"], 2)
        ['a', 'b']
        >>> s = KnowledgeSampler("random", seed=1)
        >>> a = s.sample(list("abcdef"), 3, key=("run", "t1"))
        >>> a == s.sample(list("abcdef"), 3, key=("run", "t1"))
        True
        >>> KnowledgeSampler("keep", keep_probability=1.0).sample(list("abc"), 2)
        ['a', 'b']
        >>> KnowledgeSampler("keep", keep_probability=0.0).sample(list("abc"), 2)
        []
    """

    def __init__(
        self,
        mode: str = "top",
        *,
        seed: int = 0,
        temperature: float = 1.0,
        keep_probability: float = 0.5,
    ) -> None:
        if mode not in _MODES:
            raise InvalidInputError(f"sampler mode must be one of {_MODES}, got {mode!r}")
        if temperature <= 0:
            raise InvalidInputError(f"temperature must be > 0, got {temperature}")
        if isinstance(keep_probability, bool) or not 0.0 <= keep_probability <= 1.0:
            raise InvalidInputError(
                f"keep_probability must be in [0, 1], got {keep_probability!r}"
            )
        self.mode = mode
        self.keep_probability = float(keep_probability)
        self.seed = int(seed)
        self.temperature = float(temperature)

    def rng(self, key: Sequence[object] = ()) -> random.Random:
        """A fresh RNG seeded by ``(seed, *key)``."""
        text = repr((self.seed, *key)).encode("utf-8")
        return random.Random(int.from_bytes(hashlib.sha256(text).digest()[:8], "big"))

    def sample(
        self,
        items: Sequence[T],
        n: int,
        *,
        scores: Sequence[float] | None = None,
        key: Sequence[object] = (),
    ) -> list[T]:
        """``n`` items (all when fewer), kept in their ranked order."""
        if n <= 0 or not items:
            return []
        if self.mode == "keep":
            rng = self.rng(key)
            draws = [rng.random() for _ in items]  # one draw per item, whatever n is
            return [
                item for item, u in zip(items, draws, strict=True) if u <= self.keep_probability
            ][:n]
        if n >= len(items) or self.mode == "top":
            return list(items[:n])
        rng = self.rng(key)
        if self.mode == "random":
            picked = rng.sample(range(len(items)), n)
        else:
            if scores is None or len(scores) != len(items):
                raise InvalidInputError("the weighted sampler needs one score per item")
            top = max(scores)
            weights = [math.exp((s - top) / self.temperature) for s in scores]
            pool = list(range(len(items)))
            picked = []
            for _ in range(n):
                total = sum(weights[i] for i in pool)
                r = rng.random() * total
                acc = 0.0
                chosen = pool[-1]
                for i in pool:
                    acc += weights[i]
                    if acc >= r:
                        chosen = i
                        break
                picked.append(chosen)
                pool.remove(chosen)
        return [items[i] for i in sorted(picked)]
