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


def test_top_level_is_the_curated_workflow() -> None:
    """The top level lists exactly its lazy exports: the workflow, records, storage, settings."""
    from costeer_lab import _LAZY

    assert set(costeer_lab.__all__) == {*_LAZY, "__version__"}
    for name in ("run_experiment", "load_suite", "open_kb", "EvoAgent", "Task", "get_store"):
        assert name in costeer_lab.__all__
    for internal in ("BaseStore", "SQLiteStore", "FaissIndex", "CachedEmbedder"):
        assert internal not in costeer_lab.__all__
    assert costeer_lab.EvoAgent.__module__ == "costeer_lab.evolve._agent"


def test_records_have_one_import_path() -> None:
    """``costeer_lab.records`` defines them; no second module offers the same classes."""
    import importlib.util

    import costeer_lab.records as public

    assert all(getattr(public, n).__module__ == "costeer_lab.records" for n in public.__all__)
    assert importlib.util.find_spec("costeer_lab._records") is None


def test_production_code_does_not_import_the_test_fakes() -> None:
    """The coder registry knows only real coders; the scripted fake is named by import path."""
    from costeer_lab.coders import get_coder
    from costeer_lab.coders._registry import CODERS
    from costeer_lab.errors import UnknownNameError

    assert "scripted" not in CODERS
    with pytest.raises(UnknownNameError, match="reuse") as info:
        get_coder("scripted")
    assert "scripted" in str(info.value) and "package.module:Class" in str(info.value)
    coder = get_coder("costeer_lab.testing:ScriptedCoder", script={"t": [{"main.py": "1"}]})
    assert coder.to_config()["name"] == "costeer_lab.testing:ScriptedCoder"
    with pytest.raises(UnknownNameError, match="cannot import coder"):
        get_coder("costeer_lab.nothing:Nope")


#: Names that left ``__all__`` (docs/api.md): used only inside their package or by its tests.
#: They stay importable from their private module, where the tests import them.
TRIMMED = {
    "costeer_lab.evolve._agent": ("kb_size", "retrieved_summary"),
    "costeer_lab.evolve._executors": ("SerialExecutor",),
    "costeer_lab.experiment._runner": ("attempt_rows", "copy_store", "run_arm"),
    "costeer_lab.experiment._preflight": ("select_tasks",),
    "costeer_lab.knowledge._sampler": ("KnowledgeSampler",),
    "costeer_lab.memory._strategy": ("task_pattern",),
    "costeer_lab.coders._registry": ("CODERS",),
    "costeer_lab.suites._factor_contract": ("factor_contract",),
}


@pytest.mark.parametrize("private", sorted(TRIMMED))
def test_trimmed_names_left_the_package_but_stay_importable(private: str) -> None:
    package = importlib.import_module(private.rsplit(".", 1)[0])
    module = importlib.import_module(private)
    for name in TRIMMED[private]:
        assert name not in package.__all__, f"{name} is back in {package.__name__}.__all__"
        assert getattr(module, name) is not None
