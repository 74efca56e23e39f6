"""Names that could become paths — stage, arm, experiment name, task id — with separators,
``..``, absolute paths, backslashes, NUL, newlines, unicode and great length: each is refused
with one clear line or runs, and afterwards nothing exists outside the run folder and the cache
(the whole parent folder is compared, file contents included, before and after)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costeer_lab._fs import MAX_COMPONENT, path_component
from costeer_lab.errors import CosteerLabError
from costeer_lab.experiment import load_results, run_experiment
from costeer_lab.experiment._names import store_path
from costeer_lab.settings import get_settings
from costeer_lab.testing import snapshot

TRICKY = [
    "/",
    "a/b",
    ".",
    "..",
    "../x",
    "../../x",
    "../../../../../escape",
    "/tmp/costeer-name-fuzz",
    "a\\b",
    "..\\..\\x",
    "a\x00b",
    "a\nb",
    "a\rb",
    "a\n",
    "ünï",
    "a\u200fb",  # right-to-left mark
    "🙂",
    "x" * 300,
    "",
    " ",
    "-rf",
    "~",
    "$HOME",
    "*",
    "%2F..%2F",
    "kb",
    "spec.json",
]
SLOTS = ("stage", "arm", "experiment", "task_id")


def _task_file(task_id: str) -> dict[str, Any]:
    return {
        "kind": "python_function",
        "tasks": [
            {
                "id": task_id,
                "name": "add",
                "description": "Add two numbers.",
                "entry_point": "add",
                "canonical_solution": "def add(a, b):\n    return a + b\n",
                "tests": "def check(f):\n    assert f(1, 2) == 3\n",
            }
        ],
    }


def _spec(slot: str, name: str, task_file: Path) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": name if slot == "experiment" else "fuzz",
        "suite": str(task_file),
        "tasks": {"split": "all"},
        "seed_knowledge": {"split": None},
        "arms": [{"name": name if slot == "arm" else "a", "rag": "v2"}],
        "max_loop": 1,
        "parallelism": {"executor": "serial"},
    }
    if slot == "stage":
        spec["stages"] = [{"name": name, "tasks": {"split": "all"}}]
    return spec


@pytest.fixture(autouse=True)
def _fresh_settings() -> Iterator[None]:
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _try(slot: str, name: str, root: Path) -> str | None:
    """Run ``name`` in ``slot`` under ``root``; the error line when refused, else ``None``.
    Asserts that nothing outside ``root/deep/er/out`` and ``root/cache`` changed."""
    out = root / "deep" / "er" / "out"
    task_file = root / "tasks" / "tasks.json"
    task_file.parent.mkdir(parents=True, exist_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)  # --out's parents are the user's
    task_file.write_text(json.dumps(_task_file(name if slot == "task_id" else "add")))
    outside = Path(name) if name.startswith("/") and "\x00" not in name else None
    existed = outside is not None and outside.exists()

    def others() -> dict[str, Any]:
        return {
            k: v
            for k, v in snapshot(root).items()
            if not k.startswith(("deep/er/out/", "cache/")) and k != "deep/er/out"
        }

    before = others()
    error: str | None = None
    old = os.getcwd()
    os.chdir(root)  # a relative write would land inside root: seen below
    try:
        run_experiment(_spec(slot, name, task_file), out, progress=False)
    except CosteerLabError as exc:
        error = str(exc)
    finally:
        os.chdir(old)
    assert others() == before
    if outside is not None and not existed:
        assert not outside.exists()
    if error is not None:
        assert "\n" not in error and error.strip(), error
        assert not out.exists()  # refused before anything was written
        return error
    for path in out.rglob("*"):
        assert path.resolve().is_relative_to(out.resolve())
    results = load_results(out)
    assert len(results) == 1
    if slot == "task_id":
        assert list(results["task_id"]) == [name]
    return None


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COSTEER_LAB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


@pytest.mark.parametrize("name", TRICKY, ids=lambda n: repr(n)[:30])
@pytest.mark.parametrize("slot", SLOTS)
def test_a_tricky_name_is_refused_or_stays_inside_the_run_folder(
    slot: str, name: str, root: Path
) -> None:
    error = _try(slot, name, root)
    safe = path_component(name) == name
    if slot in ("stage", "arm"):  # these become file names: only safe ones run
        assert (error is None) == (safe and len(name) <= 100), error
        if error is not None:
            assert f"{slot}s" in error and ".name" in error
    if slot == "experiment" and error is not None:
        assert error.startswith(("name:", "invalid experiment spec (spec): name:")), error
    if slot == "task_id" and error is not None:
        assert "tasks[0].id" in error, error


@pytest.mark.parametrize("slot", ["experiment", "task_id"])
def test_labels_with_separators_run_as_given(slot: str, root: Path) -> None:
    assert _try(slot, "../../x/ünï 🙂", root) is None


_PIECES = st.sampled_from(
    ["..", ".", "/", "\\", "a", "Z9", "_", "-", "ü", "\x00", "\n", "\u200f", "🙂", "%", "~", " "]
)
_NAMES = st.lists(_PIECES, min_size=1, max_size=8).map("".join)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(slot=st.sampled_from(SLOTS), name=_NAMES)
def test_generated_names_never_write_outside(
    slot: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        monkeypatch.setenv("COSTEER_LAB_CACHE_DIR", str(Path(tmp) / "cache"))
        get_settings.cache_clear()
        _try(slot, name, Path(tmp))


def test_store_paths_stay_in_kb_even_for_unchecked_names(tmp_path: Path) -> None:
    kb = (tmp_path / "kb").resolve()
    for name in TRICKY:
        path = store_path(tmp_path, name, 0, name)
        assert path.resolve().is_relative_to(kb)
        if name:  # "" is no stage: the store sits in kb/ itself
            assert path.relative_to(tmp_path / "kb").parts[0] == path_component(name)
    assert store_path(tmp_path, "v2", 3, "learn") == tmp_path / "kb" / "learn" / "v2-seed3.db"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.text(max_size=200))
def test_path_component_is_one_safe_name_and_injective(a: str, b: str) -> None:
    for text in (a, b):
        part = path_component(text)
        assert part not in ("", ".", "..")
        assert not set(part) & {"/", "\\", "\x00"}
        assert part.isascii() and part.isprintable() and len(part) <= MAX_COMPONENT
        assert Path(part).name == part
    if a != b:
        assert path_component(a) != path_component(b)


@pytest.mark.parametrize("name", ["v2", "rag_v2-seed0.db", "a.b", "A-1_x"])
def test_safe_names_are_unchanged(name: str) -> None:
    assert path_component(name) == name
