"""The shared test suite every :class:`~costeer_lab.store.BaseStore` backend must pass.

Subclass :class:`StoreTestSuite` in a test module with a name starting with ``Test`` and override
the ``store`` fixture to yield a fresh, empty store (closing it afterwards). Every ``test_*``
method then runs against your backend, as with optuna's ``StorageTestCase`` or scikit-learn's
``check_estimator``. A backend is done when it passes.

Example:
    >>> import pytest
    >>> from costeer_lab.store import SQLiteStore
    >>> class TestMyBackend(StoreTestSuite):
    ...     @pytest.fixture
    ...     def store(self):
    ...         with SQLiteStore(":memory:") as s:
    ...             yield s
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from costeer_lab.store import BaseStore
from costeer_lab.testing._store_suite_data import DataStoreTests
from costeer_lab.testing._store_suite_graph import GraphStoreTests
from costeer_lab.testing._store_suite_tx import TransactionStoreTests

__all__ = ["StoreTestSuite"]


class StoreTestSuite(GraphStoreTests, DataStoreTests, TransactionStoreTests):
    """All contract tests of :class:`~costeer_lab.store.BaseStore` (override ``store``)."""

    @pytest.fixture
    def store(self) -> Iterator[BaseStore]:
        """Yield a fresh, empty store and close it afterwards. Subclasses must override this."""
        raise NotImplementedError(
            f"{type(self).__name__} must override the 'store' fixture to yield a fresh store"
        )
        yield  # pragma: no cover - makes this a generator fixture
