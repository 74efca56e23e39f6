"""Saving and loading an index file: round trips, atomic writes, corruption detection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from costeer_lab.errors import VectorIndexError
from costeer_lab.index import FaissIndex
from costeer_lab.index._faiss import IndexKind

from .conftest import Vecs


def _built(kind: IndexKind, vecs: Vecs) -> FaissIndex:
    index = FaissIndex(24, kind=kind, embedder_id="hashing@1:24", hnsw_m=12, ef_search=40)
    index.add([f"p{i}" for i in range(500)], vecs(500, 24, seed=21))
    index.remove(["p3", "p4", "p77"])  # HNSW keeps these as tombstones
    index.upsert(["p10"], vecs(1, 24, seed=22))
    index.source_collection, index.source_version = "docs", 17
    return index


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_round_trip_keeps_everything(kind: IndexKind, tmp_path: Path, vecs: Vecs) -> None:
    index = _built(kind, vecs)
    path = tmp_path / "sub" / "idx.clvi"
    index.save(path)
    loaded = FaissIndex.load(path)
    assert loaded.origin == "loaded"
    assert (loaded.kind, loaded.dim, loaded.embedder_id) == (kind, 24, "hashing@1:24")
    assert (loaded.hnsw_m, loaded.ef_construction, loaded.ef_search) == (12, 80, 40)
    assert (loaded.source_collection, loaded.source_version) == ("docs", 17)
    assert loaded.ids() == index.ids() and loaded.n_tombstones == index.n_tombstones
    queries = vecs(30, 24, seed=23)
    for flt in (None, {f"p{i}" for i in range(0, 500, 7)}):
        assert loaded.search_batch(queries, 8, filter=flt) == index.search_batch(
            queries, 8, filter=flt
        )
    loaded.add(["fresh"], vecs(1, 24, seed=24))  # a loaded index stays writable
    assert loaded.search(vecs(1, 24, seed=24)[0], 1).ids == ("fresh",)
    assert [p.name for p in path.parent.iterdir()] == ["idx.clvi"]  # no temp files left


def test_empty_index_round_trip(tmp_path: Path) -> None:
    FaissIndex(8, kind="hnsw").save(tmp_path / "e.idx")
    loaded = FaissIndex.load(tmp_path / "e.idx")
    assert len(loaded) == 0 and loaded.kind == "hnsw" and loaded.embedder_id is None
    assert loaded.search(np.ones(8), 3).fewer_than_k


def test_file_has_no_pickle(tmp_path: Path, vecs: Vecs) -> None:
    _built("exact", vecs).save(tmp_path / "x.idx")
    data = (tmp_path / "x.idx").read_bytes()
    assert data.startswith(b"CLVIDX01") and b'"format":2' in data[:200]
    assert b"\x80\x04\x95" not in data[:100]  # no pickle protocol-4 frame


def _corruptions(data: bytes) -> dict[str, bytes]:
    def flip(pos: int) -> bytes:
        return data[:pos] + bytes([data[pos] ^ 0x40]) + data[pos + 1 :]

    return {
        "empty": b"",
        "truncated-header": data[:30],
        "truncated-half": data[: len(data) // 2],
        "truncated-last-byte": data[:-1],
        "flip-magic": flip(2),
        "flip-checksum": flip(10),
        "flip-header": flip(60),
        "flip-payload": flip(len(data) - 100),
        "appended": data + b"\x00",
    }


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_corruption_is_detected(kind: IndexKind, tmp_path: Path, vecs: Vecs) -> None:
    path = tmp_path / "c.idx"
    _built(kind, vecs).save(path)
    good = path.read_bytes()
    for name, bad in _corruptions(good).items():
        path.write_bytes(bad)
        with pytest.raises(VectorIndexError):
            FaissIndex.load(path)
        assert name  # each corruption variant raised
    with pytest.raises(VectorIndexError, match="cannot read"):
        FaissIndex.load(tmp_path / "missing.idx")


def test_consistent_checksum_but_wrong_contents_is_detected(tmp_path: Path, vecs: Vecs) -> None:
    """A well-formed file whose header lies about the faiss payload is refused too."""
    from costeer_lab.index._persist import decode_index_file, encode_index_file

    path = tmp_path / "h.idx"
    _built("exact", vecs).save(path)
    header, payload = decode_index_file(path.read_bytes(), "h.idx")
    for key, value in [("dim", 12), ("kind", "hnsw"), ("ntotal", 3), ("labels", [0])]:
        path.write_bytes(encode_index_file({**header, key: value}, payload))
        with pytest.raises(VectorIndexError):
            FaissIndex.load(path)
    path.write_bytes(encode_index_file({**header, "format": 99}, payload))
    with pytest.raises(VectorIndexError, match="format 99"):
        FaissIndex.load(path)


def test_failed_save_keeps_the_old_file(
    tmp_path: Path, vecs: Vecs, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "keep.idx"
    old = _built("exact", vecs)
    old.save(path)
    before = path.read_bytes()
    bigger = _built("exact", vecs)
    bigger.add(["extra"], vecs(1, 24, seed=25))

    def crash(*args: object) -> None:
        raise OSError("disk full (simulated)")

    monkeypatch.setattr("os.replace", crash)
    with pytest.raises(OSError, match="simulated"):
        bigger.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["keep.idx"]
    assert "extra" not in FaissIndex.load(path)


def test_every_single_byte_flip_is_detected(tmp_path: Path, vecs: Vecs) -> None:
    small = FaissIndex(4, kind="hnsw", hnsw_m=4)
    small.add([f"s{i}" for i in range(12)], vecs(12, 4, seed=26))
    path = tmp_path / "s.idx"
    small.save(path)
    good = path.read_bytes()
    for pos in range(0, len(good), max(1, len(good) // 300)):
        path.write_bytes(good[:pos] + bytes([good[pos] ^ 0x01]) + good[pos + 1 :])
        with pytest.raises(VectorIndexError):
            FaissIndex.load(path)
