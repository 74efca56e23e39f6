"""Test support shipped with the package: shared backend suites, fakes and fixtures.

Names are imported lazily so that a problem in one fake (or a missing optional dependency) never
breaks the others. To add an export, add it to ``_LAZY``.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> private module that defines it
_LAZY: dict[str, str] = {
    "FakeOpenAIServer": "costeer_lab.testing._openai_server",
    "RecordedRequest": "costeer_lab.testing._openai_server",
    "StoreTestSuite": "costeer_lab.testing._store_suite",
    "ScriptedCall": "costeer_lab.testing._scripted_coder",
    "ScriptedCoder": "costeer_lab.testing._scripted_coder",
    "ATTACKS": "costeer_lab.testing._redteam",
    "AlwaysPassEvaluator": "costeer_lab.testing._redteam",
    "Attack": "costeer_lab.testing._redteam",
    "AttackResult": "costeer_lab.testing._redteam",
    "RedTeam": "costeer_lab.testing._redteam",
    "benign_controls": "costeer_lab.testing._redteam",
    "run_all": "costeer_lab.testing._redteam",
    "run_attack": "costeer_lab.testing._redteam",
    "run_experiment_attacks": "costeer_lab.testing._redteam",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'costeer_lab.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
