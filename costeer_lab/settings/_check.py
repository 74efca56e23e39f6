"""Settings validated when read: unknown variables, bad values, unusable directories.

Each problem is one :class:`~costeer_lab.errors.ConfigurationError` line starting
``environment:`` and naming the variable, for example
``environment: COSTEER_LAB_RAG__MAX_FORMER_TRACES: Input should be a valid integer, unable to
parse string as an integer (got 'lots')``. The library warns (:class:`SettingsWarning`) about a
variable it does not know; the ``costeer-lab`` command refuses it (see
:func:`costeer_lab.settings.check_environment`).

The checks that need other packages (is ``hashin`` an embedder? does ``get_store`` open
``mysql://``?) take the checking function as an argument: settings is the lowest layer and
imports none of them.

Example:
    >>> from costeer_lab.settings import Settings
    >>> os.environ["COSTEER_LAB_RAG__MAX_FORMER_TRACES"] = "-1"
    >>> try:
    ...     settings_from_env(Settings)
    ... except ConfigurationError as exc:
    ...     print(exc)
    ... finally:
    ...     del os.environ["COSTEER_LAB_RAG__MAX_FORMER_TRACES"]
    environment: COSTEER_LAB_RAG__MAX_FORMER_TRACES: Input should be greater than or equal to 0 (got '-1')
"""  # noqa: E501

from __future__ import annotations

import json
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_settings import BaseSettings, SettingsError

from costeer_lab._redact import redact_url
from costeer_lab.errors import ConfigurationError, CosteerLabError
from costeer_lab.settings._env import (
    ENV_PREFIX,
    env_name,
    unknown_env_message,
    unknown_env_names,
)

__all__ = [
    "SettingsWarning",
    "check_settings_dirs",
    "check_settings_values",
    "check_unknown_env",
    "directory_problem",
    "settings_from_env",
    "warn_unknown_env",
]

S = TypeVar("S", bound=BaseSettings)

#: Fields holding an embedder name, and fields holding a store URL (or a store file path).
EMBEDDER_FIELDS = (("embedder",), ("memory", "embedder"), ("docs", "embedder"))
STORE_FIELDS = (("store_url",), ("memory", "store_url"), ("db_path",))
#: Fields where any file path is a store (checked only when the value looks like a URL).
_ANY_PATH_FIELDS = (("db_path",),)

_WARNED: set[str] = set()


class SettingsWarning(UserWarning):
    """An environment variable named like a setting (``COSTEER_LAB_*``) that no code reads."""


def warn_unknown_env(model: type[BaseModel], environ: Mapping[str, str] | None = None) -> None:
    """Warn once per process about each unknown ``COSTEER_LAB_*`` variable (it is ignored)."""
    for name, close in unknown_env_names(model, environ):
        if name not in _WARNED:
            _WARNED.add(name)
            message = unknown_env_message(name, close, model)
            warnings.warn(f"{message} (it is ignored)", SettingsWarning, stacklevel=3)


def check_unknown_env(model: type[BaseModel], environ: Mapping[str, str] | None = None) -> None:
    """Refuse unknown ``COSTEER_LAB_*`` variables: one line naming the first, and the others.

    Raises:
        ConfigurationError: ``environment: <NAME> is not a setting; did you mean <NAME>?``.
    """
    unknown = unknown_env_names(model, environ)
    if not unknown:
        return
    message = unknown_env_message(*unknown[0], model)
    if len(unknown) > 1:
        message += " (also unknown: " + ", ".join(n for n, _ in unknown[1:]) + ")"
    raise ConfigurationError(f"environment: {message}")


def _shown(name: str, value: object) -> str:
    if "KEY" in name.upper():
        return ""
    text = redact_url(value) if isinstance(value, str) else repr(value)
    text = repr(text) if isinstance(value, str) else text
    return f" (got {text[:80]})"


