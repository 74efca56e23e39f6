"""viz subpackage: plots of experiment results, knowledge-graph drawing, dashboard.

Every plot has a pure-data companion ``get_<x>_info(results) -> NamedTuple`` and a drawing
function ``plot_<x>(results, *, ax=None) -> Axes``; nothing here calls ``plt.show()``. The
widgets (``knowledge_explorer``, ``query_playground``, ``results_dashboard``,
``follow_experiment`` and their classes) import ipywidgets on first use, so ``import
costeer_lab.viz`` does not. ``repo_root`` and ``in_repo`` place a notebook's outputs in the
checkout.
"""

from typing import TYPE_CHECKING

from costeer_lab._lazy import lazy_exports as _lazy_exports
from costeer_lab.viz._attempts import AttemptsInfo, plot_attempts
from costeer_lab.viz._attempts import _get_attempts_info as get_attempts_info
from costeer_lab.viz._common import arm_colors, arm_styles, dodge, figure_png, png_data_uri
from costeer_lab.viz._explorer_data import (
    TaskEntry,
    TaskKnowledge,
    TraceInfo,
    get_task_knowledge,
    knowledge_label,
    list_tasks,
)
from costeer_lab.viz._graph import (
    DEFAULT_KIND_COLORS,
    NODE_KINDS,
    KnowledgeGraphInfo,
    draw_knowledge_graph,
    export_graph_html,
    get_knowledge_graph_info,
)
from costeer_lab.viz._hit_rate import HitRateInfo, plot_hit_rate
from costeer_lab.viz._hit_rate import _get_hit_rate_info as get_hit_rate_info
from costeer_lab.viz._kb_growth import KbArm, KbGrowthInfo, plot_kb_growth
from costeer_lab.viz._kb_growth import _get_kb_growth_info as get_kb_growth_info
from costeer_lab.viz._knowledge_usage import KnowledgeUsageInfo, plot_knowledge_usage
from costeer_lab.viz._knowledge_usage import (
    _get_knowledge_usage_info as get_knowledge_usage_info,
)
from costeer_lab.viz._notebook import REPO_ROOT_ENV, in_repo, repo_root
from costeer_lab.viz._report import REPORT_SECTIONS, build_report, report_experiment
from costeer_lab.viz._success_curve import ArmCurve, SuccessCurveInfo, plot_success_curve
from costeer_lab.viz._success_curve import _get_success_curve_info as get_success_curve_info
from costeer_lab.viz._task_timeline import TaskTimelineInfo, TimelinePoint, plot_task_timeline
from costeer_lab.viz._task_timeline import _get_task_timeline_info as get_task_timeline_info

if TYPE_CHECKING:
    from costeer_lab.viz._explorer import (
        KnowledgeExplorer,
        QueryPlayground,
        StaticFallback,
        knowledge_explorer,
        query_playground,
        task_knowledge_html,
    )
    from costeer_lab.viz._monitor import ExperimentMonitor, follow_experiment
    from costeer_lab.viz._widgets import ALL_ARMS, ResultsDashboard, results_dashboard

#: The names whose modules import ipywidgets: public name -> module, imported on first access.
_WIDGETS: dict[str, str] = {
    "KnowledgeExplorer": "._explorer",
    "QueryPlayground": "._explorer",
    "StaticFallback": "._explorer",
    "knowledge_explorer": "._explorer",
    "query_playground": "._explorer",
    "task_knowledge_html": "._explorer",
    "ExperimentMonitor": "._monitor",
    "follow_experiment": "._monitor",
    "ALL_ARMS": "._widgets",
    "ResultsDashboard": "._widgets",
    "results_dashboard": "._widgets",
}

__all__ = [
    "ALL_ARMS",
    "DEFAULT_KIND_COLORS",
    "NODE_KINDS",
    "REPORT_SECTIONS",
    "ArmCurve",
    "AttemptsInfo",
    "HitRateInfo",
    "KbArm",
    "KbGrowthInfo",
    "KnowledgeGraphInfo",
    "KnowledgeUsageInfo",
    "ResultsDashboard",
    "SuccessCurveInfo",
    "TaskTimelineInfo",
    "TimelinePoint",
    "arm_colors",
    "build_report",
    "draw_knowledge_graph",
    "export_graph_html",
    "figure_png",
    "get_attempts_info",
    "get_hit_rate_info",
    "get_kb_growth_info",
    "get_knowledge_graph_info",
    "get_knowledge_usage_info",
    "get_success_curve_info",
    "get_task_timeline_info",
    "plot_attempts",
    "plot_hit_rate",
    "plot_kb_growth",
    "plot_knowledge_usage",
    "plot_success_curve",
    "plot_task_timeline",
    "png_data_uri",
    "report_experiment",
    "results_dashboard",
]
__all__ += [
    "ExperimentMonitor",
    "KnowledgeExplorer",
    "QueryPlayground",
    "StaticFallback",
    "TaskEntry",
    "TaskKnowledge",
    "TraceInfo",
    "arm_styles",
    "dodge",
    "follow_experiment",
    "get_task_knowledge",
    "knowledge_explorer",
    "knowledge_label",
    "list_tasks",
    "query_playground",
    "task_knowledge_html",
]
__all__ += ["REPO_ROOT_ENV", "in_repo", "repo_root"]

__getattr__, __dir__ = _lazy_exports(__name__, _WIDGETS, __all__)
