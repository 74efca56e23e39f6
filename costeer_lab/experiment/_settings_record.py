"""The effective settings of a run, recorded in ``<out>/settings.json``, and the resume check.

``settings.json`` holds every field of :class:`~costeer_lab.settings.Settings` as the run saw
it (secrets redacted: API keys become ``"***"``, passwords in URLs ``***``), the names of the
``COSTEER_LAB_*`` variables that were set, and the fields a resume compares.

A resume (the same spec into the same ``--out``) is refused when a field that can change
results differs from the recorded one (:data:`RESULT_FIELDS` minus :data:`NOT_COMPARED`):

- compared: ``embedder`` and the sections ``rag``, ``evaluator``, ``llm``, ``sandbox``,
  ``memory``, ``context``, ``docs``, ``minilm`` — retrieval, acceptance rules, the model and its
  sampling, what candidates may import and how they are bounded;
- not compared: secrets, endpoints and transport (``llm.api_key``, ``llm.base_url``, time-outs,
  retries, backoff, ``llm.cache_mode``, the ``openai`` section), machine-local paths and
  capacity (``cache_dir``, ``store_url``, ``db_path``, ``collection``, ``sandbox.lock_dir``,
  ``sandbox.tmp_dir``, uid slots, start-up and warm-up), and speed only (``index``,
  ``minilm.intra_op_threads`` / ``batch_size``, ``docs.progress_min_files``).

A field missing from either record (added or removed by a code change) is not compared, and a
run folder without ``settings.json`` (written before settings were recorded) resumes as before.

Example:
    >>> from costeer_lab.settings import Settings
    >>> old = settings_record(Settings())
    >>> new = settings_record(Settings(rag={"max_former_traces": 5}, cache_dir="/elsewhere"))
    >>> settings_differences(old, new)
    ['COSTEER_LAB_RAG__MAX_FORMER_TRACES was 3, now 5']
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from costeer_lab._fs import atomic_write_bytes
from costeer_lab._provenance import run_provenance
from costeer_lab._redact import redact_url
from costeer_lab.errors import ConfigurationError
from costeer_lab.settings import ENV_PREFIX, env_name

__all__ = [
    "NOT_COMPARED",
    "RESULT_FIELDS",
    "SETTINGS_FILE",
    "check_settings_resume",
    "settings_differences",
    "settings_record",
    "write_settings_record",
]

#: The record of a run's settings: ``<out>/settings.json``.
SETTINGS_FILE = "settings.json"

#: Top-level fields and whole sections whose values can change a run's results.
RESULT_FIELDS = (
    "embedder",
    "rag",
    "evaluator",
    "llm",
    "sandbox",
    "memory",
    "context",
    "docs",
    "minilm",
)

#: Fields of those sections that cannot change results: secrets, endpoints, transport,
#: machine-local paths and capacity, speed.
NOT_COMPARED = frozenset(
    {
        "llm.api_key",
        "llm.base_url",
        "llm.timeout_s",
        "llm.max_retries",
        "llm.backoff_initial_s",
        "llm.backoff_max_s",
        "llm.cache_mode",
        "sandbox.uid_base",
        "sandbox.uid_slots",
        "sandbox.lock_dir",
        "sandbox.tmp_dir",
        "sandbox.start_timeout_s",
        "sandbox.response_grace_s",
        "sandbox.warm_spares",
        "sandbox.warm_up_rounds",
        "memory.store_url",
        "docs.progress_min_files",
        "minilm.intra_op_threads",
        "minilm.batch_size",
    }
)

_SECRET_KEYS = ("api_key", "password", "token", "secret")
_URL_KEYS = ("store_url", "base_url", "db_path", "url")


def _redact(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, key) for v in value]
    if isinstance(value, str) and value and any(s in key.lower() for s in _SECRET_KEYS):
        return "***"
    if isinstance(value, str) and key.lower().endswith(_URL_KEYS):
        return redact_url(value)
    return value


def _compared(settings: dict[str, Any]) -> dict[str, Any]:
    """``dotted field -> value`` of every compared field present in a settings dump."""
    out: dict[str, Any] = {}
    for name in RESULT_FIELDS:
        if name not in settings:
            continue
        value = settings[name]
        if not isinstance(value, dict):
            out[name] = value
            continue
        for field, sub in value.items():
            dotted = f"{name}.{field}"
            if dotted not in NOT_COMPARED:
                out[dotted] = sub
    return out


def settings_record(settings: BaseModel) -> dict[str, Any]:
    """The JSON document of ``settings.json`` for ``settings`` (secrets redacted)."""
    dump = _redact(settings.model_dump(mode="json"))
    return {
        "settings": dump,
        "environment": sorted(n for n in os.environ if n.upper().startswith(ENV_PREFIX)),
        "compared": sorted(_compared(dump)),
    }


def _show(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 40 else text[:37] + "..."


def settings_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The compared fields whose values differ between two records, as
    ``<VARIABLE> was <old>, now <new>`` (a field missing from either one is skipped)."""
    before = _compared(old.get("settings", {}))
    after = _compared(new.get("settings", {}))
    return [
        f"{env_name(*field.split('.'))} was {_show(before[field])}, now {_show(after[field])}"
        for field in sorted(set(before) & set(after))
        if before[field] != after[field]
    ]


def check_settings_resume(out_dir: Path, settings: BaseModel, *, resume: bool) -> None:
    """Refuse to resume the run in ``out_dir`` with settings that change results.

    Nothing is compared without ``resume``, or when ``out_dir`` holds no ``settings.json`` (a
    new folder, or a run recorded before settings were).

    Raises:
        ConfigurationError: the differing settings, with their variables and both values.

    Example:
        >>> import tempfile
        >>> from costeer_lab.settings import Settings
        >>> check_settings_resume(Path(tempfile.mkdtemp()), Settings(), resume=True)
    """
    path = out_dir / SETTINGS_FILE
    if not (resume and path.is_file()):
        return
    try:
        previous = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(previous, dict):
            raise ValueError("not a JSON object")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigurationError(
            f"{str(path)!r} is unreadable ({exc}); use another --out or --fresh"
        ) from None
    diff = settings_differences(previous, settings_record(settings))
    if diff:
        shown = "; ".join(diff[:4]) + (" …" if len(diff) > 4 else "")
        raise ConfigurationError(
            f"{str(out_dir)!r} holds a run made with other settings ({shown}); set them back "
            "to resume, or use another --out, or --fresh to replace that run"
        )


def write_settings_record(out_dir: Path, settings: BaseModel) -> None:
    """Write ``<out_dir>/settings.json`` atomically, with the ``run`` block: the code version and
    commit, the machine, and when this run (or its latest resume) started."""
    record = {**settings_record(settings), "run": run_provenance()}
    text = json.dumps(record, indent=2, sort_keys=True)
    atomic_write_bytes(out_dir / SETTINGS_FILE, text.encode("utf-8"))
