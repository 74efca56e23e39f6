"""Shared stores of a run: which store an (arm, seed) opens, under which run id, and the run key.

A spec's ``knowledge`` / ``memory`` (:class:`~costeer_lab.experiment.SharedStore`) move the
arms that use them out of their per-(arm, seed) SQLite files into one store:

* ``scope: experiment`` — every such arm and seed opens the store as given;
* ``scope: arm`` — each (arm, seed) opens its own PostgreSQL schema of that store, named from
  the base schema (``?schema=``, default ``public``), the run key, the arm and the seed.

The **run key** (``<out>/shared.json``, made once per run folder; ``--fresh`` makes a new one)
prefixes the run ids of these arms (``<key>/<arm>-seed<s>``): a store outlives a run folder and
is shared by other experiments, so a run resumes only its own steps, never those of another
folder or of an earlier ``--fresh`` run. ``shared.json`` also lists each (arm, seed)'s store
with its password scrubbed; the report shows it.

Example:
    >>> shared_target("postgresql://me:pw@db/lab?schema=team", "arm", "k1", "v2", 0)
    'postgresql://me:pw@db/lab?schema=team_k1_v2_fb04dc_s0'
    >>> shared_target("runs/lab.db", "experiment", "k1", "v2", 0)
    'runs/lab.db'
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from costeer_lab._fs import atomic_write_bytes
from costeer_lab._redact import redact_url
from costeer_lab.errors import ConfigurationError

if TYPE_CHECKING:
    from costeer_lab.experiment._spec import ArmSpec, ExperimentSpec, SharedStore

__all__ = [
    "SHARED_FILE",
    "SHARED_RAGS",
    "is_postgres",
    "load_run_key",
    "postgres_schema",
    "shared_for",
    "shared_run_id",
    "shared_target",
    "write_shared_record",
]

#: The run folder's record of its run key and shared stores.
SHARED_FILE = "shared.json"
#: Spec field -> the ``rag`` of the arms it applies to.
SHARED_RAGS: dict[str, tuple[str, ...]] = {"knowledge": ("v1", "v2"), "memory": ("memory",)}
_KEY = re.compile(r"[0-9a-f]{10}")
_NOT_IDENT = re.compile(r"[^a-z0-9_]+")


def is_postgres(target: str) -> bool:
    """Whether a store target is a PostgreSQL URL (``postgresql://``, ``postgres://``,
    ``postgresql+psycopg://``)."""
    scheme = urlsplit(target.strip()).scheme.lower().split("+", 1)[0]
    return scheme in ("postgresql", "postgres")


def postgres_schema(url: str) -> str:
    """The schema a PostgreSQL store URL names (``?schema=``; default ``public``)."""
    try:
        pairs = parse_qsl(urlsplit(url.strip()).query, keep_blank_values=True)
    except ValueError:  # pragma: no cover - parse_qsl is lenient
        return ""
    return dict(pairs).get("schema", "public")


def shared_for(spec: ExperimentSpec, arm: ArmSpec) -> SharedStore | None:
    """The shared store ``arm`` uses (``None``: its own SQLite file, the default)."""
    for field, rags in SHARED_RAGS.items():
        if arm.rag in rags:
            shared: SharedStore | None = getattr(spec, field)
            return shared
    return None


def _namespace(base: str, key: str, arm: str, seed: int) -> str:
    """A PostgreSQL schema name (``[a-z_][a-z0-9_]{0,62}``) for one (arm, seed) of a run: the
    arm's name, lower-cased and cut, plus a hash of it, so distinct arms never collide."""
    slug = _NOT_IDENT.sub("_", arm.lower()).strip("_")[:16]
    digest = hashlib.sha256(arm.encode("utf-8")).hexdigest()[:6]
    return f"{base[:16]}_{key}_{slug}_{digest}_s{seed}".replace("__", "_")[:63]


def shared_target(store: str, scope: str, key: str, arm: str, seed: int) -> str:
    """The store target one (arm, seed) opens: ``store`` itself (scope ``experiment``) or its
    own schema of the PostgreSQL ``store`` (scope ``arm``), named from the base schema, the run
    ``key``, the arm (cut, plus a hash of it) and the seed."""
    if scope == "experiment":
        return store
    parts = urlsplit(store.strip())
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    base = postgres_schema(store)
    rest = [(k, v) for k, v in pairs if k != "schema"]
    query = urlencode([("schema", _namespace(base, key, arm, seed)), *rest])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def shared_run_id(key: str, run_id: str) -> str:
    """The run id of an arm in a shared store: this run's key, then the usual id.

    Example:
        >>> shared_run_id("0123456789", "v2-seed0")
        '0123456789/v2-seed0'
    """
    return f"{key}/{run_id}"


def load_run_key(out_dir: Path) -> str:
    """The run key recorded in ``out_dir`` (a new one when none is).

    Raises:
        ConfigurationError: ``shared.json`` exists but holds no valid key.
    """
    path = out_dir / SHARED_FILE
    if not path.exists():
        return uuid.uuid4().hex[:10]
    try:
        key = json.loads(path.read_text(encoding="utf-8")).get("run_key")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError) as exc:
        raise ConfigurationError(f"{str(path)!r} is unreadable ({exc}); use --fresh") from None
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ConfigurationError(f"{str(path)!r} holds no valid run_key; use --fresh")
    return key


def write_shared_record(out_dir: Path, spec: ExperimentSpec, key: str) -> dict[str, Any]:
    """Write ``shared.json`` (run key; per shared field its scope, store and each (arm,
    seed)'s store, passwords scrubbed) and return what was written."""
    record: dict[str, Any] = {"run_key": key}
    for field, rags in SHARED_RAGS.items():
        shared: SharedStore | None = getattr(spec, field)
        if shared is None:
            continue
        record[field] = {
            "scope": shared.scope,
            "store": redact_url(shared.store),
            "arms": {
                f"{a.name}-seed{s}": redact_url(
                    shared_target(shared.store, shared.scope, key, a.name, s)
                )
                for a in spec.arms
                if a.rag in rags
                for s in spec.seeds
            },
        }
    atomic_write_bytes(out_dir / SHARED_FILE, json.dumps(record, indent=2).encode("utf-8"))
    return record
