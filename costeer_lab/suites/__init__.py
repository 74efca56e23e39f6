"""Task suites: Alpha158 factors, HumanEval functions and user task files.

Example:
    >>> from costeer_lab.suites import load_suite
    >>> suite = load_suite("humaneval", limit=3)
    >>> suite.tasks[0].extra["entry_point"], suite.split("train")
    ('has_close_elements', ['humaneval/0'])
"""

from costeer_lab.suites._alpha158 import alpha158_suite
from costeer_lab.suites._humaneval import humaneval_suite
from costeer_lab.suites._panel import make_panel
from costeer_lab.suites._protocol import SuiteLike
from costeer_lab.suites._rdagent import rdagent_suite
from costeer_lab.suites._registry import list_suites, load_suite, register_suite
from costeer_lab.suites._scope import ScopeMismatchWarning
from costeer_lab.suites._suite import Suite
from costeer_lab.suites._taskfile import load_task_file

__all__ = [
    "ScopeMismatchWarning",
    "Suite",
    "SuiteLike",
    "alpha158_suite",
    "humaneval_suite",
    "list_suites",
    "load_suite",
    "load_task_file",
    "make_panel",
    "rdagent_suite",
    "register_suite",
]
