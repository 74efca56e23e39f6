"""Coder registry, configs, process pools and the ScriptedCoder."""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor

import pytest

import costeer_lab.coders as coders
from costeer_lab.coders import (
    CoderResult,
    LLMCoder,
    ReuseCoder,
    coder_from_config,
    get_coder,
)
from costeer_lab.errors import ConfigurationError, NotFoundError, UnknownNameError
from costeer_lab.records import QueriedKnowledge, Task, Workspace
from costeer_lab.testing import ScriptedCoder

from ._coder_helpers import knowledge, ma_code, ma_task, qk_for


def test_get_coder_by_name() -> None:
    assert isinstance(get_coder("reuse"), ReuseCoder)
    assert isinstance(get_coder("llm", model="m"), LLMCoder)


def test_unknown_coder_name_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'reuse'"):
        get_coder("reuze")


def test_bad_arguments_and_bad_configs() -> None:
    with pytest.raises(ConfigurationError, match="reuse"):
        get_coder("reuse", windows=3)
    with pytest.raises(ConfigurationError, match="string 'name'"):
        coder_from_config({"seed": 1})


def test_configs_are_json_and_round_trip() -> None:
    for coder in (ReuseCoder(seed=4, use_component_matches=False), LLMCoder(model="m", seed=2)):
        cfg = json.loads(json.dumps(coder.to_config()))
        assert coder_from_config(cfg).to_config() == coder.to_config()


def _implement_in_worker(coder: ReuseCoder, task_json: str, qk_json: str) -> dict[str, object]:
    task = Task.from_dict(json.loads(task_json))
    qk = QueriedKnowledge.from_dict(json.loads(qk_json))
    return coder.implement_with_info(task, qk, None).to_dict()


def test_coder_crosses_a_process_pool_as_its_config() -> None:
    target = ma_task(10)
    qk = qk_for(target, similar=[(knowledge(ma_task(5), ma_code(5)), 0.9)])
    coder = ReuseCoder(seed=9)
    with ProcessPoolExecutor(max_workers=1) as pool:
        fut = pool.submit(
            _implement_in_worker, coder, json.dumps(target.to_dict()), json.dumps(qk.to_dict())
        )
        remote = CoderResult.from_dict(fut.result(timeout=120))
    local = coder.implement_with_info(target, qk, None)
    assert remote.workspace == local.workspace
    assert remote.used_knowledge_ids == local.used_knowledge_ids
    reduced = coder.__reduce__()  # pickled as its class and config: no live clients or stores
    assert reduced[1] == (ReuseCoder, {"name": "reuse", "seed": 9, "use_component_matches": True})


def test_coder_result_round_trip() -> None:
    res = CoderResult(Workspace({"main.py": "x"}), 3, 4, 0.5, ("a",), 1.5, 1, 0, "llm", "n")
    assert CoderResult.from_dict(json.loads(json.dumps(res.to_dict()))) == res


def test_scripted_coder_per_task_and_attempt() -> None:
    a1, a2 = Workspace({"main.py": "a1"}), Workspace({"main.py": "a2"})
    coder = ScriptedCoder({"t1": [a1, a2]}, default=Workspace({"main.py": "d"}))
    t1, t2 = Task("t1", "t1", ""), Task("t2", "t2", "")
    qk = QueriedKnowledge()
    got = [coder.implement(t, qk, None).code for t in (t1, t2, t1, t1)]
    assert got == ["a1", "d", "a2", "a2"]
    assert [c.attempt for c in coder.calls] == [0, 0, 1, 2]
    assert coder.calls[0].task == t1


def test_scripted_coder_attempt_from_former_traces_and_config() -> None:
    t = ma_task(5)
    ws = [Workspace({"main.py": f"v{i}"}) for i in range(3)]
    coder = ScriptedCoder({t.id: ws}, attempt_from="former_traces")
    trace = knowledge(t, "old")
    assert coder.implement(t, qk_for(t, traces=[trace, trace]), None).code == "v2"
    clone = coder_from_config(json.loads(json.dumps(coder.to_config())))
    assert isinstance(clone, ScriptedCoder)
    assert clone.implement(t, qk_for(t, traces=[trace]), None).code == "v1"


def test_scripted_coder_unknown_task_and_empty_script() -> None:
    with pytest.raises(NotFoundError, match="'nope'"):
        ScriptedCoder({"t": [Workspace()]}).implement(
            Task("nope", "n", ""), QueriedKnowledge(), None
        )
    with pytest.raises(ValueError, match="empty script"):
        ScriptedCoder({"t": []})


def test_lazy_exports_resolve() -> None:
    for name in coders.__all__:
        assert getattr(coders, name) is not None
    assert "LLMCoder" in dir(coders)
    with pytest.raises(AttributeError):
        _ = coders.NotAThing


def test_every_coder_runs_through_the_evolution_job() -> None:
    """The loop builds coders from JSON configs (plus a per-step seed) inside its workers."""
    from costeer_lab.evolve._strategy import implement_job

    target = ma_task(10)
    qk = qk_for(target, similar=[(knowledge(ma_task(5), ma_code(5)), 0.9)])
    scripted = ScriptedCoder({target.id: [Workspace({"main.py": "print(1)\n"})]}).to_config()
    for config, want in (({"name": "reuse"}, ma_code(10)), (scripted, "print(1)\n")):
        payload = {
            "coder": {**config, "seed": 3},
            "task": target.to_dict(),
            "knowledge": qk.to_dict(),
            "last_feedback": None,
        }
        out = implement_job(payload)
        assert out["error"] is None, out["error"]
        assert out["workspace"]["files"]["main.py"] == want
        assert out["used_knowledge_ids"] == ["k:alpha/MA5"]
