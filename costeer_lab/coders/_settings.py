"""Access to the ``llm`` settings section (defined in :mod:`costeer_lab.settings`)."""

from __future__ import annotations

from costeer_lab.settings._llm import DEFAULT_PRICES, LLMSettings, ResolvedEndpoint

__all__ = ["DEFAULT_PRICES", "LLMSettings", "ResolvedEndpoint", "llm_settings"]


def llm_settings() -> LLMSettings:
    """The ``llm`` section of the process settings, or the defaults when not wired yet."""
    from costeer_lab.settings import get_settings

    section = getattr(get_settings(), "llm", None)
    return section if isinstance(section, LLMSettings) else LLMSettings()
