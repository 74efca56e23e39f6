"""Adaptation of a factor script's input/output conventions between tasks of two suites.

Public task fields say how a factor script talks to its files: ``extra["input_file"]`` and
``extra["output_file"]`` (Parquet or HDF5 by suffix) and ``extra["field_prefix"]`` (``"$"`` when
the table's columns keep the ``$`` of the formulation, as in RD-Agent's ``daily_pv.h5``). When
they differ between the source and target tasks, the source code's string literals naming the
files or bare field columns and its ``read_parquet``/``to_parquet`` calls are rewritten token by
token (``to_parquet("result.parquet")`` → ``to_hdf("result.h5", key="data")``). Nothing else.
"""

from __future__ import annotations

import ast
import io
import tokenize

from costeer_lab.records import Task

__all__ = ["adapt_io"]

_FIELDS = ("open", "high", "low", "close", "volume", "vwap", "factor")
_HDF = (".h5", ".hdf5", ".hdf")


def _io(task: Task) -> tuple[str, str, str]:
    e = task.extra
    return (
        str(e.get("input_file", "")),
        str(e.get("output_file", "")),
        str(e.get("field_prefix", "")),
    )


def _hdf(name: str) -> bool:
    return name.lower().endswith(_HDF)


def adapt_io(code: str, source: Task, target: Task) -> str:
    """``code`` of ``source`` with the file and column conventions of ``target``.

    Example:
        >>> src = Task("s", "A", "", extra={"input_file": "pv.parquet",
        ...                                 "output_file": "result.parquet"})
        >>> dst = Task("t", "B", "", extra={"input_file": "pv.h5", "output_file": "r.h5",
        ...                                 "field_prefix": "$"})
        >>> print(adapt_io('df = pd.read_parquet("pv.parquet")\\nx = df["close"]\\n'
        ...                'x.to_frame("B").to_parquet("result.parquet")\\n', src, dst), end="")
        df = pd.read_hdf("pv.h5")
        x = df["$close"]
        x.to_frame("B").to_hdf("r.h5", key="data")
    """
    (s_in, s_out, s_pre), (t_in, t_out, t_pre) = _io(source), _io(target)
    if (s_in, s_out, s_pre) == (t_in, t_out, t_pre) or not (t_in and t_out):
        return code
    strings = {}
    if s_in and s_in != t_in:
        strings[s_in] = t_in
    if s_out and s_out != t_out:
        strings[s_out] = t_out
    if s_pre != t_pre:
        strings.update({f"{s_pre}{f}": f"{t_pre}{f}" for f in _FIELDS})
    names = {}
    if s_in and _hdf(t_in) != _hdf(s_in):
        names["read_parquet" if _hdf(t_in) else "read_hdf"] = (
            "read_hdf" if _hdf(t_in) else "read_parquet"
        )
    to_hdf = bool(s_out) and _hdf(t_out) and not _hdf(s_out)
    if to_hdf:
        names["to_parquet"] = "to_hdf"
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return code
    starts = [0]
    for line in io.StringIO(code).readlines():
        starts.append(starts[-1] + len(line))
    edits: list[tuple[int, int, str]] = []
    for i, tok in enumerate(tokens):
        new = tok.string
        if tok.type == tokenize.NAME and tok.string in names:
            new = names[tok.string]
        elif tok.type == tokenize.STRING:
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str) and value in strings:
                quote = tok.string[-1]
                new = f"{quote}{strings[value]}{quote}"
                if to_hdf and value == s_out and i >= 2 and tokens[i - 2].string == "to_parquet":
                    new += ', key="data"'
        if new != tok.string:
            begin = starts[tok.start[0] - 1] + tok.start[1]
            end = starts[tok.end[0] - 1] + tok.end[1]
            edits.append((begin, end, new))
    out = code
    for begin, end, new in sorted(edits, reverse=True):
        out = out[:begin] + new + out[end:]
    return out
