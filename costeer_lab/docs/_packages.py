"""Documentation shipped by installed Python packages (their README, the long description in
the package metadata), written out as files so they can be ingested like any other folder.

This gives a public Markdown / reStructuredText corpus without network access: the packages
are installed by pip with costeer_lab's own dependencies.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> versions = write_package_readmes(["pandas"], root)
    >>> sorted(p.name for p in (root / "pandas").iterdir()), "pandas" in versions
    (['README.md'], True)
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from costeer_lab.errors import NotFoundError

__all__ = ["package_readme", "write_package_readmes"]


def package_readme(name: str) -> tuple[str, str, str]:
    """``(text, suffix, version)`` of an installed package's long description (``.md`` or
    ``.rst`` from its content type; ``.txt`` when unknown).

    Raises:
        NotFoundError: the package is not installed or has no long description.
    """
    try:
        meta: Any = metadata.metadata(name)  # an email.message.Message
    except metadata.PackageNotFoundError:
        raise NotFoundError(f"package {name!r} is not installed") from None
    text = meta.get_payload() or meta.get("Description") or ""
    if not str(text).strip():
        raise NotFoundError(f"package {name!r} has no long description in its metadata")
    kind = (meta.get("Description-Content-Type") or "").lower()
    suffix = ".md" if "markdown" in kind else ".rst" if "rst" in kind else ".txt"
    return str(text), suffix, str(meta["Version"])


def write_package_readmes(names: Iterable[str], root: str | Path) -> dict[str, str]:
    """Write ``root/<name>/README<suffix>`` for each package; returns ``{name: version}``.

    Raises:
        NotFoundError: a package is missing or has no long description.
    """
    out: dict[str, str] = {}
    for name in names:
        text, suffix, version = package_readme(name)
        folder = Path(root) / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"README{suffix}").write_text(text, encoding="utf-8")
        out[name] = version
    return out
