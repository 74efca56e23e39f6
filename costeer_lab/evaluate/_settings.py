"""Access to the ``evaluator`` settings section (defined in :mod:`costeer_lab.settings`)."""

from __future__ import annotations

from costeer_lab.settings._evaluator import EvaluatorSettings

__all__ = ["EvaluatorSettings", "evaluator_settings"]


def evaluator_settings() -> EvaluatorSettings:
    """The ``evaluator`` section of the process settings, or the defaults when not wired yet."""
    from costeer_lab.settings import get_settings

    section = getattr(get_settings(), "evaluator", None)
    return section if isinstance(section, EvaluatorSettings) else EvaluatorSettings()
