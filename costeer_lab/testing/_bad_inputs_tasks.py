"""Bad inputs: task files whose references, tests, entry points or names are wrong;
names that would leave their folder; ``--fresh`` on a folder holding a user's files.

Gathered by :mod:`costeer_lab.testing._bad_inputs` (see ``_bad_inputs_base`` for the shape).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from costeer_lab.testing._bad_inputs_base import (
    BASE_SPEC,
    DROP,
    PY_TASKS,
    BadInput,
    case,
    run_case,
    spec_variant,
)

_ADD: dict[str, Any] = PY_TASKS["tasks"][0]
_SUB: dict[str, Any] = {
    **_ADD,
    "id": "sub",
    "name": "sub",
    "description": "Subtract two numbers.",
    "entry_point": "sub",
    "canonical_solution": "def sub(a, b):\n    return a - b\n",
    "tests": "def check(f):\n    assert f(3, 2) == 1\n",
}


def _py(*tasks: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "python_function", "tasks": list(tasks)}


def _with(**changes: Any) -> dict[str, Any]:
    """The valid ``add`` task with ``changes`` (a value of ``None`` removes the field)."""
    return {k: v for k, v in {**_ADD, **changes}.items() if v is not None}


#: Task files of the cases: workspace path -> document (YAML) or text (JSON).
_TASK_FILES: dict[str, Any] = {
    "ref_syntax.yaml": _py(_with(canonical_solution="def add(a, b):\n    return a +\n")),
    "ref_fails.yaml": _py(_with(canonical_solution="def add(a, b):\n    return a * b\n")),
    "ref_raises.yaml": _py(
        _SUB, _with(canonical_solution="def add(a, b):\n    raise ValueError('todo')\n")
    ),
    "ref_no_load.yaml": _py(
        _with(canonical_solution="import no_such_module_x\n\ndef add(a, b):\n    return a + b\n")
    ),
    "ref_never_ends.yaml": _py(
        _with(canonical_solution="def add(a, b):\n    while True:\n        a += 1\n")
    ),
    "tests_no_check.yaml": _py(_with(tests="assert add(1, 2) == 3\n")),
    "tests_syntax.yaml": _py(_with(tests="def check(f):\n    assert f(1, 2) ==\n")),
    "entry_os_system.yaml": _py(_with(entry_point="os.system")),
    "entry_undefined.yaml": _py(_with(canonical_solution="def plus(a, b):\n    return a + b\n")),
    "dup_name.yaml": _py(_ADD, {**_SUB, "name": "add"}),
    "id_newline.yaml": _py(_with(id="add\nsub")),
    "name_nul.json": json.dumps(_py(_with(name="add\x00"))),
    "output_escape.yaml": {
        "kind": "factor",
        "output_file": "../../escape.parquet",
        "tasks": [{"id": "MOM1", "name": "MOM1", "description": "One-day momentum."}],
    },
}


def _task_spec(label: str, task_file: str, **changes: Any) -> dict[str, Any]:
    return spec_variant(
        label,
        suite=f"specs/tasks28/{task_file}",
        suite_options={},
        tasks={"split": "all"},
        seed_knowledge={"split": None},
        arms=[{"name": "a"}],
        **changes,
    )


_LONG = "x" * 150

#: Spec file stem -> spec document (written to ``specs/<stem>.yaml``).
SPECS: dict[str, Any] = {
    **{f"tf_{name.split('.')[0]}": _task_spec("tf", name) for name in _TASK_FILES},
    "name_experiment_newline": spec_variant("x", name="two\nlines"),
    "name_experiment_nul": spec_variant("x", name="nul\x00name"),
    "name_experiment_long": spec_variant("x", name="e" * 300),
    "name_arm_escape": spec_variant("x", arms__0__name="../../escape"),
    "name_arm_absolute": spec_variant("x", arms__0__name="/tmp/escape"),
    "name_arm_long": spec_variant("x", arms__0__name=_LONG),
    "name_stage_slash": spec_variant(
        "x", tasks=DROP, stages=[{"name": "learn/../..", "tasks": {"split": "test"}}]
    ),
    "name_stage_long": spec_variant(
        "x", tasks=DROP, stages=[{"name": _LONG, "tasks": {"split": "test"}}]
    ),
}
_RUN_SPEC = copy.deepcopy(BASE_SPEC)

#: Workspace-relative path -> content (text, bytes, or a document written as YAML).
FILES: dict[str, Any] = {
    **{f"specs/tasks28/{name}": doc for name, doc in _TASK_FILES.items()},
    # a user's own folder: --fresh must not empty it
    "mine/thesis.tex": "\\documentclass{article}\n",
    "mine/figures/plot.png": b"\x89PNG not really\n",
    # a run folder (its spec.json written as JSON text) that also holds a user's file
    "runs/with_notes/spec.json": json.dumps(_RUN_SPEC, indent=2),
    "runs/with_notes/kb/none-seed0.db": b"",
    "runs/with_notes/notes.md": "my notes on this run\n",
}

_T = "task file"


def _tf(stem: str, what: str, expect: str) -> BadInput:
    return run_case(f"tf_{stem}", what, expect, _T)


def _fresh(name: str, what: str, out: str, expect: str) -> BadInput:
    argv = ["run", "specs/good.yaml", "--out", out, "--fresh"]
    return case(name, "run output", what, argv, expect)


#: The cases of this module.
CASES: tuple[BadInput, ...] = (
    _tf(
        "ref_syntax",
        "reference solution with a syntax error",
        "tasks[0].canonical_solution (task 'add'): the reference solution does not compile: "
        "line 2: invalid syntax",
    ),
    _tf(
        "ref_fails",
        "reference solution that fails its own tests",
        "task 'add': the reference solution fails its own tests: tests line 2: "
        "assert f(1, 2) == 3 (it returned: 2)",
    ),
    _tf(
        "ref_raises",
        "reference solution that raises in its own tests",
        "task 'add': the reference solution fails its own tests: it raised ValueError: todo",
    ),
    _tf(
        "ref_no_load",
        "reference solution importing a missing module",
        "task 'add': the reference solution does not load: ModuleNotFoundError",
    ),
    case(
        "spec-tf_ref_never_ends",
        _T,
        "reference solution that never ends (1 s limit)",
        ["run", "specs/tf_ref_never_ends.yaml", "--out", "runs/new"],
        "task 'add': the reference solution did not finish within 1 s",
        env={"COSTEER_LAB_EVALUATOR__PYFUNC_TIMEOUT_S": "1"},
    ),
    _tf(
        "tests_no_check",
        "tests without a `check()` function",
        "tasks[0].tests (task 'add'): the tests define no check(candidate) function",
    ),
    _tf(
        "tests_syntax",
        "tests with a syntax error",
        "tasks[0].tests (task 'add'): the tests do not compile: line 2",
    ),
    _tf(
        "entry_os_system",
        "entry point `os.system`",
        "tasks[0].entry_point (task 'add'): 'os.system' is not a function name",
    ),
    _tf(
        "entry_undefined",
        "entry point the reference does not define",
        "tasks[0].entry_point (task 'add'): 'add' is not defined by the reference solution",
    ),
    _tf(
        "dup_name",
        "two tasks with one name",
        "tasks[1].name: duplicate task name 'add' (also tasks[0].name)",
    ),
    _tf(
        "id_newline",
        "task id with a newline",
        "tasks[0].id: 'add\\nsub' contains a control character (U+000A)",
    ),
    _tf(
        "name_nul",
        "task name with a NUL character",
        "tasks[0].name: 'add\\x00' contains a control character (U+0000)",
    ),
    _tf(
        "output_escape",
        "factor `output_file: ../../escape.parquet`",
        "output_file: '../../escape.parquet' leaves the candidate's work directory",
    ),
    run_case(
        "name_experiment_newline",
        "experiment name with a newline",
        "name: 'two\\nlines' contains a control character (U+000A)",
        "names",
    ),
    run_case(
        "name_experiment_nul",
        "experiment name with a NUL character",
        "name: 'nul\\x00name' contains a control character (U+0000)",
        "names",
    ),
    run_case(
        "name_experiment_long",
        "experiment name of 300 characters",
        "name: 300 characters; an experiment name has at most 200",
        "names",
    ),
    run_case(
        "name_arm_escape",
        "arm named `../../escape`",
        "arms.0.name: String should match pattern",
        "names",
    ),
    run_case(
        "name_arm_absolute",
        "arm named `/tmp/escape`",
        "arms.0.name: String should match pattern",
        "names",
    ),
    run_case(
        "name_arm_long",
        "arm name of 150 characters (a file name)",
        "arms[0].name: 150 characters",
        "names",
    ),
    run_case(
        "name_stage_slash",
        "stage named `learn/../..`",
        "stages.0.name: String should match pattern",
        "names",
    ),
    run_case(
        "name_stage_long",
        "stage name of 150 characters (a folder name)",
        "stages[0].name: 150 characters",
        "names",
    ),
    _fresh(
        "fresh-user-folder",
        "`--fresh` on a folder of the user's own files",
        "mine",
        "--out 'mine' holds files costeer_lab did not write (e.g. 'figures', 'thesis.tex'); "
        "refusing to delete them with --fresh; choose another --out",
    ),
    _fresh(
        "fresh-run-and-notes",
        "`--fresh` on a run folder that also holds a user's file",
        "runs/with_notes",
        "holds files costeer_lab did not write (e.g. 'notes.md')",
    ),
    _fresh(
        "fresh-damaged-spec",
        "`--fresh` on a folder whose spec.json is damaged",
        "runs/damaged",
        "does not look like a costeer_lab run (its spec.json is unreadable: JSONDecodeError)",
    ),
    _fresh(
        "fresh-no-spec",
        "`--fresh` on a folder without spec.json",
        "runs/bad_parquet",
        "--out 'runs/bad_parquet' does not look like a costeer_lab run (no spec.json)",
    ),
)
