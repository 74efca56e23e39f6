"""Fixtures of the model client tests (a real local OpenAI-compatible server)."""

from __future__ import annotations

from costeer_lab.testing.fixtures import fake_openai

__all__ = ["fake_openai"]
