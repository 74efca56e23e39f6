"""Options of the RAG strategies: which :class:`RAGSettings` keys each honours, checked.

Light on purpose (settings and errors only), so specs can validate arms without loading the
knowledge bases.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from costeer_lab.errors import InvalidInputError, UnknownNameError, did_you_mean
from costeer_lab.settings import RAGSettings, get_settings

__all__ = ["rag_option_keys", "validate_rag_options"]

_VERSIONS = ("v1", "v2")

#: The :class:`RAGSettings` fields each strategy honours (V2 honours every field).
_V1_KEYS = frozenset(
    {
        "max_former_traces", "trial_limit", "max_similar", "candidate_multiplier", "sampler",
        "sampler_temperature", "sampler_keep_probability", "seed", "index_kind", "log_queries",
        "former_trace_query", "similar_query",
    }
)  # fmt: skip


def rag_option_keys(name: str) -> tuple[str, ...]:
    """The option keys strategy ``name`` honours (sorted), i.e. valid ``rag_options`` keys.

    Example:
        >>> "error_query" in rag_option_keys("v2"), "error_query" in rag_option_keys("v1")
        (True, False)
    """
    if name not in _VERSIONS:
        raise UnknownNameError(f"unknown RAG strategy {name!r}; {did_you_mean(name, _VERSIONS)}")
    fields = RAGSettings.model_fields
    return tuple(sorted(k for k in fields if name == "v2" or k in _V1_KEYS))


def validate_rag_options(
    name: str, options: dict[str, Any], *, where: str = "rag_options"
) -> RAGSettings:
    """The settings of strategy ``name`` with ``options`` applied, every key and value checked.

    Raises:
        InvalidInputError: a key the strategy does not honour (the message names it, the
            closest valid key and every valid one) or a value of the wrong type/range.

    Example:
        >>> validate_rag_options("v2", {"error_query": False}).error_query
        False
    """
    valid = rag_option_keys(name)
    for key in options:
        if key not in valid:
            raise InvalidInputError(
                f"{where}: {key!r} is not an option of the {name} RAG strategy; "
                f"valid keys: {did_you_mean(str(key), valid)}"
            )
    fields = get_settings().rag.model_dump()
    fields.update(options)
    try:
        return RAGSettings.model_validate(fields, strict=True)  # '2' or 2.0 is no count
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']} (got {e.get('input')!r})"
            for e in exc.errors()
        )
        raise InvalidInputError(f"{where}: {problems}") from None
