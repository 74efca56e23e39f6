"""``SuccessIndex``: shared-component counts from postings and vector-index labels that follow
the index (ids reaching it after they were solved, new ids, removals)."""

from __future__ import annotations

import numpy as np

from costeer_lab.index import FaissIndex
from costeer_lab.knowledge._success_index import SuccessIndex


def _vecs(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)


def test_labels_follow_ids_solved_before_they_reach_the_index() -> None:
    index = FaissIndex(8)
    index.add(["td:a"], _vecs(1, 0))
    si = SuccessIndex()
    si.add("td:a", ["c:x"])
    si.add("td:b", ["c:x"])  # solved, vector not yet in the index
    assert si.labels(index).tolist() == [0, -1]
    assert si.labels(index).tolist() == [0, -1]  # asked again: still missing
    index.add(["td:c", "td:b"], _vecs(2, 1))  # adding keeps the label epoch
    assert si.labels(index).tolist() == [0, 2]
    si.add("td:c", ["c:y"])
    si.add("td:d", ["c:y"])  # new ordinals: one in the index, one not yet
    assert si.labels(index).tolist() == [0, 2, 1, -1]
    index.add(["td:d"], _vecs(1, 2))
    assert si.labels(index).tolist() == [0, 2, 1, 3]
    index.remove(["td:a"])  # a removal changes the epoch: every label is looked up again
    assert si.labels(index).tolist() == [-1, 2, 1, 3]
    assert si.labels(index).tolist() == index.labels_of(si.tds).tolist()


def test_labels_follow_a_new_index_object() -> None:
    si = SuccessIndex()
    for i in range(5):
        si.add(f"td:{i}", [f"c:{i % 2}"])
    first = FaissIndex(8)
    first.add([f"td:{i}" for i in range(5)], _vecs(5, 3))
    assert si.labels(first).tolist() == [0, 1, 2, 3, 4]
    second = FaissIndex(8)
    second.add(["td:4", "td:0"], _vecs(2, 4))
    assert si.labels(second).tolist() == [1, -1, -1, -1, 0]
    assert si.shared_counts(["c:0", "c:1", "c:0"]).tolist() == [2, 1, 2, 1, 2]


def _reference_counts(postings: dict[str, list[int]], n: int, comps: list[str]) -> list[int]:
    """The method's walk: for each listed component, one more for each task that has it."""
    counts = [0] * n
    for c in comps:
        for o in postings.get(c, []):
            counts[o] += 1
    return counts


def test_shared_counts_equal_a_walk_while_postings_grow_dense_and_sparse() -> None:
    """Counts from byte masks (large postings) and scattered increments (small ones) equal a
    plain walk at every size, while ordinals are appended between queries (each mask is
    brought up to date, grows past its capacity, and components move from sparse to dense)."""
    rng = np.random.default_rng(7)
    names = [f"c:{i}" for i in range(12)]
    share = np.linspace(0.005, 0.6, len(names))  # rare to very common components
    si = SuccessIndex()
    postings: dict[str, list[int]] = {c: [] for c in names}
    dense_seen: set[str] = set()
    for step in range(40):
        for _ in range(int(rng.integers(1, 400))):
            o = len(si)
            comps = [c for c, p in zip(names, share, strict=True) if rng.random() < p]
            si.add(f"td:{o}", comps)
            for c in comps:
                postings[c].append(o)
        n = len(si)
        dense_seen |= {c for c in names if len(postings[c]) * 16 > n}
        for _ in range(5):
            comps = list(rng.choice([*names, "c:absent"], size=int(rng.integers(0, 9))))
            got = si.shared_counts(comps)
            assert got.dtype == np.uint8 and got.shape == (n,), step
            assert got.tolist() == _reference_counts(postings, n, comps), (step, comps)
    assert len(dense_seen) > 6 and len(dense_seen) < len(names)  # both paths were taken


def test_shared_counts_of_many_components_do_not_wrap_around() -> None:
    si = SuccessIndex()
    si.add("td:a", ["c:x", "c:x"])  # linked once
    si.add("td:b", ["c:y"])
    counts = si.shared_counts(["c:x"] * 300 + ["c:y"])  # a byte would wrap at 256
    assert counts.dtype == np.int64 and counts.tolist() == [300, 1]
