"""Run untrusted code: namespaces, a private filesystem view, limits, kernel-observed status.

The sandbox knows nothing of tasks or verdicts; evaluators (:mod:`costeer_lab.evaluate`) use it.

Example:
    >>> from costeer_lab.records import Workspace  # doctest: +SKIP
    >>> with Sandbox(Limits(wall_time_s=10)) as sb:  # doctest: +SKIP
    ...     print(sb.run(Workspace({"main.py": "print(6 * 7)"})).stdout)
    42
"""

from __future__ import annotations

from costeer_lab.sandbox._limits import Limits, SandboxResult
from costeer_lab.sandbox._sandbox import Sandbox, shared_sandbox
from costeer_lab.sandbox._view import WORK_DIR
from costeer_lab.settings import SandboxSettings

__all__ = ["WORK_DIR", "Limits", "Sandbox", "SandboxResult", "SandboxSettings", "shared_sandbox"]
