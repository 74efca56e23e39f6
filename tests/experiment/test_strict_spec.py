"""Spec values are taken as written: no coercion, ranges and pairs of fields checked, strict
YAML/JSON reading, coders checked, and seed knowledge that holds a target refused unless the
spec says ``allow_target_leak: true`` (then the run does it and its report says so)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from costeer_lab.errors import ConfigurationError, InvalidInputError
from costeer_lab.experiment import ExperimentSpec, load_results, load_spec, run_experiment
from costeer_lab.experiment._preflight import check_out_dir, preflight
from costeer_lab.experiment._runner import SEEDED_META
from costeer_lab.settings import get_settings
from costeer_lab.store import SQLiteStore
from costeer_lab.suites._document import parse_document
from costeer_lab.viz import report_experiment

BASE: dict[str, Any] = {
    "name": "strict",
    "suite": "humaneval",
    "suite_options": {"limit": 4},
    "arms": [{"name": "none"}, {"name": "v1", "rag": "v1"}],
    "max_loop": 1,
    "parallelism": {"executor": "serial"},
}


def _spec(**changes: Any) -> dict[str, Any]:
    return {**BASE, **changes}


@pytest.mark.parametrize(
    ("changes", "expect"),
    [
        ({"seeds": ["1e23"]}, "seeds.0: Input should be a valid integer, got the text '1e23'"),
        ({"seeds": [1e23]}, "seeds.0: Input should be a valid integer, got the decimal number"),
        ({"seeds": [True]}, "seeds.0: Input should be a valid integer, got the boolean true"),
        ({"seeds": [-1]}, "seeds are numpy seeds: whole numbers from 0 to 4294967295"),
        ({"seeds": [2**32]}, "seeds.0: Input should be less than or equal to 4294967295"),
        ({"max_loop": "2"}, "max_loop: Input should be a valid integer, got the text '2' (write"),
        ({"max_loop": 2.0}, "max_loop: Input should be a valid integer, got the decimal number"),
        ({"max_trials": False}, "max_trials: Input should be a valid integer, got the boolean"),
        ({"tasks": {"ids": []}}, "tasks.ids: an empty list selects nothing; omit ids or list"),
        ({"tasks": {"ids": ["humaneval/1"] * 2}}, "task id(s) listed twice: ['humaneval/1']"),
        ({"tasks": {"limit": "1e12"}}, "tasks.limit: Input should be a valid integer, got the"),
        ({"tasks": {"limit": 10**12}}, "tasks.limit: Input should be less than or equal to"),
        ({"seed_knowledge": {"limit": True}}, "seed_knowledge.limit: Input should be a valid int"),
        ({"seed_knowledge": "yes"}, "seed_knowledge: expected a mapping with fields split"),
        ({"stages": []}, "stages: an empty list runs nothing; omit stages"),
        ({"shuffle_tasks": "yes"}, "shuffle_tasks: Input should be a valid boolean, got the text"),
        ({"allow_target_leak": 1}, "allow_target_leak: Input should be a valid boolean"),
        (
            {"arms": [{"name": "a", "seed_knowledge": "no"}]},
            "arms.0.seed_knowledge: Input should be a valid boolean, got the text 'no' (write "
            "true or false, without quotes)",
        ),
        (
            {"stages": [{"name": "s", "carry_knowledge": "false"}]},
            "stages.0.carry_knowledge: Input should be a valid boolean",
        ),
        (
            {"parallelism": {"executor": "serial", "dask_address": "tcp://127.0.0.1:8786"}},
            "parallelism.dask_address: only executor 'dask' uses an address, not 'serial'",
        ),
        (
            {"parallelism": {"executor": "dask", "dask_address": " "}},
            "parallelism.dask_address: empty; omit it to start a local Dask cluster",
        ),
        ({"parallelism": {"workers": 2.0}}, "parallelism.workers: Input should be a valid int"),
    ],
)
def test_values_of_the_wrong_type_or_range_are_refused_naming_the_field(
    changes: dict[str, Any], expect: str
) -> None:
    with pytest.raises(ConfigurationError) as info:
        load_spec(_spec(**changes))
    assert expect in str(info.value)
    assert len(str(info.value).splitlines()) == 1


def test_values_as_written_are_accepted() -> None:
    spec = load_spec(
        _spec(
            seeds=[0, 2**32 - 1],
            tasks={"split": "test", "limit": 2},
            parallelism={"executor": "dask"},  # no address: a local cluster
            shuffle_tasks=True,
        )
    )
    assert spec.seeds == [0, 2**32 - 1] and spec.parallelism.dask_address is None
    addressed = load_spec(_spec(parallelism={"executor": "dask", "dask_address": "tcp://h:1"}))
    assert addressed.parallelism.dask_address == "tcp://h:1"


def _write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_a_key_given_twice_is_refused_with_its_lines(tmp_path: Path) -> None:
    text = yaml.safe_dump(_spec(), sort_keys=False) + "max_loop: 3\n"
    path = _write(tmp_path / "spec.yaml", text)
    line = text.splitlines().index("max_loop: 3") + 1
    first = text.splitlines().index("max_loop: 1") + 1
    with pytest.raises(ConfigurationError) as info:
        load_spec(path)
    assert str(info.value) == (
        f"cannot parse spec {path}: line {line}, column 1: duplicate key 'max_loop' (first on "
        f"line {first})"
    )
    nested = "name: x\nsuite: humaneval\narms:\n  - name: a\n    rag: v1\n    rag: v2\n"
    with pytest.raises(ConfigurationError, match="line 6, column 5: duplicate key 'rag'"):
        load_spec(_write(tmp_path / "nested.yaml", nested))


def test_yaml_merge_keys_may_still_be_overridden() -> None:
    text = "base: &base {name: a, rag: v1}\narm:\n  <<: *base\n  rag: v2\n"
    assert parse_document(text, json_file=False)["arm"] == {"name": "a", "rag": "v2"}
    with pytest.raises(
        InvalidInputError, match="line 5, column 3: duplicate key 'rag' \\(first on line 4\\)"
    ):
        parse_document(text + "  rag: v1\n", json_file=False)


def test_a_json_spec_follows_json_rules(tmp_path: Path) -> None:
    good = _write(tmp_path / "good.json", json.dumps(_spec()))
    assert load_spec(good).name == "strict"
    trailing = _write(tmp_path / "t.json", json.dumps(_spec())[:-1] + ",}")
    with pytest.raises(ConfigurationError, match=r"t\.json: line 1, column \d+: Expecting prop"):
        load_spec(trailing)
    twice = _write(tmp_path / "d.json", '{"name": "a", "name": "b"}')
    with pytest.raises(ConfigurationError, match="duplicate key 'name' in a JSON object"):
        load_spec(twice)


def test_a_spec_must_be_utf8_text(tmp_path: Path) -> None:
    text = yaml.safe_dump(_spec(name="café"), allow_unicode=True)
    path = _write(tmp_path / "s.yaml", text.encode("utf-16"))
    with pytest.raises(ConfigurationError) as info:
        load_spec(path)
    assert str(info.value) == (
        f"spec {str(path)!r} is not UTF-8 text (found a UTF-16 byte-order mark); save it as UTF-8"
    )
    latin = _write(tmp_path / "l.yaml", text.encode("latin-1"))
    with pytest.raises(ConfigurationError, match=r"is not UTF-8 text \(byte 0xe9 at offset"):
        load_spec(latin)
    with_bom = _write(tmp_path / "bom.yaml", b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert load_spec(with_bom).name == "café"  # UTF-8 with a byte-order mark is UTF-8


def test_spec_json_reads_back_and_older_runs_still_resume(tmp_path: Path) -> None:
    spec = load_spec(_spec())
    data = spec.to_dict()
    assert "stages" not in data and data["allow_target_leak"] is False
    assert load_spec(data) == spec
    # a spec.json written before allow_target_leak existed, with "stages": [] as it was then
    older = {k: v for k, v in data.items() if k != "allow_target_leak"} | {"stages": []}
    out = tmp_path / "run"
    out.mkdir()
    (out / "spec.json").write_text(json.dumps(older), encoding="utf-8")
    check_out_dir(out, spec, resume=True)  # the same spec: no difference reported


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "COSTEER_LAB_OPENAI__API_KEY", "COSTEER_LAB_LLM__API_KEY"):
        monkeypatch.setenv(name, "")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.mark.usefixtures("no_key")
def test_an_llm_coder_without_a_key_is_refused_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "run"
    spec = load_spec(_spec(coder={"name": "llm", "model": "gpt-4o-mini"}))
    with pytest.raises(ConfigurationError) as info:
        preflight(spec, out, resume=True)
    assert str(info.value).startswith("coder: LLMCoder (model 'gpt-4o-mini') has no API key")
    assert "OPENAI_API_KEY" in str(info.value)
    assert not out.exists()
    # replaying a recording needs no key
    replay = load_spec(_spec(coder={"name": "llm", "model": "m", "cache_mode": "replay_only"}))
    assert [t.id for t in preflight(replay, out, resume=True).targets] == [
        "humaneval/1",
        "humaneval/2",
        "humaneval/3",
    ]
    assert not out.exists()


@pytest.mark.parametrize(
    ("name", "expect"),
    [
        ("builtins:dict", "coder.name: coder 'builtins:dict' is not a coder class: a coder has"),
        ("costeer_lab.records:Task", "'costeer_lab.records:Task' is not a coder class"),
        ("json:dumps", "bad arguments for coder 'json:dumps'"),
    ],
)
def test_a_coder_name_must_make_a_coder(name: str, expect: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="coder") as info:
        preflight(load_spec(_spec(coder={"name": name})), tmp_path / "run", resume=True)
    assert expect in str(info.value)


def test_a_factory_that_returns_no_coder_is_refused(tmp_path: Path) -> None:
    spec = load_spec(_spec(coder={"name": "json:loads", "s": "[]"}))
    with pytest.raises(ConfigurationError) as info:
        preflight(spec, tmp_path / "run", resume=True)
    assert "coder 'json:loads' is not a coder: it made a list" in str(info.value)


@pytest.mark.parametrize(
    ("options", "expect"),
    [
        ({"limit": -1}, "suite: humaneval option limit: expected a whole number >= 1, got -1"),
        ({"limit": 0}, "humaneval option limit: expected a whole number >= 1, got 0"),
        ({"limit": True}, "humaneval option limit: expected a whole number >= 1, got True"),
        ({"limit": "4"}, "humaneval option limit: expected a whole number >= 1, got '4'"),
    ],
)
def test_humaneval_options_are_checked(
    options: dict[str, Any], expect: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigurationError) as info:
        preflight(load_spec(_spec(suite_options=options)), tmp_path / "run", resume=True)
    assert expect in str(info.value)


def test_an_alpha158_panel_too_short_for_a_target_is_refused(tmp_path: Path) -> None:
    def spec(n_days: int, ids: list[str]) -> ExperimentSpec:
        return load_spec(
            _spec(
                suite="alpha158",
                suite_options={"n_instruments": 2, "n_days": n_days, "cache_dir": str(tmp_path)},
                tasks={"ids": ids},
                seed_knowledge={"split": None},
            )
        )

    with pytest.raises(ConfigurationError) as info:
        preflight(spec(2, ["alpha158/KMID", "alpha158/ROC10"]), tmp_path / "run", resume=True)
    assert str(info.value) == (
        "suite_options: alpha158 option n_days: 2 days leave every value of 'alpha158/ROC10' "
        "(Ref($close, 10)/$close) missing; the selected tasks need n_days >= 11"
    )
    with pytest.raises(ConfigurationError, match="need n_days >= 61"):
        preflight(spec(60, ["alpha158/ROC60"]), tmp_path / "run", resume=True)
    assert preflight(spec(11, ["alpha158/ROC10"]), tmp_path / "run", resume=True).targets
    assert preflight(spec(2, ["alpha158/KMID"]), tmp_path / "run", resume=True).targets


def test_seed_knowledge_holding_targets_is_refused_naming_them(tmp_path: Path) -> None:
    spec = load_spec(_spec(suite_options={"limit": 20}, tasks={"split": "all"}))
    with pytest.raises(ConfigurationError) as info:
        preflight(spec, tmp_path / "run", resume=True)
    msg = str(info.value)
    assert msg.startswith(
        "seed_knowledge: split 'train' holds 5 of the target tasks ('humaneval/0', "
        "'humaneval/4', 'humaneval/8', 'humaneval/12', 'humaneval/16'), so"
    )
    assert "allow_target_leak: true" in msg and "seed_knowledge.split: null" in msg
    # the same suite named again, with other options: the same tasks
    again = _spec(seed_knowledge={"suite": "humaneval", "suite_options": {"limit": 9}})
    again["seed_knowledge"]["split"] = "test"
    with pytest.raises(ConfigurationError, match="split 'test' holds 3 of the target tasks"):
        preflight(load_spec(again), tmp_path / "run", resume=True)
    # the seed limit applies first: train is humaneval/0 and /4; its first one is no target
    targets = {"ids": ["humaneval/1", "humaneval/4"]}
    with pytest.raises(ConfigurationError, match=r"holds 1 of the target tasks \('humaneval/4'"):
        preflight(
            load_spec(_spec(suite_options={"limit": 8}, tasks=targets)), tmp_path, resume=True
        )
    fine = _spec(suite_options={"limit": 8}, tasks=targets, seed_knowledge={"limit": 1})
    checked = preflight(load_spec(fine), tmp_path / "run", resume=True)
    assert [t.id for t in checked.seed_tasks] == ["humaneval/0"]


def test_an_allowed_leak_runs_is_recorded_and_the_report_warns(tmp_path: Path) -> None:
    leak = _spec(name="leak", tasks={"split": "all"}, allow_target_leak=True)
    out = tmp_path / "leak"
    run_experiment(leak, out, progress=False)
    assert json.loads((out / "spec.json").read_text(encoding="utf-8"))["allow_target_leak"]
    store = SQLiteStore(out / "kb" / "v1-seed0.db")
    try:
        assert store.get_meta(SEEDED_META) == "1"  # humaneval/0: a target and a seed task
    finally:
        store.close()
    results = load_results(out)
    assert set(results["task_id"]) == {f"humaneval/{i}" for i in range(4)}
    page = report_experiment(out).read_text(encoding="utf-8")
    assert page.count('class="warning" role="alert"') == 1
    assert "Warning: allow_target_leak: true: this run&#x27;s seed knowledge may hold" in page

    fair = tmp_path / "fair"
    run_experiment(_spec(name="fair"), fair, progress=False)
    assert 'class="warning"' not in report_experiment(fair).read_text(encoding="utf-8")


def test_rag_option_values_are_taken_as_written() -> None:
    for value in ("2", 2.0, True):
        arms = [{"name": "a", "rag": "v2", "rag_options": {"max_former_traces": value}}]
        with pytest.raises(ConfigurationError, match=r"arms\.0: rag_options: max_former_traces"):
            load_spec(_spec(arms=arms))
    arms = [{"name": "a", "rag": "v2", "rag_options": {"error_query": "no"}}]
    with pytest.raises(ConfigurationError, match="error_query: Input should be a valid boolean"):
        load_spec(_spec(arms=arms))


def test_the_readme_spec_example_loads() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = next(b for b in readme.split("```yaml\n")[1:] if "allow_target_leak" in b)
    spec = load_spec(parse_document(block.split("```")[0], json_file=False))
    assert spec.allow_target_leak is False and spec.seeds == [0, 1]


def test_a_memory_arm_takes_the_calibrated_threshold_by_name(tmp_path: Path) -> None:
    arm = {"name": "mem", "rag": "memory", "rag_options": {"threshold": "calibrated"}}
    spec = load_spec(_spec(arms=[arm]))
    assert spec.arms[0].rag_options == {"threshold": "calibrated"}
    results = load_results(run_experiment(spec, tmp_path / "run", progress=False))
    assert set(results["arm"]) == {"mem"} and results["memory_queried"].all()
    for bad in ("high", True):
        wrong = {**arm, "rag_options": {"threshold": bad}}
        with pytest.raises(ConfigurationError, match="in \\[-1, 1\\] or 'calibrated', got"):
            load_spec(_spec(arms=[wrong]))
    with pytest.raises(ConfigurationError, match="failure_threshold must be a cosine"):
        load_spec(_spec(arms=[{**arm, "rag_options": {"failure_threshold": "calibrated"}}]))
