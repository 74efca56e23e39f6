"""Pytest fixtures shipped with costeer_lab (load with ``pytest_plugins``).

Example:
    In a ``conftest.py``::

        pytest_plugins = ["costeer_lab.testing.fixtures"]

        def test_chat(fake_openai):
            assert fake_openai.base_url.startswith("http://127.0.0.1:")
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from costeer_lab.testing._openai_server import FakeOpenAIServer

__all__ = ["fake_openai"]


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer` on 127.0.0.1, stopped after the test."""
    with FakeOpenAIServer() as server:
        yield server
