"""Settings validated when read: unknown ``COSTEER_LAB_*`` variables (a warning from the library,
an error from the command), bad values named by their variable, unusable directories, and the
effective settings recorded in a run folder (``settings.json``) and compared on resume."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.cli import main
from costeer_lab.embed import check_embedder_name
from costeer_lab.errors import ConfigurationError, InvalidInputError, UnknownNameError
from costeer_lab.experiment import load_results, run_experiment
from costeer_lab.settings import (
    OTHER_ENV_NAMES,
    Settings,
    SettingsWarning,
    check_environment,
    directory_problem,
    get_settings,
    known_env_names,
    unknown_env_names,
)
from costeer_lab.store import check_store_target

ROOT = Path(__file__).resolve().parents[1]
SPEC = {
    "name": "settings-record",
    "suite": "humaneval",
    "suite_options": {"limit": 4},
    "tasks": {"split": "test"},
    "seed_knowledge": {"split": "train"},
    "arms": [{"name": "v2", "rag": "v2"}],
    "seeds": [0],
    "max_loop": 1,
    "parallelism": {"executor": "serial"},
}


# --- unknown variables -------------------------------------------------------------------


def test_the_library_warns_once_per_unknown_variable_with_the_closest_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COSTEER_LAB_RAG__MAX_FORMER_TRACEZ", "5")
    with pytest.warns(SettingsWarning) as caught:
        settings = get_settings()
    assert [str(w.message) for w in caught] == [
        "COSTEER_LAB_RAG__MAX_FORMER_TRACEZ is not a setting; did you mean "
        "COSTEER_LAB_RAG__MAX_FORMER_TRACES? (it is ignored)"
    ]
    assert settings.rag.max_former_traces == 3  # ignored: the default stays
    get_settings.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        get_settings()  # the same name is not reported twice in one process


def test_a_name_with_no_close_match_lists_its_sections_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COSTEER_LAB_SANDBOX__QQQ", "1")
    with pytest.warns(SettingsWarning, match=r"known after COSTEER_LAB_SANDBOX__: .*'TMP_DIR'"):
        get_settings()


def test_known_names_come_from_the_model_and_the_other_readers() -> None:
    env = {
        "COSTEER_LAB_RAG__MAX_FORMER_TRACES": "3",  # a section field
        "costeer_lab_rag__trial_limit": "4",  # case-insensitive, as pydantic-settings reads it
        "COSTEER_LAB_RAG": "{}",  # a whole section as JSON
        "COSTEER_LAB_LLM__PRICES__my-model": "[1, 2]",  # a key of a mapping field
        "COSTEER_LAB_NB_SEEDS": "0",  # notebook parameters
        "COSTEER_LAB_DATA_DIR": "/x",
        "COSTEER_LAB_TEST_POSTGRES_URL": "postgresql://h/db",
        "OTHER_VARIABLE": "x",  # not ours
    }
    assert unknown_env_names(Settings, env) == []
    assert unknown_env_names(Settings, {"COSTEER_LAB_RAG__": "x"}) != []
    assert set(OTHER_ENV_NAMES) <= set(known_env_names(Settings))


def test_every_variable_named_in_the_project_is_known() -> None:
    """The list of variables read outside the settings model stays complete: every
    ``COSTEER_LAB_*`` name in the package, tools, benchmarks, notebooks and docs is a known one
    (tests are left out: they may name unknown variables on purpose)."""
    mine = {ROOT / "costeer_lab" / "settings" / name for name in ("_env.py", "_check.py")}
    files = [ROOT / "README.md", ROOT / "Makefile", ROOT / "conftest.py"]
    for folder in ("costeer_lab", "tools", "benchmarks", "notebooks", "docs"):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".md", ".ipynb")]
    names: dict[str, str] = {}
    for path in files:
        if path in mine or path.name.startswith(("_bad_inputs", "bad_inputs")):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        # (a name followed by "is not a setting" is a documented example of the error)
        for name in re.findall(r"COSTEER_LAB_[A-Z0-9_]*[A-Z0-9]\b(?! is not a setting)", text):
            names.setdefault(name, str(path.relative_to(ROOT)))
    assert "COSTEER_LAB_CACHE_DIR" in names and len(names) > 20
    unknown = unknown_env_names(Settings, dict.fromkeys(names, "x"))
    assert not unknown, [(n, names[n]) for n, _ in unknown]


# --- bad values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("RAG__MAX_FORMER_TRACES", "lots", "Input should be a valid integer"),
        ("RAG__MAX_FORMER_TRACES", "-1", "Input should be greater than or equal to 0"),
        ("RAG__DROP_DETERIORATED", "maybe", "Input should be a valid boolean"),
        ("SANDBOX__PACKAGES", "numpy", "expected a JSON value"),
    ],
)
def test_a_bad_value_is_one_error_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(f"COSTEER_LAB_{name}", value)
    with pytest.raises(ConfigurationError) as err:
        get_settings()
    message = str(err.value)
    assert message.startswith(f"environment: COSTEER_LAB_{name}: {expected}")
    assert f"(got {value!r})" in message and "\n" not in message


def test_embedder_names_are_checked_without_building_the_embedder() -> None:
    check_embedder_name("hashing")
    check_embedder_name("minilm")  # not loaded: only the name is checked
    check_embedder_name("openai:text-embedding-3-small")
    with pytest.raises(UnknownNameError, match="did you mean 'hashing'"):
        check_embedder_name("hashin")
    with pytest.raises(InvalidInputError, match="needs a model"):
        check_embedder_name("openai:")


def test_store_targets_are_checked_without_opening_them(tmp_path: Path) -> None:
    for good in (":memory:", "sqlite:///:memory:", f"sqlite:///{tmp_path}/a/x.db", "lab.db"):
        check_store_target(good)
    assert list(tmp_path.iterdir()) == []  # nothing created
    for bad, message in [
        ("mysql://x", "unsupported store URL scheme 'mysql'"),
        ("sqlite:/x.db", "a URL needs '://'"),
        ("sqlite://x.db", "malformed SQLite URL"),
        ("postgress://u:pw@h/db", "did you mean 'postgres'"),
        ("sqlite:///x.db?busy=1", "unknown SQLite URL option 'busy'"),
        ("notes.txt", "cannot interpret store target"),
    ]:
        with pytest.raises(ConfigurationError, match=re.escape(message)) as err:
            check_store_target(bad)
        assert "pw" not in str(err.value)


def test_settings_values_are_named_by_their_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTEER_LAB_DOCS__EMBEDDER", "minilmm")
    with pytest.raises(ConfigurationError, match=r"^environment: COSTEER_LAB_DOCS__EMBEDDER: "):
        check_environment(embedder=check_embedder_name, store=check_store_target)
    monkeypatch.delenv("COSTEER_LAB_DOCS__EMBEDDER")
    monkeypatch.setenv("COSTEER_LAB_DB_PATH", "notes/any-file")  # any path is a docs store
    get_settings.cache_clear()
    check_environment(embedder=check_embedder_name, store=check_store_target)


# --- directories --------------------------------------------------------------------------


def test_directory_checks_refuse_unusable_folders_even_as_root(tmp_path: Path) -> None:
    assert directory_problem("/proc/nope") is not None  # root passes os.access, not mkdir
    assert directory_problem("/proc/nope/deeper") is not None
    assert directory_problem("/nonexistent", must_exist=True) == (
        "does not exist (expected an existing writable folder)"
    )
    (tmp_path / "file.txt").write_text("x")
    assert directory_problem(tmp_path / "file.txt") == "is not a directory"
    assert "is a file" in str(directory_problem(tmp_path / "file.txt" / "sub"))


def test_a_creatable_folder_passes_and_nothing_is_left_behind(tmp_path: Path) -> None:
    assert directory_problem(tmp_path / "a" / "b" / "c") is None
    assert directory_problem(tmp_path) is None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    try:
        assert "cannot be created" in str(directory_problem(ro / "cache"))
        assert "is not writable" in str(directory_problem(ro))
    finally:
        ro.chmod(0o700)


def test_directories_are_checked_only_by_run(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COSTEER_LAB_SANDBOX__TMP_DIR", str(tmp_path / "missing"))
    assert main(["report", "nowhere"]) == 2  # fails for its own reason, not the directory
    assert "'nowhere' does not exist" in capsys.readouterr().err
    assert main(["run", "spec.yaml", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"costeer-lab: error: environment: COSTEER_LAB_SANDBOX__TMP_DIR: "
        f"{str(tmp_path / 'missing')!r} does not exist (expected an existing writable folder)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# --- the command --------------------------------------------------------------------------


def test_the_command_refuses_an_unknown_variable_in_one_line(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "COSTEER_LAB_RAG__MAX_FORMER_TRACE": "5",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "costeer_lab", "run", "spec.yaml", "--out", "out"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "costeer-lab: error: environment: COSTEER_LAB_RAG__MAX_FORMER_TRACE is not a setting; "
        "did you mean COSTEER_LAB_RAG__MAX_FORMER_TRACES?\n"
    )
    assert proc.stdout == "" and list(tmp_path.iterdir()) == []


# --- settings.json and resume -------------------------------------------------------------


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A finished tiny run made with an API key and a store password in the environment."""
    out = tmp_path_factory.mktemp("settings-run") / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COSTEER_LAB_LLM__API_KEY", "sk-test-not-a-real-key")
        mp.setenv("COSTEER_LAB_MEMORY__STORE_URL", "postgresql://lab:hunter2@db.example/lab")
        get_settings.cache_clear()
        run_experiment(SPEC, out, progress=False)
    get_settings.cache_clear()
    yield out


