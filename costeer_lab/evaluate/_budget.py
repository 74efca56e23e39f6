"""What one candidate's output may cost the trusted process: the budget, in one place.

The evaluator parses files a candidate wrote (a factor's Parquet file, the answers of a
HumanEval-style run) in the trusted process, so a hostile file must not be able to exhaust it.
The budget per candidate output is:

* **CPU**: :data:`TRUSTED_CPU_S` seconds of the evaluating thread's CPU time for decoding one
  output (``time.thread_time``: other threads' and processes' load does not count, so a verdict
  does not depend on how busy the machine is). Decoding that passes it stops, and the output is
  refused as the candidate's failure.
* **Memory**: :data:`TRUSTED_RSS_MB` MiB of resident-memory growth. It is enforced through
  limits checked *before* allocating: a factor file's decoded Arrow data is at most
  :data:`MAX_DECODED_BYTES` (a quarter of the budget: the pandas checks hold a few copies), its
  footer at most :data:`MAX_FOOTER_BYTES`, its schema flat with at most :data:`MAX_COLUMNS`
  columns; an answers file is read up to :data:`MAX_ANSWER_BYTES` bytes and
  :data:`MAX_ANSWER_ITEMS` decoded values in all (the per-value limits of the plain-data codec
  are in :mod:`~costeer_lab.evaluate._plaindata`, which must stay a standalone file).
* **Feedback**: at most :data:`MAX_SECTION_CHARS` characters per feedback section and
  :data:`MAX_FINGERPRINTS` error fingerprints per attempt, so that the whole feedback stays
  under :data:`MAX_FEEDBACK_CHARS` (the red team's bound too).

The red-team harness (:mod:`costeer_lab.testing`) holds whole evaluations to this same budget
(CPU and peak resident memory of the trusted process, per attack, as root and rootless).
"""

from __future__ import annotations

import time

from costeer_lab._fingerprint import MAX_FINGERPRINTS
from costeer_lab.evaluate._plaindata import MAX_DEPTH, MAX_INT_HEX_DIGITS, MAX_ITEMS, MAX_SAME_HASH

__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_ANSWER_ITEMS",
    "MAX_COLUMNS",
    "MAX_DECODED_BYTES",
    "MAX_DEPTH",
    "MAX_FEEDBACK_CHARS",
    "MAX_FINGERPRINTS",
    "MAX_FOOTER_BYTES",
    "MAX_INT_HEX_DIGITS",
    "MAX_ITEMS",
    "MAX_LABEL_BYTES",
    "MAX_SAME_HASH",
    "MAX_SECTION_CHARS",
    "TRUSTED_CPU_S",
    "TRUSTED_RSS_MB",
    "CpuDeadline",
    "clip",
]

#: CPU seconds (this thread's) that decoding one candidate output may take.
TRUSTED_CPU_S = 2.0
#: Resident-memory growth (MiB) one candidate output may cause in the trusted process.
TRUSTED_RSS_MB = 256

#: Decoded Arrow bytes of a factor file (announced by its footer, then counted while reading).
MAX_DECODED_BYTES = 64 * 1024 * 1024
#: Bytes of a Parquet footer (the Thrift metadata parsed before anything else).
MAX_FOOTER_BYTES = 1024 * 1024
#: Columns of a factor file, index columns included (it needs 3: datetime, instrument, value).
MAX_COLUMNS = 16
#: Row groups of a factor file (each costs footer metadata and one dictionary per column).
MAX_ROW_GROUPS = 1024
#: Longest string value (bytes) of a factor file: instrument codes and dates are short.
MAX_LABEL_BYTES = 256
#: Rows decoded at a time (the budgets are checked between batches).
BATCH_ROWS = 65_536

#: Bytes of an answers file that are read at all.
MAX_ANSWER_BYTES = 16_000_000
#: Plain-data items (every value and container) decoded from one answers file.
MAX_ANSWER_ITEMS = 250_000

#: Characters of the whole feedback of an attempt (the red team's bound).
MAX_FEEDBACK_CHARS = 100_000
#: Characters of one feedback section (execution, return_checking): four fit the bound.
MAX_SECTION_CHARS = MAX_FEEDBACK_CHARS // 5


class CpuDeadline:
    """A budget of this thread's CPU time, started at construction.

    Example:
        >>> CpuDeadline(10.0).expired()
        False
    """

    def __init__(self, seconds: float = TRUSTED_CPU_S) -> None:
        self.seconds = seconds
        self.at = time.thread_time() + seconds

    def expired(self) -> bool:
        """Whether the budget is spent."""
        return time.thread_time() > self.at


def clip(text: str, limit: int = MAX_SECTION_CHARS) -> str:
    """``text`` cut to about ``limit`` characters: its head (the verdict line and the first
    errors, the most informative: later ones are often consequences) and a short tail (where a
    traceback ends), saying how much was cut.

    Example:
        >>> clip("abcdefgh", 4)
        'abc\\n… (4 characters cut) …\\nh'
    """
    if len(text) <= limit:
        return text
    tail = limit // 4
    head = limit - tail
    cut = len(text) - head - tail
    return f"{text[:head]}\n… ({cut} characters cut) …\n{text[len(text) - tail :]}"
