"""numpy <-> pgvector ``vector`` in psycopg's binary format (exact float32, no text detour).

The binary form of a ``vector`` is ``uint16 dim, uint16 0, dim × float32`` (big-endian), so a
float32 array round-trips bit for bit (``-0.0``, subnormals and extremes included). Registered
on one connection by :func:`register_vector_adapters`; after that a 1-D ``np.ndarray`` passed
with a ``%b`` placeholder is sent as a ``vector``, and ``vector`` columns of a ``binary=True``
query come back as fresh float32 arrays.

Example:
    >>> import numpy as np
    >>> data = dump_vector(np.array([1.5, -0.0], dtype=np.float32))
    >>> load_vector(data).tolist()
    [1.5, -0.0]
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

import numpy as np

from costeer_lab.errors import InvalidInputError

if TYPE_CHECKING:
    import numpy.typing as npt
    import psycopg

__all__ = ["dump_vector", "load_vector", "register_vector_adapters"]

_BE_F32 = np.dtype(">f4")
_HEADER = struct.Struct(">HH")
#: pgvector's limit on the dimension of a ``vector``.
MAX_DIM = 16000


def dump_vector(vector: npt.ArrayLike) -> bytes:
    """The binary ``vector`` wire form of a 1-D float array.

    Raises:
        InvalidInputError: not 1-D, or more dimensions than pgvector stores.
    """
    arr = np.ascontiguousarray(vector, dtype=_BE_F32)
    if arr.ndim != 1 or not 1 <= arr.shape[0] <= MAX_DIM:
        raise InvalidInputError(
            f"a pgvector vector must be 1-D with 1..{MAX_DIM} values, got shape {arr.shape}"
        )
    return _HEADER.pack(arr.shape[0], 0) + arr.tobytes()


def load_vector(data: bytes | bytearray | memoryview) -> npt.NDArray[np.float32]:
    """A fresh float32 array from the binary ``vector`` wire form."""
    dim, _ = _HEADER.unpack_from(data)
    return np.frombuffer(data, dtype=_BE_F32, count=dim, offset=_HEADER.size).astype(np.float32)


def register_vector_adapters(conn: psycopg.Connection[Any]) -> None:
    """Send ``np.ndarray`` parameters as ``vector`` and load ``vector`` columns as arrays.

    Raises:
        StoreError: the database has no ``vector`` type (pgvector is not installed).
    """
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    from costeer_lab.errors import StoreError

    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise StoreError("the database has no 'vector' type: install the pgvector extension")
    vector_oid = info.oid

    class _VectorDumper(Dumper):
        format = Format.BINARY
        oid = vector_oid

        def dump(self, obj: Any) -> bytes:
            return dump_vector(obj)

    class _VectorLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> Any:
            return load_vector(data)

    conn.adapters.register_dumper(np.ndarray, _VectorDumper)
    conn.adapters.register_loader(vector_oid, _VectorLoader)
