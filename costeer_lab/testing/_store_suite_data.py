"""Store contract tests: embedding cache, vector collections, JSON records."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from costeer_lab.errors import EmbedderMismatchError, InvalidInputError
from costeer_lab.store import BaseStore

__all__ = ["DataStoreTests"]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _awkward_floats(n: int, dim: int, seed: int) -> np.ndarray:
    """float32 values that expose any lossy conversion (tiny, huge, negative zero, subnormal)."""
    rng = np.random.default_rng(seed)
    out = rng.standard_normal((n, dim)).astype(np.float32)
    out.flat[:5] = [1e-38, -3.4e38, -0.0, np.float32(1.4e-45), np.float32(1) / np.float32(3)]
    return out


class DataStoreTests:
    """Embedding cache, vectors and records."""

    # -- embedding cache -------------------------------------------------------------------
    def test_embedding_cache_round_trip_is_exact(self, store: BaseStore) -> None:
        vecs = _awkward_floats(3, 16, seed=0)
        items = {_sha(f"t{i}"): vecs[i] for i in range(3)}
        store.put_cached_embeddings("hashing@1:16", items)
        got = store.get_cached_embeddings("hashing@1:16", [_sha("t2"), _sha("nope"), _sha("t0")])
        assert set(got) == {_sha("t2"), _sha("t0")}
        for key in got:
            assert got[key].dtype == np.float32 and got[key].shape == (16,)
            assert got[key].tobytes() == items[key].tobytes()  # bit-exact, -0.0 included
        assert store.get_cached_embeddings("other@1:16", [_sha("t0")]) == {}
        assert store.get_cached_embeddings("hashing@1:16", []) == {}

    def test_embedding_cache_overwrite_and_fresh_copies(self, store: BaseStore) -> None:
        key = _sha("x")
        store.put_cached_embeddings("e", {key: np.zeros(4, dtype=np.float32)})
        store.put_cached_embeddings("e", {key: np.ones(4, dtype=np.float32)})
        got = store.get_cached_embeddings("e", [key])[key]
        got[:] = 7.0  # a returned array is the caller's to keep and modify
        assert store.get_cached_embeddings("e", [key])[key].tolist() == [1.0] * 4

    # -- vector collections ------------------------------------------------------------------
    def test_vectors_round_trip(self, store: BaseStore) -> None:
        vecs = _awkward_floats(4, 8, seed=1)
        before = vecs.copy()
        store.put_vectors("kb", "hashing@1:8", ["d", "b", "a", "c"], vecs)
        np.testing.assert_array_equal(vecs, before)  # input untouched
        ids, matrix, embedder = store.load_vectors("kb")
        assert ids == ["d", "b", "a", "c"] and embedder == "hashing@1:8"
        assert matrix.dtype == np.float32 and matrix.shape == (4, 8)
        assert matrix.tobytes() == vecs.tobytes()
        assert store.collection_info("kb") == ("hashing@1:8", 8)
        matrix[:] = 0  # a fresh copy
        assert store.load_vectors("kb")[1].tobytes() == vecs.tobytes()

    def test_vectors_in_pages_equal_the_whole_collection(self, store: BaseStore) -> None:
        vecs = _awkward_floats(7, 8, seed=2)
        store.put_vectors("kb", "hashing@1:8", [f"v{i}" for i in range(7)], vecs)
        store.put_vectors("kb", "hashing@1:8", ["v2"], vecs[:1])  # replaced in its place
        store.delete_vectors("kb", ["v4"])
        store.put_vectors("other", "hashing@1:8", ["x"], vecs[:1])
        ids, matrix, embedder = store.load_vectors("kb")
        pages = list(store.iter_vectors("kb", page=2))
        assert [len(p[0]) for p in pages] == [2, 2, 2]
        assert [i for p in pages for i in p[0]] == ids
        assert np.concatenate([p[1] for p in pages]).tobytes() == matrix.tobytes()
        assert {p[2] for p in pages} == {embedder}
        assert [i for p in store.iter_vectors("kb", page=6) for i in p[0]] == ids  # one page
        assert list(store.iter_vectors("nothing")) == []
        assert store.count_vectors("kb") == 6 and store.count_vectors("nothing") == 0
        with pytest.raises(InvalidInputError, match="page must be a positive int, got 0"):
            list(store.iter_vectors("kb", page=0))

    def test_empty_collection(self, store: BaseStore) -> None:
        ids, matrix, embedder = store.load_vectors("nothing")
        assert ids == [] and matrix.shape[0] == 0 and embedder is None
        assert store.collection_info("nothing") is None
        assert store.collection_version("nothing") == 0
        assert store.delete_vectors("nothing", ["a"]) == 0

    def test_vector_upsert_delete_and_version(self, store: BaseStore) -> None:
        eye = np.eye(3, dtype=np.float32)
        store.put_vectors("c", "e@1:3", ["a", "b"], eye[:2])
        v1 = store.collection_version("c")
        assert v1 >= 1
        store.put_vectors("c", "e@1:3", ["b", "c"], eye[[0, 2]])  # b replaced in place
        v2 = store.collection_version("c")
        ids, matrix, _ = store.load_vectors("c")
        assert ids == ["a", "b", "c"]
        np.testing.assert_array_equal(matrix, eye[[0, 0, 2]])
        assert store.delete_vectors("c", ["a", "zz"]) == 1
        v3 = store.collection_version("c")
        assert store.delete_vectors("c", ["zz"]) == 0  # no change, no new version
        assert store.collection_version("c") == v3
        assert v1 < v2 < v3
        assert store.load_vectors("c")[0] == ["b", "c"]
        assert store.collection_version("other") == 0  # collections are independent

    def test_collection_state_changes_with_every_write_only(self, store: BaseStore) -> None:
        eye = np.eye(3, dtype=np.float32)
        assert store.collection_state("c") == (0, "")
        store.put_vectors("c", "e@1:3", ["a"], eye[:1])
        s1 = store.collection_state("c")
        assert s1[0] == store.collection_version("c") and s1[1]
        assert store.collection_state("c") == s1  # reading changes nothing
        assert store.delete_vectors("c", ["zz"]) == 0
        assert store.collection_state("c") == s1  # no change, same state
        store.put_vectors("c", "e@1:3", ["a"], eye[:1])  # the same vector again is a write
        s2 = store.collection_state("c")
        assert s2[0] > s1[0] and s2[1] != s1[1]
        assert store.delete_vectors("c", ["a"]) == 1
        s3 = store.collection_state("c")
        assert s3[0] > s2[0] and s3[1] not in (s1[1], s2[1])
        assert store.collection_state("other") == (0, "")

    def test_vector_embedder_mismatch_names_both(self, store: BaseStore) -> None:
        store.put_vectors("c", "hashing@1:4", ["a"], np.ones((1, 4), dtype=np.float32))
        version = store.collection_version("c")
        with pytest.raises(EmbedderMismatchError) as info:
            store.put_vectors("c", "minilm@1:4", ["b"], np.ones((1, 4), dtype=np.float32))
        assert "hashing@1:4" in str(info.value) and "minilm@1:4" in str(info.value)
        with pytest.raises(EmbedderMismatchError) as info:
            store.put_vectors("c", "hashing@1:4", ["b"], np.ones((1, 5), dtype=np.float32))
        assert "4" in str(info.value) and "5" in str(info.value)
        assert store.load_vectors("c")[0] == ["a"]
        assert store.collection_version("c") == version
        store.put_vectors("d", "minilm@1:4", ["b"], np.ones((1, 4), dtype=np.float32))
        assert store.delete_vectors("c", ["a"]) == 1  # emptied: another embedder may move in
        store.put_vectors("c", "minilm@1:6", ["b"], np.ones((1, 6), dtype=np.float32))
        assert store.collection_info("c") == ("minilm@1:6", 6)

    def test_vector_shape_validation(self, store: BaseStore) -> None:
        with pytest.raises(InvalidInputError):
            store.put_vectors("c", "e", ["a", "b"], np.ones((1, 3), dtype=np.float32))
        with pytest.raises(InvalidInputError):
            store.put_vectors("c", "e", ["a"], np.ones(3, dtype=np.float32))
        assert store.collection_version("c") == 0 and store.load_vectors("c")[0] == []

    def test_search_vectors_ranks_by_cosine_with_filters(self, store: BaseStore) -> None:
        vectors = np.array(
            [[1, 0, 0], [0, 1, 0], [2, 2, 0], [-1, 0, 0], [1, 0.1, 0]], dtype=np.float32
        )
        store.put_vectors("s", "e@1:3", ["a", "b", "c", "d", "e"], vectors)
        query = np.array([1, 0, 0], dtype=np.float32)
        hits = store.search_vectors("s", query, 3)
        assert [h[0] for h in hits] == ["a", "e", "c"]
        assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
        assert hits[2][1] == pytest.approx(2**-0.5, abs=1e-5)
        # min_score before the cut: only the two above 0.9 qualify
        assert [h[0] for h in store.search_vectors("s", query, 3, min_score=0.9)] == ["a", "e"]
        # candidate restriction before the cut: k results among the allowed ids
        restricted = store.search_vectors("s", query, 2, ids=["b", "c", "d"])
        assert [h[0] for h in restricted] == ["c", "b"]
        assert store.search_vectors("s", query, 0) == []
        assert store.search_vectors("missing", query, 3) == []
        # a beam width is accepted everywhere (an exact scan has none): same answer here
        assert store.search_vectors("s", query, 3, ef_search=50) == hits

    def test_search_vectors_rejects_a_wrong_dimension(self, store: BaseStore) -> None:
        store.put_vectors("s", "e@1:3", ["a"], np.ones((1, 3), dtype=np.float32))
        with pytest.raises(InvalidInputError, match="dimension"):
            store.search_vectors("s", np.ones(4, dtype=np.float32), 1)

    # -- JSON records ------------------------------------------------------------------------
    @pytest.mark.parametrize(
        "data",
        [{"a": 1, "nested": {"l": [1, 2.5, "x", None, True]}}, [1, 2], "text ✓", 3, 2.5, False],
    )
    def test_record_round_trip(self, store: BaseStore, data: object) -> None:
        store.put_record("kind", "key", data)
        assert store.get_record("kind", "key") == data
        assert store.get_record("kind", "other") is None
        assert store.get_record("other", "key") is None

    def test_records_upsert_order_count_delete(self, store: BaseStore) -> None:
        store.put_records("q", [("k2", {"v": 1}), ("k1", {"v": 2}), ("k3", {"v": 3})])
        store.put_record("q", "k2", {"v": 10})
        store.put_record("other", "k9", {"v": 1})
        assert list(store.iter_records("q")) == [
            ("k2", {"v": 10}),
            ("k1", {"v": 2}),
            ("k3", {"v": 3}),
        ]
        assert (store.count_records("q"), store.count_records("other")) == (3, 1)
        assert store.delete_records("q", ["k1", "nope"]) == 1
        assert [k for k, _ in store.iter_records("q")] == ["k2", "k3"]
        assert store.delete_records("q", []) == 0

    def test_get_records_reads_many_keys_at_once(self, store: BaseStore) -> None:
        keys = [f"k{i}" for i in range(1200)]  # more than one SQLite parameter batch
        store.put_records("many", [(k, {"i": i, "s": "ü"}) for i, k in enumerate(keys)])
        store.put_record("other", "k1", {"i": -1})
        wanted = ["k1199", "missing", "k0", "k1", "k0"]
        assert store.get_records("many", wanted) == {
            "k1199": {"i": 1199, "s": "ü"},
            "k0": {"i": 0, "s": "ü"},
            "k1": {"i": 1, "s": "ü"},
        }
        got = store.get_records("many", keys)
        assert len(got) == 1200 and got["k777"] == {"i": 777, "s": "ü"}
        assert store.get_records("many", []) == {}
        assert store.get_records("nothing", ["k0"]) == {}

    def test_record_where_filters(self, store: BaseStore) -> None:
        store.put_records(
            "log",
            [
                ("r1", {"arm": "v2", "seed": 1, "ok": True, "score": 0.5, "a.b": 1}),
                ("r2", {"arm": "v1", "seed": 1, "ok": False, "score": 1.0, "note": None}),
                ("r3", {"arm": "v2", "seed": 2, "ok": 1, "score": 1}),
                ("r4", {"arm": "1", "seed": "1"}),
                ("r5", ["arm", "v2"]),
                ("r6", {"a": {"b": 1}}),
            ],
        )

        def keys(**where: object) -> list[str]:
            found = [k for k, _ in store.iter_records("log", where=where)]  # type: ignore[arg-type]
            assert store.count_records("log", where=where) == len(found)  # type: ignore[arg-type]
            return found

        assert keys(arm="v2") == ["r1", "r3"]
        assert keys(arm="v2", seed=2) == ["r3"]
        assert keys(seed=1) == ["r1", "r2"]  # the string "1" is not the number 1
        assert keys(ok=True) == ["r1"]  # JSON true is not the number 1
        assert keys(ok=1) == ["r3"]
        assert keys(score=1) == ["r2", "r3"]  # 1 == 1.0
        assert keys(note=None) == ["r2"]  # explicit null only, not a missing field
        assert keys(**{"a.b": 1}) == ["r1"]  # a top-level field name, not a path
        assert keys(arm="v3") == []
        assert store.count_records("log", where={}) == 6

    def test_records_where_validation(self, store: BaseStore) -> None:
        with pytest.raises(InvalidInputError):
            list(store.iter_records("log", where={"a": [1]}))  # type: ignore[dict-item]
