"""Test support shipped with the package: shared backend suites, fakes, fixtures, synthetic
results tables (``example_results``, ``synthetic_results``, ``make_row``) and the red team of
evaluation integrity (``ATTACKS``, ``run_attack``, ``run_all``; see ``benchmarks.integrity``).

Names are imported lazily so that a problem in one fake (or a missing optional dependency) never
breaks the others. To add an export, add it to ``_LAZY``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from costeer_lab._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from costeer_lab.testing._bad_inputs import BAD_INPUTS, BadInput, build_workspace, snapshot
    from costeer_lab.testing._openai_server import FakeOpenAIServer, RecordedRequest
    from costeer_lab.testing._postgres import PostgresTestServer, PostgresUnavailable
    from costeer_lab.testing._redteam import (
        ATTACKS,
        AlwaysPassEvaluator,
        Attack,
        AttackResult,
        RedTeam,
        benign_controls,
        run_all,
        run_attack,
        run_experiment_attacks,
    )
    from costeer_lab.testing._results_tables import example_results, make_row, synthetic_results
    from costeer_lab.testing._scripted_coder import ScriptedCall, ScriptedCoder
    from costeer_lab.testing._store_suite import StoreTestSuite

# public name -> private module that defines it
_LAZY: dict[str, str] = {
    "FakeOpenAIServer": "costeer_lab.testing._openai_server",
    "RecordedRequest": "costeer_lab.testing._openai_server",
    "StoreTestSuite": "costeer_lab.testing._store_suite",
    "PostgresTestServer": "costeer_lab.testing._postgres",
    "PostgresUnavailable": "costeer_lab.testing._postgres",
    "ScriptedCall": "costeer_lab.testing._scripted_coder",
    "example_results": "costeer_lab.testing._results_tables",
    "make_row": "costeer_lab.testing._results_tables",
    "synthetic_results": "costeer_lab.testing._results_tables",
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
    "BAD_INPUTS": "costeer_lab.testing._bad_inputs",
    "BadInput": "costeer_lab.testing._bad_inputs",
    "build_workspace": "costeer_lab.testing._bad_inputs",
    "snapshot": "costeer_lab.testing._bad_inputs",
}

__all__ = [
    "ATTACKS",
    "AlwaysPassEvaluator",
    "Attack",
    "AttackResult",
    "FakeOpenAIServer",
    "PostgresTestServer",
    "PostgresUnavailable",
    "RecordedRequest",
    "RedTeam",
    "ScriptedCall",
    "ScriptedCoder",
    "StoreTestSuite",
    "benign_controls",
    "example_results",
    "make_row",
    "run_all",
    "run_attack",
    "run_experiment_attacks",
    "synthetic_results",
]
__all__ += ["BAD_INPUTS", "BadInput", "build_workspace", "snapshot"]


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, __all__)
