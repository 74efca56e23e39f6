"""experiment subpackage."""

from costeer_lab.experiment._benchmark import (
    BENCHMARK_COLUMNS,
    RDAGENT_METRICS,
    benchmark_metrics,
    final_rounds,
    rdagent_metrics,
)
from costeer_lab.experiment._contrasts import CONTRAST_COLUMNS, contrasts, default_pairs
from costeer_lab.experiment._linked import (
    SIMILAR_THRESHOLDS,
    calibrated_hit_rate,
    harmful_knowledge,
    success_linked,
)
from costeer_lab.experiment._live import live_results
from costeer_lab.experiment._memory_metrics import memory_metrics
from costeer_lab.experiment._metrics import (
    attempts_to_success,
    first_try_success,
    kb_growth,
    success_curve,
    success_lift,
    task_outcomes,
)
from costeer_lab.experiment._power import (
    PowerEstimate,
    pilot_rates,
    power_estimate,
    power_from_pilot,
    power_table,
    tasks_needed,
)
from costeer_lab.experiment._results import (
    QUERY_KINDS,
    RESULT_COLUMNS,
    load_results,
    save_results,
    validate_results,
)
from costeer_lab.experiment._retrieval_metrics import hit_rate, knowledge_usage, retrieval_success
from costeer_lab.experiment._runner import evolve_arm, run_experiment, stream_id
from costeer_lab.experiment._shared import shared_target
from costeer_lab.experiment._spec import (
    ArmSpec,
    ExperimentSpec,
    SharedStore,
    StageSpec,
    StartSnapshot,
    load_spec,
)
from costeer_lab.experiment._start_snapshot import read_start_snapshots
from costeer_lab.experiment._summary import (
    arm_agreement,
    arm_differences,
    compare_arms,
    summary_table,
)

__all__: list[str] = [
    "BENCHMARK_COLUMNS",
    "CONTRAST_COLUMNS",
    "QUERY_KINDS",
    "RDAGENT_METRICS",
    "RESULT_COLUMNS",
    "SIMILAR_THRESHOLDS",
    "ArmSpec",
    "ExperimentSpec",
    "PowerEstimate",
    "SharedStore",
    "StageSpec",
    "StartSnapshot",
    "arm_agreement",
    "arm_differences",
    "attempts_to_success",
    "benchmark_metrics",
    "calibrated_hit_rate",
    "compare_arms",
    "contrasts",
    "default_pairs",
    "evolve_arm",
    "final_rounds",
    "first_try_success",
    "harmful_knowledge",
    "hit_rate",
    "kb_growth",
    "knowledge_usage",
    "live_results",
    "load_results",
    "load_spec",
    "memory_metrics",
    "pilot_rates",
    "power_estimate",
    "power_from_pilot",
    "power_table",
    "rdagent_metrics",
    "read_start_snapshots",
    "retrieval_success",
    "run_experiment",
    "save_results",
    "shared_target",
    "stream_id",
    "success_curve",
    "success_lift",
    "success_linked",
    "summary_table",
    "task_outcomes",
    "tasks_needed",
    "validate_results",
]
