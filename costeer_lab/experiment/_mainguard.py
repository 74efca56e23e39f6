"""Refuse a run started from the unguarded top level of a script (the ``spawn`` pitfall).

A process pool starts its workers with ``spawn``, which re-imports the script's main module in
each worker; a script that calls :func:`~costeer_lab.experiment.run_experiment` at module level,
without ``if __name__ == "__main__":``, would start the run again in every worker (they fail
with a long ``RuntimeError`` traceback about the "bootstrapping phase"). The runner checks
before anything is written or started (:func:`costeer_lab._lifecycle.unguarded_main_call`).

Example:
    >>> check_main_guard(True)  # a doctest is no script's top level: nothing to refuse
"""

from __future__ import annotations

from costeer_lab._lifecycle import main_guard_message, unguarded_main_call
from costeer_lab.errors import ConfigurationError

__all__ = ["check_main_guard"]


def check_main_guard(uses_processes: bool) -> None:
    """Raise when the run would start process workers from a script's unguarded top level.

    Raises:
        ConfigurationError: one line explaining the ``if __name__ == "__main__":`` guard.
    """
    if not uses_processes:
        return
    where = unguarded_main_call()
    if where is not None:
        raise ConfigurationError(main_guard_message(where, "run_experiment"))
