"""HDF5 factor outputs, decoded where untrusted data may be parsed: in the candidate's runner.

HDF5 readers are not safe on untrusted files (pandas stores object columns as pickles, and
PyTables unpickles them on read), so the trusted process never opens a candidate's ``.h5``:
:func:`decode_output` runs :data:`DECODER` — a small script of ours — in the runner (the
sandbox for candidates), with the file as its only input, and takes back Parquet bytes, which
:func:`~costeer_lab.evaluate._factor_checks.read_factor` then checks like any Parquet output.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from costeer_lab.evaluate._protocol import Runner
from costeer_lab.records import Workspace

__all__ = ["DECODER", "HDF_SUFFIXES", "decode_output", "is_hdf"]

HDF_SUFFIXES = (".h5", ".hdf5", ".hdf")
_DECODED = "decoded.parquet"

#: The decoder script (``{name}``, ``{max_rows}`` filled in): one key, one column or a Series.
DECODER = """\
import sys
import pandas as pd

try:
    with pd.HDFStore({name!r}, mode="r") as store:
        keys = store.keys()
        if len(keys) != 1:
            sys.exit(f"{name} holds {{len(keys)}} keys {{keys[:5]}}; expected exactly one")
        obj = store[keys[0]]
except SystemExit:
    raise
except Exception as exc:
    why = " ".join(str(exc).split())[:300]
    sys.exit(f"{name} could not be read as HDF5 ({{type(exc).__name__}}: {{why}})")
if isinstance(obj, pd.Series):
    obj = obj.to_frame(obj.name if obj.name is not None else "factor")
if len(obj) > {max_rows}:
    sys.exit(f"{name} has {{len(obj)}} rows; at most {max_rows} are read")
obj.columns = [str(c) for c in obj.columns]
obj.to_parquet({decoded!r})
"""


def is_hdf(name: str) -> bool:
    """Whether an output file name is an HDF5 file (by its suffix).

    Example:
        >>> is_hdf("result.h5"), is_hdf("result.parquet")
        (True, False)
    """
    return name.lower().endswith(HDF_SUFFIXES)


def decode_output(
    runner: Runner, data: bytes, name: str, *, max_rows: int = 5_000_000
) -> tuple[bytes, str | None]:
    """``(Parquet bytes, None)``, or ``(b"", problem)`` when the file cannot be decoded.

    Example:
        >>> import io, pandas as pd
        >>> from costeer_lab.evaluate import InProcessRunner
        >>> path = Path(tempfile.mkdtemp()) / "r.h5"
        >>> pd.DataFrame({"f": [1.0]}).to_hdf(path, key="data")
        >>> out, problem = decode_output(InProcessRunner(), path.read_bytes(), "r.h5")
        >>> problem, pd.read_parquet(io.BytesIO(out))["f"].tolist()
        (None, [1.0])
    """
    code = DECODER.format(name=name, max_rows=int(max_rows), decoded=_DECODED)
    with tempfile.TemporaryDirectory(prefix="costeer_hdf_") as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        outcome = runner.run(Workspace({"main.py": code}), inputs={name: path}, collect=[_DECODED])
    decoded = outcome.outputs.get(_DECODED)
    if decoded is not None and outcome.returncode == 0:
        return decoded, None
    tail = [ln for ln in (outcome.stderr or "").strip().splitlines() if ln.strip()]
    why = tail[-1][:400] if tail else outcome.error or f"exit code {outcome.returncode}"
    return b"", f"output: {why}"
