"""Access to the ``sandbox`` settings section (defined in :mod:`costeer_lab.settings`)."""

from __future__ import annotations

from costeer_lab.settings._sandbox import SandboxSettings

__all__ = ["SandboxSettings", "sandbox_settings"]


def sandbox_settings() -> SandboxSettings:
    """The ``sandbox`` section of the process settings, or the defaults when not wired yet."""
    from costeer_lab.settings import get_settings

    section = getattr(get_settings(), "sandbox", None)
    return section if isinstance(section, SandboxSettings) else SandboxSettings()
