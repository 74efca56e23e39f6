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
