"""experiment subpackage."""

from costeer_lab.experiment._benchmark import BENCHMARK_COLUMNS, benchmark_metrics
from costeer_lab.experiment._memory_metrics import MEMORY_METRIC_COLUMNS, memory_metrics
from costeer_lab.experiment._metrics import (
    attempts_to_success,
    first_try_success,
    kb_growth,
    success_curve,
    success_lift,
    task_outcomes,
)
from costeer_lab.experiment._results import (
    QUERY_KINDS,
    RESULT_COLUMNS,
    load_results,
    save_results,
    validate_results,
)
from costeer_lab.experiment._retrieval_metrics import (
    hit_rate,
    knowledge_usage,
    query_table,
    retrieval_success,
)
from costeer_lab.experiment._runner import (
    attempt_rows,
    run_arm,
    run_experiment,
    select_tasks,
)
from costeer_lab.experiment._spec import ArmSpec, ExperimentSpec, load_spec
from costeer_lab.experiment._summary import arm_differences, summary_table

__all__: list[str] = [
    "BENCHMARK_COLUMNS",
    "MEMORY_METRIC_COLUMNS",
    "QUERY_KINDS",
    "RESULT_COLUMNS",
    "ArmSpec",
    "ExperimentSpec",
    "arm_differences",
    "attempt_rows",
    "attempts_to_success",
    "benchmark_metrics",
    "first_try_success",
    "hit_rate",
    "kb_growth",
    "knowledge_usage",
    "load_results",
    "load_spec",
    "memory_metrics",
    "query_table",
    "retrieval_success",
    "run_arm",
    "run_experiment",
    "save_results",
    "select_tasks",
    "success_curve",
    "success_lift",
    "summary_table",
    "task_outcomes",
    "validate_results",
]
