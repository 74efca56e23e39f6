"""Every public subpackage declares a complete ``__all__`` whose names import."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import costeer_lab

SUBPACKAGES = sorted(
    m.name
    for m in pkgutil.iter_modules(costeer_lab.__path__, prefix="costeer_lab.")
    if not m.name.rsplit(".", 1)[-1].startswith("_") and m.name != "costeer_lab.__main__"
)


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_all_lists_exist_and_resolve(name: str) -> None:
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    for public in module.__all__:
        assert hasattr(module, public), f"{name}.__all__ lists {public!r} but it is missing"


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_all_is_complete(name: str) -> None:
    """Public names defined or re-exported by a package appear in its __all__."""
    module = importlib.import_module(name)
    if not hasattr(module, "__path__"):
        return  # plain modules (settings, errors, cli) define __all__ by hand
    public = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_")
        and getattr(v, "__module__", "").startswith("costeer_lab")
        and not isinstance(v, type(importlib))
    }
    missing = public - set(module.__all__)
    assert not missing, f"{name}: public names missing from __all__: {sorted(missing)}"


def test_top_level_lazy_exports() -> None:
    for name in costeer_lab.__all__:
        assert getattr(costeer_lab, name) is not None


def test_import_is_light() -> None:
    """`import costeer_lab` must not import faiss, pandas or openai."""
    import subprocess
    import sys

    code = (
        "import sys, costeer_lab; "
        "heavy = [m for m in ('faiss', 'pandas', 'openai', 'matplotlib') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