def _copy(run: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(run, out)
    return out


def test_the_run_folder_records_its_settings_with_secrets_redacted(finished_run: Path) -> None:
    path = finished_run / "settings.json"
    text = path.read_text(encoding="utf-8")
    assert "sk-test-not-a-real-key" not in text and "hunter2" not in text
    record = json.loads(text)
    assert record["settings"]["llm"]["api_key"] == "***"
    assert record["settings"]["memory"]["store_url"] == "postgresql://lab:***@db.example/lab"
    assert record["settings"]["rag"]["max_former_traces"] == 3
    assert {"COSTEER_LAB_LLM__API_KEY", "COSTEER_LAB_MEMORY__STORE_URL"} <= set(
        record["environment"]
    )
    assert "rag.max_former_traces" in record["compared"]
    assert "sandbox.tmp_dir" not in record["compared"]
    assert "llm.api_key" not in record["compared"]
    assert (finished_run / "spec.json").is_file()


def test_a_resume_with_a_changed_setting_is_refused_and_fresh_is_accepted(
    finished_run: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = _copy(finished_run, tmp_path)
    (tmp_path / "spec.json").write_text(json.dumps(SPEC), encoding="utf-8")
    before = (out / "results.parquet").read_bytes()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COSTEER_LAB_RAG__MAX_FORMER_TRACES", "5")
    monkeypatch.setenv("COSTEER_LAB_EVALUATOR__FEEDBACK_DETAIL", "full")
    assert main(["run", "spec.json", "--out", "run", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "costeer-lab: error: 'run' holds a run made with other settings "
        '(COSTEER_LAB_EVALUATOR__FEEDBACK_DETAIL was "diagnostics", now "full"; '
        "COSTEER_LAB_RAG__MAX_FORMER_TRACES was 3, now 5); set them back to resume, or use "
        "another --out, or --fresh to replace that run\n"
    )
    assert (out / "results.parquet").read_bytes() == before
    assert main(["run", "spec.json", "--out", "run", "--quiet", "--fresh"]) == 0
    record = json.loads((out / "settings.json").read_text(encoding="utf-8"))
    assert record["settings"]["rag"]["max_former_traces"] == 5
    assert set(load_results(out)["arm"]) == {"v2"}


def test_machine_local_settings_do_not_block_a_resume(
    finished_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _copy(finished_run, tmp_path)
    (tmp_path / "cache").mkdir()
    monkeypatch.setenv("COSTEER_LAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COSTEER_LAB_SANDBOX__TMP_DIR", str(tmp_path))
    monkeypatch.setenv("COSTEER_LAB_SANDBOX__START_TIMEOUT_S", "300")
    monkeypatch.setenv("COSTEER_LAB_LLM__BASE_URL", "http://127.0.0.1:9/v1")
    run_experiment(SPEC, out, progress=False)
    record = json.loads((out / "settings.json").read_text(encoding="utf-8"))
    assert record["settings"]["sandbox"]["tmp_dir"] == str(tmp_path)  # the latest recorded


def test_a_run_folder_without_settings_json_resumes_as_before(
    finished_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _copy(finished_run, tmp_path)
    (out / "settings.json").unlink()  # a folder written before settings were recorded
    rows = len(load_results(out))
    monkeypatch.setenv("COSTEER_LAB_RAG__MAX_FORMER_TRACES", "5")
    run_experiment(SPEC, out, progress=False)
    assert len(load_results(out)) == rows  # resumed (every step was done), not rerun
    record = json.loads((out / "settings.json").read_text(encoding="utf-8"))
    assert record["settings"]["rag"]["max_former_traces"] == 5  # recorded from now on


def test_an_unreadable_settings_json_is_one_clear_error(
    finished_run: Path, tmp_path: Path
) -> None:
    out = _copy(finished_run, tmp_path)
    (out / "settings.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"settings.json' is unreadable .*--fresh"):
        run_experiment(SPEC, out, progress=False)
