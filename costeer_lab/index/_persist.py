"""The on-disk format of a vector index (no pickle); files are written with
:func:`costeer_lab._fs.atomic_write_bytes`.

Layout of an index file::

    magic   8 bytes   b"CLVIDX01"
    sha256 32 bytes   digest of everything after it
    hlen    8 bytes   little-endian length of the JSON header
    header  hlen      UTF-8 JSON: format version, kind, dim, embedder id, id mapping, params, ...
    payload rest      faiss.serialize_index bytes

Any truncation, flipped byte or malformed header raises
:class:`~costeer_lab.errors.VectorIndexError`.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable
from typing import Any, BinaryIO

from costeer_lab.errors import VectorIndexError

__all__ = [
    "FORMAT_VERSION",
    "decode_index_file",
    "encode_index_file",
    "read_index_header",
    "write_index_file",
]

FORMAT_VERSION = 2  # 2: the header holds the collection's etag
_MAGIC = b"CLVIDX01"
_PREFIX = len(_MAGIC) + 32 + 8


def encode_index_file(header: dict[str, Any], payload: bytes | memoryview) -> bytes:
    """Return the bytes of an index file holding ``header`` (JSON) and ``payload``.

    Example:
        >>> data = encode_index_file({"format": FORMAT_VERSION}, b"xyz")
        >>> header, payload = decode_index_file(data, "<mem>")
        >>> header, bytes(payload)
        ({'format': 2}, b'xyz')
    """
    head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    body = struct.pack("<Q", len(head)) + head + payload
    return _MAGIC + hashlib.sha256(body).digest() + body


def write_index_file(
    f: BinaryIO, header: dict[str, Any], payload: Callable[[Callable[[bytes], object]], None]
) -> None:
    """Write the bytes of :func:`encode_index_file` to a seekable file, the payload streamed:
    ``payload(put)`` calls ``put`` with consecutive pieces of it (the checksum is computed as
    they pass and written in its place last), so the whole file is never held in memory.

    Example:
        >>> import io
        >>> f = io.BytesIO()
        >>> write_index_file(f, {"format": FORMAT_VERSION}, lambda put: (put(b"x"), put(b"yz")))
        >>> f.getvalue() == encode_index_file({"format": FORMAT_VERSION}, b"xyz")
        True
    """
    head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    start = f.tell()
    f.write(_MAGIC + bytes(32))
    h = hashlib.sha256()

    def put(piece: bytes) -> None:
        h.update(piece)
        f.write(piece)

    put(struct.pack("<Q", len(head)) + head)
    payload(put)
    end = f.tell()
    f.seek(start + len(_MAGIC))
    f.write(h.digest())
    f.seek(end)


def decode_index_file(data: bytes, source: str) -> tuple[dict[str, Any], memoryview]:
    """Split and verify the bytes of an index file; ``source`` names it in errors.

    The payload is a view into ``data``, not a copy (an index file is mostly payload: a copy
    would double the peak memory of opening a large index).

    Raises:
        VectorIndexError: wrong magic, truncated file, checksum mismatch or malformed header.
    """
    if len(data) < _PREFIX:
        raise VectorIndexError(
            f"index file {source} is truncated: {len(data)} bytes, expected at least {_PREFIX}"
        )
    if data[: len(_MAGIC)] != _MAGIC:
        raise VectorIndexError(
            f"{source} is not a costeer_lab index file (magic {data[:8]!r}, expected {_MAGIC!r})"
        )
    digest = data[len(_MAGIC) : len(_MAGIC) + 32]
    body = memoryview(data)[len(_MAGIC) + 32 :]
    if hashlib.sha256(body).digest() != digest:
        raise VectorIndexError(f"index file {source} is corrupt: sha256 checksum mismatch")
    (hlen,) = struct.unpack("<Q", body[:8])
    if hlen > len(body) - 8:
        raise VectorIndexError(f"index file {source} is corrupt: header length {hlen} too large")
    return _header(bytes(body[8 : 8 + hlen]), source), body[8 + hlen :]


def read_index_header(f: BinaryIO, source: str) -> dict[str, Any]:
    """Verify an index file open for reading a chunk at a time (as :func:`decode_index_file`,
    with the same errors) and return its header; ``f`` is left at the start of the payload, so
    the payload is read from the file and never held whole in memory besides the index.

    Example:
        >>> import io
        >>> f = io.BytesIO(encode_index_file({"format": FORMAT_VERSION}, b"xyz"))
        >>> read_index_header(f, "<mem>"), f.read()
        ({'format': 2}, b'xyz')
    """
    prefix = f.read(_PREFIX)
    if len(prefix) < _PREFIX:
        raise VectorIndexError(
            f"index file {source} is truncated: {len(prefix)} bytes, expected at least {_PREFIX}"
        )
    if prefix[: len(_MAGIC)] != _MAGIC:
        raise VectorIndexError(
            f"{source} is not a costeer_lab index file (magic {prefix[:8]!r}, expected {_MAGIC!r})"
        )
    digest = prefix[len(_MAGIC) : len(_MAGIC) + 32]
    h = hashlib.sha256(prefix[len(_MAGIC) + 32 :])
    size = _PREFIX
    while chunk := f.read(1 << 20):
        h.update(chunk)
        size += len(chunk)
    if h.digest() != digest:
        raise VectorIndexError(f"index file {source} is corrupt: sha256 checksum mismatch")
    (hlen,) = struct.unpack("<Q", prefix[_PREFIX - 8 :])
    if hlen > size - _PREFIX:
        raise VectorIndexError(f"index file {source} is corrupt: header length {hlen} too large")
    f.seek(_PREFIX)
    return _header(f.read(hlen), source)


def _header(raw: bytes, source: str) -> dict[str, Any]:
    """The JSON header of an index file, checked (object, format version)."""
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VectorIndexError(f"index file {source} has a malformed header: {exc}") from exc
    if not isinstance(header, dict):
        raise VectorIndexError(f"index file {source} header is not a JSON object")
    if header.get("format") != FORMAT_VERSION:
        raise VectorIndexError(
            f"index file {source} has format {header.get('format')!r}, expected {FORMAT_VERSION}"
        )
    return header
