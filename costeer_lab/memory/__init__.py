"""Pattern and failure memory: what worked and what went wrong, for any agent to reuse.

* :class:`PatternMemory` — working code as reusable templates, found by similarity above a
  threshold calibrated per embedder (:func:`calibrate`, :data:`CALIBRATED_THRESHOLDS`), ranked
  with their success rate, with usage counted on retrieval and success rates from recorded
  outcomes; code that failed, holds a credential or fails the write gate
  (:func:`check_code_security`, tests re-run in the sandbox by :func:`verify_pattern`) is
  refused with a clear reason.
* :class:`FailureMemory` — failures with the knowledge base's error fingerprint, their
  solutions, and a search returning only solved failures; plain syntax typos and
  infrastructure errors are not stored (:func:`skip_reason`, the rule of the error
  fingerprints, re-exported here with :func:`is_skippable_failure`).
* Metrics — :func:`memory_stats` (a dict) and DataFrame views for notebooks.
* Backends by store URL — ``sqlite:///…`` searches with FAISS, ``postgresql://…`` in the
  database with pgvector (:func:`open_memory`).
* :class:`MemoryStrategy` — the "pattern memory" arm of the evolution loop.

Example:
    >>> from costeer_lab.memory import open_memory
    >>> memory = open_memory(":memory:", embedder="hashing")
    >>> pid = memory.patterns.store_pattern("sum of a list", "def f(xs):\\n    return sum(xs)")
    >>> memory.stats()["patterns"]
    1
"""

from costeer_lab._fingerprint import skip_reason
from costeer_lab.memory._calibrate import (
    CALIBRATED_THRESHOLDS,
    Calibration,
    calibrate,
    calibrated_threshold,
    register_threshold,
)
from costeer_lab.memory._calibration_set import calibration_pairs
from costeer_lab.memory._failure import FailureMatch, FailureMemory
from costeer_lab.memory._gate import SecurityFinding, check_code_security
from costeer_lab.memory._memory import Memory, open_memory
from costeer_lab.memory._pattern import PatternMatch, PatternMemory, pattern_text
from costeer_lab.memory._secrets import scan_credentials
from costeer_lab.memory._stats import (
    failure_frame,
    hit_rate,
    hit_rate_frame,
    memory_stats,
    pattern_frame,
    search_frame,
)
from costeer_lab.memory._strategy import LoopMemory, MemoryStrategy, memory_arm
from costeer_lab.memory._template import make_template
from costeer_lab.memory._vectors import has_native_search
from costeer_lab.memory._verify import Verification, verify_pattern

__all__ = [
    "CALIBRATED_THRESHOLDS",
    "Calibration",
    "FailureMatch",
    "FailureMemory",
    "LoopMemory",
    "Memory",
    "MemoryStrategy",
    "PatternMatch",
    "PatternMemory",
    "SecurityFinding",
    "Verification",
    "calibrate",
    "calibrated_threshold",
    "calibration_pairs",
    "check_code_security",
    "failure_frame",
    "has_native_search",
    "hit_rate",
    "hit_rate_frame",
    "make_template",
    "memory_arm",
    "memory_stats",
    "open_memory",
    "pattern_frame",
    "pattern_text",
    "register_threshold",
    "scan_credentials",
    "search_frame",
    "skip_reason",
    "verify_pattern",
]