def _validation_message(exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        path = [str(p) for p in err["loc"] if isinstance(p, str)][:2]
        name = env_name(*path) if path else ENV_PREFIX + "*"
        problems.append(f"{name}: {err['msg']}{_shown(name, err.get('input'))}")
    return "; ".join(problems)


def _settings_error_message(exc: SettingsError, environ: Mapping[str, str]) -> str:
    """Name the variable whose value pydantic-settings could not parse as JSON."""
    found = re.search(r'field "(\w+)"', str(exc))
    start = env_name(found.group(1)) if found else ENV_PREFIX
    for name in sorted(environ):
        if not name.upper().startswith(start):
            continue
        try:
            json.loads(environ[name])
        except ValueError:
            return (
                f'{name.upper()}: expected a JSON value (a list such as ["numpy"], an object '
                f"or a quoted string){_shown(name, environ[name])}"
            )
    return f"{start}: {exc}"


def settings_from_env(model: type[S]) -> S:
    """``model()`` read from ``os.environ``, each bad value named by its variable.

    Raises:
        ConfigurationError: ``environment: <NAME>: <what was expected> (got <value>)``.
    """
    try:
        return model()
    except ValidationError as exc:
        raise ConfigurationError(f"environment: {_validation_message(exc)}") from None
    except SettingsError as exc:
        message = _settings_error_message(exc, os.environ)
        raise ConfigurationError(f"environment: {message}") from None


def _get(settings: BaseModel, path: tuple[str, ...]) -> Any:
    value: Any = settings
    for part in path:
        value = getattr(value, part)
    return value


def check_settings_values(
    settings: BaseModel,
    *,
    embedder: Callable[[str], object] | None = None,
    store: Callable[[str], object] | None = None,
) -> None:
    """Check the embedder names and store URLs of ``settings`` with the given functions (each
    raises a :class:`~costeer_lab.errors.CosteerLabError` for a bad value). ``db_path`` is
    checked only when it holds a ``:`` (a URL, or a mistyped one): any other text is a file.

    Raises:
        ConfigurationError: ``environment: <NAME>: <the checker's message>``.
    """
    checks = [(f, embedder) for f in EMBEDDER_FIELDS] + [(f, store) for f in STORE_FIELDS]
    for path, check in checks:
        value = _get(settings, path)
        if check is None or value is None or value == "":
            continue
        if path in _ANY_PATH_FIELDS and ":" not in str(value):
            continue
        try:
            check(value)
        except CosteerLabError as exc:
            raise ConfigurationError(f"environment: {env_name(*path)}: {exc}") from None


def _probe(folder: Path) -> str | None:
    """Why no folder can be made in the existing directory ``folder`` (``None``: one can).

    A real attempt (made and removed again), not ``os.access``: root passes every access check,
    yet cannot write into ``/proc``.
    """
    if not os.access(folder, os.W_OK | os.X_OK):
        return "permission denied"
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".costeer-lab-probe-", dir=folder))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def directory_problem(path: str | os.PathLike[str], *, must_exist: bool = False) -> str | None:
    """Why ``path`` cannot serve as a writable directory (``None``: it can).

    A missing directory passes when it can be created (unless ``must_exist``); it is not
    created here, and nothing is left behind.

    Example:
        >>> directory_problem("/proc/nope")
        "cannot be created: no folder can be made in '/proc' (No such file or directory)"
        >>> directory_problem("/nonexistent/x", must_exist=True)
        'does not exist (expected an existing writable folder)'
    """
    target = Path(path).expanduser()
    if target.exists():
        if not target.is_dir():
            return "is not a directory"
        why = _probe(target)
        return None if why is None else f"is not writable ({why})"
    if must_exist:
        return "does not exist (expected an existing writable folder)"
    parent = target.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"cannot be created: {str(parent)!r} is a file"
    why = _probe(parent)
    if why is None:
        return None
    return f"cannot be created: no folder can be made in {str(parent)!r} ({why})"


def check_settings_dirs(settings: BaseModel) -> None:
    """Refuse directories a run writes into that it cannot use.

    Checked: ``cache_dir`` and ``sandbox.lock_dir`` (an existing or creatable writable folder)
    and ``sandbox.tmp_dir`` (an existing writable folder), each when it was set (an environment
    variable or an explicit value); ``sandbox.lock_dir`` also at its default when running as
    root, the only case where the sandbox uses it.

    Raises:
        ConfigurationError: ``environment: <NAME>: '<path>' <why>``.
    """
    sandbox: Any = getattr(settings, "sandbox", None)
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    wanted: list[tuple[tuple[str, ...], Any, bool]] = []
    if "cache_dir" in settings.model_fields_set:
        wanted.append((("cache_dir",), _get(settings, ("cache_dir",)), False))
    if sandbox is not None:
        if sandbox.tmp_dir:
            wanted.append((("sandbox", "tmp_dir"), sandbox.tmp_dir, True))
        if "lock_dir" in sandbox.model_fields_set or is_root:
            wanted.append((("sandbox", "lock_dir"), sandbox.lock_dir, False))
    for path, value, must_exist in wanted:
        why = directory_problem(value, must_exist=must_exist)
        if why is not None:
            raise ConfigurationError(f"environment: {env_name(*path)}: {str(value)!r} {why}")
