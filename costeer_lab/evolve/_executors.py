"""Executors that run coder and evaluator work: processes (default), threads, serial, Dask."""

from __future__ import annotations

import concurrent.futures as cf
import os
from collections.abc import Callable
from typing import Any, TypeVar

from costeer_lab._lifecycle import main_guard_message, process_pool, unguarded_main_call
from costeer_lab.errors import ConfigurationError, did_you_mean

__all__ = ["SerialExecutor", "make_executor"]

T = TypeVar("T")


class SerialExecutor(cf.Executor):
    """Runs each submitted call at once in the caller's thread (debugging, tiny runs)."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> cf.Future[T]:
        fut: cf.Future[T] = cf.Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            fut.set_exception(exc)
        return fut


KINDS = ("process", "thread", "serial", "dask")


def make_executor(
    kind: str = "process", workers: int | None = None, *, address: str | None = None
) -> cf.Executor:
    """Create an executor by name.

    Args:
        kind: ``process`` (a spawn-based process pool: no state shared with the parent; its
            workers die with this process and ignore Ctrl-C, see :mod:`costeer_lab._lifecycle`;
            a script must create it under ``if __name__ == "__main__":``),
            ``thread``, ``serial`` or ``dask`` (a ``dask.distributed`` client's executor; connects
            to ``address`` or starts a ``LocalCluster`` with ``workers`` processes).
        workers: parallelism (default: CPU count).

    Raises:
        ConfigurationError: an unknown kind, or ``process`` from the unguarded top level of a
            script (see :func:`costeer_lab._lifecycle.unguarded_main_call`).

    Example:
        >>> with make_executor("thread", 2) as ex:
        ...     list(ex.map(abs, [-1, 2]))
        [1, 2]
    """
    n = workers or os.cpu_count() or 1
    if kind == "process":
        where = unguarded_main_call()
        if where is not None:
            raise ConfigurationError(main_guard_message(where, "a process executor"))
        return process_pool(n)
    if kind == "thread":
        return cf.ThreadPoolExecutor(max_workers=n)
    if kind == "serial":
        return SerialExecutor()
    if kind == "dask":
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - the extra is installed by `make test`
            raise ConfigurationError(
                "the dask executor needs the extra: pip install 'costeer-lab[dask]'"
            ) from exc
        if address:
            client = Client(address)  # type: ignore[no-untyped-call]
        else:
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = Client(cluster)  # type: ignore[no-untyped-call]
        return _DaskExecutor(client)
    raise ConfigurationError(f"unknown executor kind {kind!r}; {did_you_mean(kind, KINDS)}")


class _DaskExecutor(cf.Executor):
    """Wraps ``client.get_executor()`` and closes the client (and its cluster) on shutdown."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._inner: cf.Executor = client.get_executor()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> cf.Future[T]:
        return self._inner.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._inner.shutdown(wait=wait)
        cluster = getattr(self._client, "cluster", None)
        self._client.close()
        if cluster is not None:
            cluster.close()
