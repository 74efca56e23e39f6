"""costeer_lab: a research toolkit for knowledge-driven code evolution (the CoSTEER method).

The workflow, top to bottom::

    spec = load_spec("data/specs/demo.yaml")           # or a dict / ExperimentSpec
    path = run_experiment(spec, "runs/demo")           # arms x seeds -> results.parquet
    report_experiment("runs/demo")                     # summary, plots -> report.html

or by hand: ``load_suite`` -> ``open_kb`` -> ``make_rag_strategy`` -> ``get_coder`` ->
``EvoAgent``; the records (``Task``, ``Workspace``, feedback, knowledge) live in
:mod:`costeer_lab.records`, the configuration in :mod:`costeer_lab.settings`. Names are imported
on first use, so ``import costeer_lab`` stays fast and works without extras.

Example:
    >>> import costeer_lab
    >>> suite = costeer_lab.load_suite("humaneval", limit=2)
    >>> kb = costeer_lab.open_kb(store=":memory:")
    >>> costeer_lab.Task.__module__
    'costeer_lab.records'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from costeer_lab._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from costeer_lab._fingerprint import error_fingerprint
    from costeer_lab.coders import BaseCoder, LLMCoder, ReuseCoder, get_coder
    from costeer_lab.embed import get_embedder
    from costeer_lab.errors import CosteerLabError
    from costeer_lab.evaluate import MultiEvaluator
    from costeer_lab.evolve import EvoAgent, EvolvingItem, EvolvingStrategy
    from costeer_lab.experiment import (
        ExperimentSpec,
        load_results,
        load_spec,
        run_experiment,
        summary_table,
    )
    from costeer_lab.knowledge import make_rag_strategy, open_kb
    from costeer_lab.memory import open_memory
    from costeer_lab.records import (
        Knowledge,
        MultiFeedback,
        QueriedKnowledge,
        SingleFeedback,
        Task,
        Workspace,
    )
    from costeer_lab.settings import Settings, get_settings
    from costeer_lab.store import get_store
    from costeer_lab.suites import Suite, load_suite
    from costeer_lab.viz import report_experiment

__version__ = "0.1.0"

# public name -> module that defines it (imported on first access)
_LAZY: dict[str, str] = {
    # experiments: the main entry points
    "ExperimentSpec": "costeer_lab.experiment",
    "load_spec": "costeer_lab.experiment",
    "run_experiment": "costeer_lab.experiment",
    "load_results": "costeer_lab.experiment",
    "summary_table": "costeer_lab.experiment",
    "report_experiment": "costeer_lab.viz",
    # the pieces of one evolution run
    "Suite": "costeer_lab.suites",
    "load_suite": "costeer_lab.suites",
    "open_kb": "costeer_lab.knowledge",
    "make_rag_strategy": "costeer_lab.knowledge",
    "open_memory": "costeer_lab.memory",
    "error_fingerprint": "costeer_lab._fingerprint",
    "BaseCoder": "costeer_lab.coders",
    "ReuseCoder": "costeer_lab.coders",
    "LLMCoder": "costeer_lab.coders",
    "get_coder": "costeer_lab.coders",
    "MultiEvaluator": "costeer_lab.evaluate",
    "EvoAgent": "costeer_lab.evolve",
    "EvolvingItem": "costeer_lab.evolve",
    "EvolvingStrategy": "costeer_lab.evolve",
    # records
    "Task": "costeer_lab.records",
    "Workspace": "costeer_lab.records",
    "SingleFeedback": "costeer_lab.records",
    "MultiFeedback": "costeer_lab.records",
    "Knowledge": "costeer_lab.records",
    "QueriedKnowledge": "costeer_lab.records",
    # storage and configuration
    "get_store": "costeer_lab.store",
    "get_embedder": "costeer_lab.embed",
    "Settings": "costeer_lab.settings",
    "get_settings": "costeer_lab.settings",
    "CosteerLabError": "costeer_lab.errors",
}

__all__ = [
    "BaseCoder",
    "CosteerLabError",
    "EvoAgent",
    "EvolvingItem",
    "EvolvingStrategy",
    "ExperimentSpec",
    "Knowledge",
    "LLMCoder",
    "MultiEvaluator",
    "MultiFeedback",
    "QueriedKnowledge",
    "ReuseCoder",
    "Settings",
    "SingleFeedback",
    "Suite",
    "Task",
    "Workspace",
    "__version__",
    "error_fingerprint",
    "get_coder",
    "get_embedder",
    "get_settings",
    "get_store",
    "load_results",
    "load_spec",
    "load_suite",
    "make_rag_strategy",
    "open_kb",
    "open_memory",
    "report_experiment",
    "run_experiment",
    "summary_table",
]

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, __all__)
