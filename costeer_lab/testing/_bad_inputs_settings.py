"""Bad inputs: environment variables (``COSTEER_LAB_*``) and the effective settings of a run.

Gathered by :mod:`costeer_lab.testing._bad_inputs` (see ``_bad_inputs_base`` for the shape).
Every command refuses an unknown variable and a bad value before it writes anything; ``run``
also refuses directories it cannot use, and a resume whose settings would change results
(``runs/good`` records the settings it ran with in ``settings.json``). Each ``run`` case has an
``--out`` of its own (every case's command line is distinct).
"""

from __future__ import annotations

from typing import Any

from costeer_lab.testing._bad_inputs_base import BadInput, case, spec_variant

_AREA = "settings"


def _run(label: str, what: str, env: dict[str, str], expect: str) -> BadInput:
    """``run specs/good.yaml --out runs/env-<label>`` with ``env`` must fail with ``expect``."""
    argv = ["run", "specs/good.yaml", "--out", f"runs/env-{label}"]
    return case(f"settings-{label}", _AREA, what, argv, expect, env=env)


#: The cases of this module.
CASES: tuple[BadInput, ...] = (
    _run(
        "field-typo",
        "misspelt variable `COSTEER_LAB_RAG__MAX_FORMER_TRACE`",
        {"COSTEER_LAB_RAG__MAX_FORMER_TRACE": "5"},
        "environment: COSTEER_LAB_RAG__MAX_FORMER_TRACE is not a setting; "
        "did you mean COSTEER_LAB_RAG__MAX_FORMER_TRACES?",
    ),
    _run(
        "section-typo",
        "misspelt section `COSTEER_LAB_RAGG__MAX_FORMER_TRACES`",
        {"COSTEER_LAB_RAGG__MAX_FORMER_TRACES": "5"},
        "did you mean COSTEER_LAB_RAG__MAX_FORMER_TRACES?",
    ),
    _run(
        "top-typo",
        "misspelt top-level variable `COSTEER_LAB_EMBEDER`",
        {"COSTEER_LAB_EMBEDER": "hashing"},
        "COSTEER_LAB_EMBEDER is not a setting; did you mean COSTEER_LAB_EMBEDDER?",
    ),
    case(
        "settings-kb-typo",
        _AREA,
        "`kb stats` with a misspelt variable `COSTEER_LAB_STORE_ULR`",
        ["kb", "stats", "runs/good/kb/v2-seed0.db"],
        "COSTEER_LAB_STORE_ULR is not a setting; did you mean COSTEER_LAB_STORE_URL?",
        env={"COSTEER_LAB_STORE_ULR": "sqlite:///x.db"},
    ),
    case(
        "settings-report-unknown",
        _AREA,
        "`report` with a variable no code reads (`COSTEER_LAB_COLOUR`)",
        ["report", "runs/good"],
        "environment: COSTEER_LAB_COLOUR is not a setting; known after COSTEER_LAB_:",
        env={"COSTEER_LAB_COLOUR": "blue"},
    ),
    _run(
        "embedder",
        "`COSTEER_LAB_EMBEDDER=hashin` (unknown embedder)",
        {"COSTEER_LAB_EMBEDDER": "hashin"},
        "environment: COSTEER_LAB_EMBEDDER: unknown embedder 'hashin'",
    ),
    _run(
        "memory-embedder",
        "`COSTEER_LAB_MEMORY__EMBEDDER=openai:` (no model)",
        {"COSTEER_LAB_MEMORY__EMBEDDER": "openai:"},
        "environment: COSTEER_LAB_MEMORY__EMBEDDER: embedder name 'openai:' needs a model",
    ),
    _run(
        "store-scheme",
        "`COSTEER_LAB_STORE_URL=mysql://x` (unsupported scheme)",
        {"COSTEER_LAB_STORE_URL": "mysql://x"},
        "environment: COSTEER_LAB_STORE_URL: unsupported store URL scheme 'mysql'",
    ),
    _run(
        "store-slashes",
        "`COSTEER_LAB_STORE_URL=sqlite:/x.db` (a URL missing `//`)",
        {"COSTEER_LAB_STORE_URL": "sqlite:/x.db"},
        "environment: COSTEER_LAB_STORE_URL: malformed store URL 'sqlite:/x.db'",
    ),
    _run(
        "memory-store-typo",
        "`COSTEER_LAB_MEMORY__STORE_URL=postgress://db/lab` (scheme typo)",
        {"COSTEER_LAB_MEMORY__STORE_URL": "postgress://db/lab"},
        "COSTEER_LAB_MEMORY__STORE_URL: unsupported store URL scheme 'postgress'",
    ),
    _run(
        "cache-dir",
        "`COSTEER_LAB_CACHE_DIR=/proc/nope` (cannot be created)",
        {"COSTEER_LAB_CACHE_DIR": "/proc/nope"},
        "environment: COSTEER_LAB_CACHE_DIR: '/proc/nope' cannot be created",
    ),
    _run(
        "cache-dir-file",
        "`COSTEER_LAB_CACHE_DIR=notes.txt` (a file)",
        {"COSTEER_LAB_CACHE_DIR": "notes.txt"},
        "environment: COSTEER_LAB_CACHE_DIR: 'notes.txt' is not a directory",
    ),
    _run(
        "tmp-dir",
        "`COSTEER_LAB_SANDBOX__TMP_DIR=/nonexistent`",
        {"COSTEER_LAB_SANDBOX__TMP_DIR": "/nonexistent"},
        "environment: COSTEER_LAB_SANDBOX__TMP_DIR: '/nonexistent' does not exist",
    ),
    _run(
        "lock-dir",
        "`COSTEER_LAB_SANDBOX__LOCK_DIR=/proc/nope`",
        {"COSTEER_LAB_SANDBOX__LOCK_DIR": "/proc/nope"},
        "environment: COSTEER_LAB_SANDBOX__LOCK_DIR: '/proc/nope' cannot be created",
    ),
    _run(
        "int-word",
        "`COSTEER_LAB_RAG__MAX_FORMER_TRACES=lots`",
        {"COSTEER_LAB_RAG__MAX_FORMER_TRACES": "lots"},
        "environment: COSTEER_LAB_RAG__MAX_FORMER_TRACES: Input should be a valid integer",
    ),
    _run(
        "int-negative",
        "`COSTEER_LAB_RAG__MAX_FORMER_TRACES=-1`",
        {"COSTEER_LAB_RAG__MAX_FORMER_TRACES": "-1"},
        "COSTEER_LAB_RAG__MAX_FORMER_TRACES: Input should be greater than or equal to 0",
    ),
    _run(
        "bool",
        "`COSTEER_LAB_RAG__DROP_DETERIORATED=maybe`",
        {"COSTEER_LAB_RAG__DROP_DETERIORATED": "maybe"},
        "COSTEER_LAB_RAG__DROP_DETERIORATED: Input should be a valid boolean",
    ),
    _run(
        "float",
        "`COSTEER_LAB_EVALUATOR__EQUAL_VALUE_THRESHOLD=high`",
        {"COSTEER_LAB_EVALUATOR__EQUAL_VALUE_THRESHOLD": "high"},
        "COSTEER_LAB_EVALUATOR__EQUAL_VALUE_THRESHOLD: Input should be a valid number",
    ),
    _run(
        "float-range",
        "`COSTEER_LAB_LLM__TEMPERATURE=3` (above 2)",
        {"COSTEER_LAB_LLM__TEMPERATURE": "3"},
        "COSTEER_LAB_LLM__TEMPERATURE: Input should be less than or equal to 2",
    ),
    _run(
        "choice",
        "`COSTEER_LAB_EVALUATOR__FEEDBACK_DETAIL=verbose`",
        {"COSTEER_LAB_EVALUATOR__FEEDBACK_DETAIL": "verbose"},
        "COSTEER_LAB_EVALUATOR__FEEDBACK_DETAIL: Input should be 'verdict', 'diagnostics' or",
    ),
    _run(
        "json-list",
        "`COSTEER_LAB_SANDBOX__PACKAGES=numpy` (not a JSON list)",
        {"COSTEER_LAB_SANDBOX__PACKAGES": "numpy"},
        "environment: COSTEER_LAB_SANDBOX__PACKAGES: expected a JSON value",
    ),
    case(
        "settings-resume-changed",
        _AREA,
        "resume of `runs/good` with `COSTEER_LAB_RAG__MAX_FORMER_TRACES=5` (it ran with 3)",
        ["run", "specs/settings_resume.yaml", "--out", "runs/good"],
        "holds a run made with other settings (COSTEER_LAB_RAG__MAX_FORMER_TRACES was 3, now 5)",
        env={"COSTEER_LAB_RAG__MAX_FORMER_TRACES": "5"},
    ),
)
#: Spec file stem -> spec document (written to ``specs/<stem>.yaml``).
SPECS: dict[str, Any] = {
    # the spec runs/good ran (a file of its own: every case's command line is distinct)
    "settings_resume": spec_variant("base"),
}
#: Workspace-relative path -> content (text, bytes, or a document written as YAML).
FILES: dict[str, Any] = {}
