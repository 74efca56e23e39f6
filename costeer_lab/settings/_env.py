"""The ``COSTEER_LAB_*`` environment variables costeer_lab knows, and the ones it does not.

Known names come from two places: the fields of the settings model (top-level fields, each
section as a whole — a JSON object — and each section field joined with ``__``; a field holding
a mapping, such as ``llm.prices``, also takes ``COSTEER_LAB_LLM__PRICES__<KEY>``), and the names
other code reads from ``os.environ`` directly, listed once here in :data:`OTHER_ENV_NAMES` and
:data:`OTHER_ENV_PREFIXES`. Names are compared without regard to case, as pydantic-settings
reads them.

Example:
    >>> from costeer_lab.settings import Settings
    >>> env = {"COSTEER_LAB_RAG__MAX_FORMER_TRACE": "5", "COSTEER_LAB_EMBEDDER": "hashing"}
    >>> unknown_env_names(Settings, env)
    [('COSTEER_LAB_RAG__MAX_FORMER_TRACE', 'COSTEER_LAB_RAG__MAX_FORMER_TRACES')]
    >>> unknown_env_message(*unknown_env_names(Settings, env)[0])
    'COSTEER_LAB_RAG__MAX_FORMER_TRACE is not a setting; did you mean COSTEER_LAB_RAG__MAX_FORMER_TRACES?'
"""  # noqa: E501

from __future__ import annotations

import difflib
import os
import typing
from collections.abc import Mapping

from pydantic import BaseModel

from costeer_lab.errors import did_you_mean

__all__ = [
    "ENV_PREFIX",
    "OTHER_ENV_NAMES",
    "OTHER_ENV_PREFIXES",
    "env_name",
    "known_env_names",
    "unknown_env_message",
    "unknown_env_names",
]

#: The prefix of every environment variable of costeer_lab.
ENV_PREFIX = "COSTEER_LAB_"

#: Variables read from ``os.environ`` outside the settings model (name -> who reads it).
OTHER_ENV_NAMES: dict[str, str] = {
    "COSTEER_LAB_CACHE_DIR": "settings.default_cache_dir (also the field cache_dir)",
    "COSTEER_LAB_DATA_DIR": "settings.default_data_dir (the document KB's data folder)",
    "COSTEER_LAB_REPO_ROOT": "viz._notebook (the checkout the notebooks run from)",
    "COSTEER_LAB_TEST_POSTGRES_URL": "testing._postgres (tests against your own PostgreSQL)",
    "COSTEER_LAB_CHROMIUM": "tools/browser_check.py (the browser of the notebook check)",
    "COSTEER_LAB_INSTALL_CHROMIUM": "Makefile (make test installs Chromium only when set)",
}

#: Prefixes of variable families read outside the settings model (prefix -> who reads them).
OTHER_ENV_PREFIXES: dict[str, str] = {
    "COSTEER_LAB_NB_": "the notebooks' parameters (notebooks/README.md)",
}


def env_name(*path: str) -> str:
    """The environment variable of a settings field path.

    Example:
        >>> env_name("rag", "max_former_traces"), env_name("cache_dir")
        ('COSTEER_LAB_RAG__MAX_FORMER_TRACES', 'COSTEER_LAB_CACHE_DIR')
    """
    return ENV_PREFIX + "__".join(path).upper()


def _is_mapping(annotation: object) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (dict, Mapping):
        return True
    return any(_is_mapping(a) for a in typing.get_args(annotation))


def _section(annotation: object) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _model_names(model: type[BaseModel]) -> tuple[list[str], list[str]]:
    """``(names, prefixes)`` of the fields of ``model`` (upper case)."""
    names: list[str] = []
    prefixes: list[str] = []
    for field, info in model.model_fields.items():
        names.append(env_name(field))
        section = _section(info.annotation)
        if section is None:
            if _is_mapping(info.annotation):
                prefixes.append(env_name(field) + "__")
            continue
        for sub, sub_info in section.model_fields.items():
            names.append(env_name(field, sub))
            if _is_mapping(sub_info.annotation):
                prefixes.append(env_name(field, sub) + "__")
    return names, prefixes


