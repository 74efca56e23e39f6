"""Which installed files a sandboxed run may import: allowlisted distributions and their needs.

Example:
    >>> dirs = resolve(["numpy"])
    >>> any("numpy" in entries for entries in dirs.values())
    True
    >>> resolve([])
    {}
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from importlib import metadata
from pathlib import PurePosixPath

__all__ = ["distributions", "resolve"]

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(dist: metadata.Distribution) -> list[str]:
    """Names of the distributions ``dist`` needs (extras left out)."""
    out = []
    for req in dist.requires or []:
        if "extra ==" in req.replace('extra=="', 'extra == "'):
            continue
        match = _NAME.match(req)
        if match:
            out.append(match.group(1))
    return out


def distributions(packages: Iterable[str]) -> list[metadata.Distribution]:
    """The installed distributions providing the import names (or distribution names) in
    ``packages``, with everything they require, transitively. Names not installed are
    skipped (a run importing them fails as on any machine without them)."""
    by_import = metadata.packages_distributions()
    todo = []
    for name in packages:
        todo.extend(by_import.get(name, [name]))
    seen: dict[str, metadata.Distribution] = {}
    while todo:
        name = _normal(todo.pop())
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen[name] = dist
        todo.extend(_requirements(dist))
    return [seen[k] for k in sorted(seen)]


def resolve(packages: Iterable[str]) -> dict[str, list[str]]:
    """Site-packages directory → the top-level entries (package directories, modules,
    ``.libs`` directories, ``.dist-info``) of the allowlisted distributions installed there."""
    out: dict[str, set[str]] = {}
    for dist in distributions(packages):
        base = str(dist.locate_file(""))
        entries = out.setdefault(base, set())
        for file in dist.files or []:
            parts = PurePosixPath(str(file)).parts
            if parts and parts[0] not in ("..", "__pycache__") and not parts[0].endswith(".pth"):
                entries.add(parts[0])
    return {base: sorted(entries) for base, entries in out.items() if entries}
