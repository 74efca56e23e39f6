"""Coders: turn a task plus retrieved knowledge into code (:class:`BaseCoder`).

``ReuseCoder`` is the offline default (adapts retrieved code, never calls an LLM);
``LLMCoder`` prompts any OpenAI-compatible endpoint (chat or plain completions) through the one
model client (:mod:`costeer_lab.llm`), with a response cache in the store
that can replay a recorded experiment with no network. The LLM parts (and pydantic) are imported
lazily, so ``from costeer_lab.coders import ReuseCoder`` stays light.

Example:
    >>> from costeer_lab.coders import get_coder
    >>> from costeer_lab.records import QueriedKnowledge, Task
    >>> coder = get_coder("reuse")
    >>> task = Task("t", "MA5", "", formulation="Mean($close, 5)")
    >>> ws = coder.implement(task, QueriedKnowledge(), None)
    >>> "result.parquet" in ws.code
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from costeer_lab._lazy import lazy_exports as _lazy_exports
from costeer_lab.coders._base import AbstractCoder, BaseCoder, CoderResult
from costeer_lab.coders._registry import coder_from_config, get_coder, register_coder
from costeer_lab.coders._reuse import ReuseCoder
from costeer_lab.errors import LLMError, ReplayMissError

if TYPE_CHECKING:
    from costeer_lab.coders._llm import LLMCoder
    from costeer_lab.llm._cache import CacheMode
    from costeer_lab.settings import LLMSettings

_LAZY: dict[str, str] = {
    "CacheMode": "costeer_lab.llm._cache",
    "LLMCoder": "costeer_lab.coders._llm",
    "LLMSettings": "costeer_lab.settings",
}

__all__ = [
    "AbstractCoder",
    "BaseCoder",
    "CacheMode",
    "CoderResult",
    "LLMCoder",
    "LLMError",
    "LLMSettings",
    "ReplayMissError",
    "ReuseCoder",
    "coder_from_config",
    "get_coder",
    "register_coder",
]


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, __all__)
