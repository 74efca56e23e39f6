"""The store opener the snapshot tests share (the fixture is in ``conftest.py``)."""

from __future__ import annotations

from collections.abc import Callable

from costeer_lab.store import BaseStore

#: Opens (again and again, each with its own connection) one store of the backend under test.
Opener = Callable[[], BaseStore]
