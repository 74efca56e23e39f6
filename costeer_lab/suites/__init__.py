"""Task suites: Alpha158 factors, HumanEval functions and user task files.

Example:
    >>> from costeer_lab.suites import load_suite
    >>> suite = load_suite("humaneval", limit=3)
    >>> suite.tasks[0].extra["entry_point"], suite.split("train")
    ('has_close_elements', ['humaneval/0'])
"""

from costeer_lab.suites._alpha158 import alpha158_suite
from costeer_lab.suites._factor_contract import SCOPES, factor_contract
from costeer_lab.suites._humaneval import humaneval_suite
from costeer_lab.suites._panel import ensure_panel, make_panel
from costeer_lab.suites._protocol import SuiteLike
from costeer_lab.suites._rdagent import is_rdagent_document, rdagent_suite
from costeer_lab.suites._rdagent_data import DAILY_PV_COLUMNS, daily_pv_frame, ensure_daily_pv
from costeer_lab.suites._registry import list_suites, load_suite, register_suite
from costeer_lab.suites._suite import Suite
from costeer_lab.suites._taskfile import load_task_file, parse_task_document

__all__ = [
    "DAILY_PV_COLUMNS",
    "SCOPES",
    "Suite",
    "SuiteLike",
    "alpha158_suite",
    "daily_pv_frame",
    "ensure_daily_pv",
    "ensure_panel",
    "factor_contract",
    "humaneval_suite",
    "is_rdagent_document",
    "list_suites",
    "load_suite",
    "load_task_file",
    "make_panel",
    "parse_task_document",
    "rdagent_suite",
    "register_suite",
]