def known_env_names(model: type[BaseModel]) -> list[str]:
    """Every known variable name (upper case, sorted); prefixes of families end in ``_``.

    Example:
        >>> from costeer_lab.settings import Settings
        >>> names = known_env_names(Settings)
        >>> "COSTEER_LAB_SANDBOX__TMP_DIR" in names and "COSTEER_LAB_NB_" in names
        True
    """
    names, prefixes = _model_names(model)
    return sorted({*names, *prefixes, *OTHER_ENV_NAMES, *OTHER_ENV_PREFIXES})


def _known(upper: str, names: set[str], prefixes: tuple[str, ...]) -> bool:
    return upper in names or upper.startswith(prefixes)


def _closest(tail: str, known: set[str], sections: set[str]) -> str | None:
    """The known name closest to ``tail`` (a name without the prefix): within its section when
    that section exists (else the shared section would make every field look close), compared
    without the shared prefix; a section field is not offered a whole section (JSON)."""
    section, sep, field = tail.partition("__")
    if sep and ENV_PREFIX + section in sections:
        start = ENV_PREFIX + section + "__"
        fields = {k.removeprefix(start): k for k in known if k.startswith(start)}
        close = difflib.get_close_matches(field, sorted(fields), n=1)
        return fields[close[0]] if close else None
    tails = {k.removeprefix(ENV_PREFIX): k for k in known if not (sep and k in sections)}
    close = difflib.get_close_matches(tail, sorted(tails), n=1)
    return tails[close[0]] if close else None


def unknown_env_names(
    model: type[BaseModel], environ: Mapping[str, str] | None = None
) -> list[tuple[str, str | None]]:
    """``(name, closest known name or None)`` of each ``COSTEER_LAB_*`` variable of ``environ``
    (default ``os.environ``) that no code reads, sorted by name."""
    env = os.environ if environ is None else environ
    names, model_prefixes = _model_names(model)
    known = set(names) | set(OTHER_ENV_NAMES)
    prefixes = (*model_prefixes, *OTHER_ENV_PREFIXES)
    sections = {
        env_name(f) for f, i in model.model_fields.items() if _section(i.annotation) is not None
    }
    out: list[tuple[str, str | None]] = []
    for name in sorted(env):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or _known(upper, known, prefixes):
            continue
        out.append((name, _closest(upper.removeprefix(ENV_PREFIX), known, sections)))
    return out


def _scope(model: type[BaseModel], name: str) -> tuple[str, list[str]]:
    """``(prefix, names after it)`` of the known names near ``name``: its section's fields, else
    the top-level names (a section shown as ``RAG__…``)."""
    upper = name.upper()
    section, sep, _ = upper.removeprefix(ENV_PREFIX).partition("__")
    info = model.model_fields.get(section.lower()) if sep else None
    sub = None if info is None else _section(info.annotation)
    if sub is not None:
        return env_name(section.lower()) + "__", [f.upper() for f in sub.model_fields]
    top = {
        f.upper() + ("__…" if _section(i.annotation) is not None else "")
        for f, i in model.model_fields.items()
    }
    top |= {n.removeprefix(ENV_PREFIX) for n in OTHER_ENV_NAMES}
    top |= {p.removeprefix(ENV_PREFIX) + "…" for p in OTHER_ENV_PREFIXES}
    return ENV_PREFIX, sorted(top)


def unknown_env_message(name: str, close: str | None, model: type[BaseModel] | None = None) -> str:
    """One line on an unknown variable: the closest known name, or (given ``model``) the known
    names of its section.

    Example:
        >>> from costeer_lab.settings import Settings
        >>> unknown_env_message("COSTEER_LAB_RAG__X", None, Settings)[:67]
        'COSTEER_LAB_RAG__X is not a setting; known after COSTEER_LAB_RAG__:'
    """
    if close is not None:
        return f"{name} is not a setting; did you mean {close}?"
    if model is None:
        return f"{name} is not a setting (see costeer_lab.settings for the known names)"
    prefix, known = _scope(model, name)
    tail = name.upper().removeprefix(prefix)
    return f"{name} is not a setting; known after {prefix}: " + did_you_mean(
        tail, known
    ).removeprefix("known: ")
