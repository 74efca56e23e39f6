"""Warm-up work for the sandbox worker and its waiting children.

A forked child shares the worker's memory copy-on-write. CPython 3.11 writes to every object it
touches (reference counts), so the first pandas call of a run takes thousands of page faults —
on the reference VM about 4,000 faults and 20-25 ms for a factor script that runs in 45 ms in a
warm process. A spare child has nothing to do until its request comes, so it runs a small
factor-like pandas workload first, at idle CPU priority and stopping as soon as the request
arrives: the pages the candidate will touch are then already its own (measured: 4,000 → 1,100
faults per run).

The workload uses only in-memory buffers and local objects; it leaves no files, no global
state and no random state behind. One trace remains visible: the run starts with one extra
native thread started by pyarrow, which counts toward ``Limits.max_processes`` like the
threads a candidate's own Parquet read starts (three with pandas' defaults).
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import sys
from collections.abc import Callable, Iterator

__all__ = ["idle_warm_up", "run_steps", "warm_up_steps"]


def warm_up_steps() -> Iterator[None]:
    """The warm-up as small steps (about a millisecond each): a Parquet round trip of a small
    (datetime, instrument) panel, per-instrument rolling operators, ``concat``/``reindex`` and a
    Parquet write — the paths of a typical factor script. Yields between steps."""
    import numpy as np
    import pandas as pd

    dates = pd.bdate_range("2020-01-01", periods=60)
    index = pd.MultiIndex.from_product(
        [dates, [f"I{i}" for i in range(4)]], names=["datetime", "instrument"]
    )
    columns = ["open", "high", "low", "close", "volume", "vwap"]
    values = np.random.default_rng(0).random((len(index), len(columns))) + 1.0
    buffer = io.BytesIO()
    pd.DataFrame(values, index=index, columns=columns).to_parquet(buffer)
    yield
    # no thread pool, no pre-buffering: Arrow starts no I/O or CPU pool threads for this read
    panel = pd.read_parquet(io.BytesIO(buffer.getvalue()), use_threads=False, pre_buffer=False)
    by_instrument = panel.sort_index(level=["instrument", "datetime"])
    yield
    pieces = []
    for _, rows in by_instrument.groupby(level="instrument", sort=False):
        close, volume = rows["close"], rows["volume"]
        window = close.rolling(5, min_periods=1)
        piece = window.mean() / close + window.std() + window.max() - window.min()
        piece = piece + close.rolling(5, min_periods=1).corr(np.log(volume + 1))
        piece = piece + window.quantile(0.8) + window.rank() + close.shift(1)
        piece = piece + (close > close.shift(1)).rolling(5, min_periods=1).sum()
        pieces.append(piece.mask(np.isclose(window.std(), 0)))
        yield
    factor = pd.concat(pieces).reindex(panel.index).where(panel["close"].notna())
    factor.to_frame("F").to_parquet(io.BytesIO())
    yield


def run_steps(stop: Callable[[], bool], rounds: int = 1) -> None:
    """Run the warm-up ``rounds`` times, returning early when ``stop()`` turns true."""
    for _ in range(rounds):
        for _ in warm_up_steps():
            if stop():
                return


def idle_warm_up(request_fd: int, rounds: int = 2, delay_s: float = 0.02) -> None:
    """In a spare child: once no request has come for ``delay_s`` (so back-to-back short runs
    never wait for a warm-up step), run the warm-up at ``SCHED_IDLE`` priority until it is done
    or data arrives on ``request_fd``. Root only (a process may only leave ``SCHED_IDLE`` again
    with ``CAP_SYS_NICE``); does nothing without pandas or on other platforms. Never raises."""
    if "pandas" not in sys.modules or not hasattr(os, "SCHED_IDLE") or os.geteuid() != 0:
        return

    def request_waiting(timeout: float = 0.0) -> bool:
        return bool(select.select([request_fd], [], [], timeout)[0])

    try:
        if request_waiting(delay_s):
            return
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except OSError:
        return
    try:
        run_steps(request_waiting, rounds)
    except Exception:  # a warm-up problem must never cost a run
        pass
    finally:  # root may always leave SCHED_IDLE; should it fail, the run still runs, slower
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
