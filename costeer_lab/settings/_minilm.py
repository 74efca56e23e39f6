"""Settings of the ``minilm`` embedder."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["MiniLMSettings"]


class MiniLMSettings(BaseModel):
    """Settings of the ``minilm`` embedder (section ``minilm``; env ``COSTEER_LAB_MINILM__*``)."""

    #: onnxruntime intra-op threads (0 lets onnxruntime decide).
    intra_op_threads: int = Field(default=1, ge=0)
    #: Longer texts are truncated to this many word pieces (sentence-transformers uses 256).
    max_length: int = Field(default=256, ge=8, le=512)
    #: Texts per ONNX run; each batch is padded to its longest text.
    batch_size: int = Field(default=32, ge=1)
