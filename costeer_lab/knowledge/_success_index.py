"""``SuccessIndex``: the solved task descriptions of a KB as integer ordinals, with component
postings and their vector-index labels, kept up to date on every insert.

The component query asks "which solved task descriptions share how many of these components?".
Walking a Python set of every task that shares a component costs O(N) interpreted steps per
query; here each component keeps an ``array('q')`` of ordinals (appended when a task description
is first solved), so the counts are a few vectorised passes over the task's postings, and a tier
is handed to the vector index as a label array (no string look-up per allowed id).

A posting holding more than ``1 / DENSE_SHARE`` of all ordinals is also kept as a byte per
ordinal (at most twice the posting's own size, plus room to grow): adding it to the counts is
one pass over contiguous bytes instead of a scattered increment per ordinal. At 100k tasks
(90k solved, six components per query, 105k postings) the counts took 0.15 ms as one
``np.bincount`` of the concatenated postings and take 0.05 ms this way.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from costeer_lab.index import FaissIndex

__all__ = ["DENSE_SHARE", "SuccessIndex"]

Ints = npt.NDArray[np.int64]
#: A posting with more than ``len(index) / DENSE_SHARE`` ordinals is added to the counts as a
#: byte mask (see the module docstring).
DENSE_SHARE = 16


class SuccessIndex:
    """Solved task descriptions by ordinal (the order they were first solved).

    Example:
        >>> si = SuccessIndex()
        >>> si.add("td:a", ["c:x", "c:y"]); si.add("td:b", ["c:y"])
        >>> si.shared_counts(["c:y", "c:x"]).tolist()
        [2, 1]
        >>> si.tds[1], si.ordinal["td:a"]
        ('td:b', 0)
    """

    def __init__(self) -> None:
        #: ordinal → task-description id.
        self.tds: list[str] = []
        #: task-description id → ordinal.
        self.ordinal: dict[str, int] = {}
        self._postings: dict[str, array[int]] = {}
        #: component → (byte mask over ordinals, capacity-sized; ordinals of the posting it holds)
        self._masks: dict[str, tuple[npt.NDArray[np.uint8], int]] = {}
        self._labels: Ints = np.zeros(0, dtype=np.int64)
        self._missing: Ints = np.zeros(0, dtype=np.int64)  # ordinals whose label is -1
        self._labels_for: tuple[FaissIndex | None, int] = (None, -1)

    def __len__(self) -> int:
        return len(self.tds)

    def add(self, td: str, components: Iterable[str]) -> None:
        """Register a newly solved task description and its component node ids (once per td)."""
        if td in self.ordinal:
            return
        o = self.ordinal[td] = len(self.tds)
        self.tds.append(td)
        self.link(o, components)

    def link(self, ordinal: int, components: Iterable[str]) -> None:
        """Append ``ordinal`` to the postings of ``components`` (a task description registered
        with no components whose components are read later; call in ordinal order so every
        posting stays sorted, as if they had been given to :meth:`add`)."""
        for c in dict.fromkeys(components):  # once per component: counts add 1 per posting
            post = self._postings.get(c)
            if post is None:
                post = self._postings[c] = array("q")
            post.append(ordinal)

    def posting(self, component: str) -> Ints:
        """Ordinals of the solved task descriptions linked to ``component`` (a copy)."""
        post = self._postings.get(component)
        return np.array(post if post is not None else (), dtype=np.int64)

    def shared_counts(self, components: Sequence[str]) -> npt.NDArray[np.integer[Any]]:
        """Per ordinal, how many of ``components`` it has (a component listed twice counts
        twice, as in the method's walk): ``uint8`` counts for fewer than 256 components,
        ``int64`` from there on.

        Example:
            >>> si = SuccessIndex()
            >>> si.add("td:a", ["c:x", "c:y"]); si.add("td:b", ["c:y"])
            >>> si.shared_counts(["c:y", "c:y", "c:zz"]).tolist()
            [2, 2]
        """
        n = len(self.tds)
        counts: npt.NDArray[Any] = np.zeros(
            n, dtype=np.uint8 if len(components) < 256 else np.int64
        )
        for c in components:
            post = self._postings.get(c)
            if post is None or not len(post):
                continue
            if len(post) * DENSE_SHARE > n:
                mask = self._mask(c, post)[:n]
                counts[: len(mask)] += mask
            else:  # a posting holds each ordinal once: no repeated index in this increment
                counts[np.frombuffer(post, dtype=np.int64)] += 1
        return counts

    def _mask(self, component: str, post: array[int]) -> npt.NDArray[np.uint8]:
        """The byte mask of ``post`` (1 at each of its ordinals; its length may run past
        them), brought up to date with the ordinals appended since it was last used (a
        posting only grows)."""
        buf, held = self._masks.get(component, (np.zeros(0, dtype=np.uint8), 0))
        if held < len(post):
            fresh = np.frombuffer(post, dtype=np.int64)[held:]
            end = int(fresh.max()) + 1
            if end > len(buf):  # room for later ordinals too: amortised growth
                grown = np.zeros(max(end, 2 * len(buf)), dtype=np.uint8)
                grown[: len(buf)] = buf
                buf = grown
            buf[fresh] = 1
            self._masks[component] = (buf, len(post))
        return buf

    def labels(self, index: FaissIndex) -> Ints:
        """Label in ``index`` of every ordinal (``-1``: not in the index), cached while the
        index object and its :attr:`~FaissIndex.label_epoch` stay the same."""
        n = len(self.tds)
        cached, epoch = self._labels_for
        same = cached is index and epoch == index.label_epoch
        if not same:
            self._labels = index.labels_of(self.tds)
            self._missing = np.flatnonzero(self._labels < 0)
        else:
            if self._missing.size:  # solved before its vector reached the index: look again
                found = index.labels_of([self.tds[i] for i in self._missing.tolist()])
                self._labels[self._missing] = found
                self._missing = self._missing[found < 0]
            if len(self._labels) < n:
                start = len(self._labels)
                fresh = index.labels_of(self.tds[start:])
                self._labels = np.concatenate([self._labels, fresh])
                self._missing = np.concatenate([self._missing, start + np.flatnonzero(fresh < 0)])
        self._labels_for = (index, index.label_epoch)
        return self._labels
