"""A catalogue of bad inputs to the ``costeer-lab`` CLI, its specs, task files and stores.

Each :class:`BadInput` is one command run in a workspace built by :func:`build_workspace` (a
real tiny run with three knowledge bases, spec and task-file variants, damaged files). The
contract every case checks (``tests/test_cli_bad_inputs.py``, ``tools/bad_inputs.py`` writes the
table in ``docs/bad_inputs.md``): a non-zero exit, one ``costeer-lab: error:`` line containing
``expect`` (the field or file), no traceback, and no file created or changed in the workspace.

Example:
    >>> from costeer_lab.testing import BAD_INPUTS
    >>> len(BAD_INPUTS) >= 40 and len({c.name for c in BAD_INPUTS}) == len(BAD_INPUTS)
    True
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "BAD_INPUTS",
    "BASE_SPEC",
    "SPEC_VARIANTS",
    "BadInput",
    "as_json",
    "build_workspace",
    "snapshot",
]

#: The valid spec the spec variants start from (humaneval, 4 tasks, one loop, serial).
BASE_SPEC: dict[str, Any] = {
    "name": "ux-base",
    "suite": "humaneval",
    "suite_options": {"limit": 4},
    "tasks": {"split": "test"},
    "seed_knowledge": {"split": "train"},
    "arms": [
        {"name": "none", "rag": "none"},
        {"name": "v1", "rag": "v1"},
        {"name": "v2", "rag": "v2"},
    ],
    "seeds": [0],
    "max_loop": 1,
    "parallelism": {"executor": "serial"},
}

_PY_TASKS: dict[str, Any] = {
    "kind": "python_function",
    "tasks": [
        {
            "id": "add",
            "name": "add",
            "description": "Add two numbers.",
            "entry_point": "add",
            "canonical_solution": "def add(a, b):\n    return a + b\n",
            "tests": "def check(f):\n    assert f(1, 2) == 3\n",
        }
    ],
}
_GT = (
    "import pandas as pd\n"
    "panel = pd.read_parquet('daily_pv.parquet')\n"
    "close = panel['close']\n"
    "(close / close.groupby(level='instrument').shift(1)).to_frame('MOM1')"
    ".to_parquet('result.parquet')\n"
)


def _factor_tasks(inputs: str) -> dict[str, Any]:
    return {
        "kind": "factor",
        "inputs": {"daily_pv.parquet": inputs},
        "tasks": [
            {"id": "MOM1", "name": "MOM1", "description": "One-day momentum.", "ground_truth": _GT}
        ],
    }


_DROP = object()


@dataclass(frozen=True)
class BadInput:
    """One bad input: ``argv`` runs in the workspace; the error must contain ``expect``."""

    name: str
    area: str
    input: str
    argv: tuple[str, ...]
    expect: str
    exit_code: int = 2


def _spec(label: str, /, **changes: Any) -> dict[str, Any]:
    spec = copy.deepcopy(BASE_SPEC)
    spec["name"] = f"ux-{label}"
    for key, value in changes.items():
        target: Any = spec
        parts = key.split("__")
        for p in parts[:-1]:
            target = target[int(p)] if isinstance(target, list) else target[p]
        last = parts[-1]
        if value is _DROP:
            del target[last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return spec


#: spec file name -> spec document (written as YAML by :func:`build_workspace`).
SPEC_VARIANTS: dict[str, Any] = {
    "no_name": _spec("x", name=_DROP),
    "no_arms": _spec("x", arms=_DROP),
    "empty_arms": _spec("x", arms=[]),
    "unknown_field": _spec("x", max_loops=3),
    "rag_v3": _spec("x", arms__0__rag="v3"),
    "tasks_field_typo": _spec("x", tasks={"splt": "test"}),
    "arm_name_space": _spec("x", arms__0__name="no knowledge"),
    "arm_name_dots": _spec("x", arms__0__name=".."),
    "stage_name_dots": _spec(
        "x", tasks=_DROP, stages=[{"name": "..", "tasks": {"split": "test"}}]
    ),
    "dup_arms": _spec("x", arms=[{"name": "a"}, {"name": "a"}]),
    "dup_seeds": _spec("x", seeds=[0, 0]),
    "max_loop_zero": _spec("x", max_loop=0),
    "max_loop_word": _spec("x", max_loop="many"),
    "no_seeds": _spec("x", seeds=[]),
    "executor_gpu": _spec("x", parallelism={"executor": "gpu"}),
    "workers_zero": _spec("x", parallelism={"executor": "serial", "workers": 0}),
    "limit_zero": _spec("x", tasks={"split": "test", "limit": 0}),
    "coder_no_name": _spec("x", coder={"seed": 1}),
    "coder_typo": _spec("x", coder={"name": "reuze"}),
    "coder_bad_arg": _spec("x", coder={"name": "reuse", "temprature": 0.2}),
    "coder_bad_import": _spec("x", coder={"name": "no_such_pkg.mod:Coder"}),
    "embedder_typo": _spec("x", embedder="hashin"),
    "suite_typo": _spec("x", suite="humaneva"),
    "suite_options_typo": _spec("x", suite_options={"limt": 4}),
    "split_typo": _spec("x", tasks={"split": "tset"}),
    "task_id_typo": _spec("x", tasks={"ids": ["humaneval/0", "humaneval/99"]}),
    "seed_split_typo": _spec("x", seed_knowledge={"split": "trian"}),
    "arm_field_typo": _spec("x", arms=[{"name": "a", "rag": "v2", "rag_option": {}}]),
    "rag_option_type": _spec(
        "x", arms=[{"name": "a", "rag": "v2", "rag_options": {"max_former_traces": "lots"}}]
    ),
    "taskfile_missing": _spec("x", suite="specs/tasks/nope.yaml", suite_options={}),
    "taskfile_bad_yaml": _spec("x", suite="specs/tasks/bad_yaml.yaml", suite_options={}),
    "taskfile_no_description": _spec(
        "x", suite="specs/tasks/no_description.yaml", suite_options={}
    ),
    "taskfile_dup_id": _spec("x", suite="specs/tasks/dup_id.yaml", suite_options={}),
    "taskfile_no_entry_point": _spec(
        "x", suite="specs/tasks/no_entry_point.yaml", suite_options={}
    ),
    "taskfile_split_unknown": _spec("x", suite="specs/tasks/split_unknown.yaml", suite_options={}),
    "taskfile_gt_file_missing": _spec(
        "x", suite="specs/tasks/gt_file_missing.yaml", suite_options={}
    ),
    "taskfile_kind": _spec("x", suite="specs/tasks/kind_sql.yaml", suite_options={}),
    "taskfile_input_missing": _spec("x", suite="specs/tasks/input_missing.yaml", suite_options={}),
    "taskfile_input_corrupt": _spec("x", suite="specs/tasks/input_corrupt.yaml", suite_options={}),
    "taskfile_input_no_column": _spec(
        "x",
        suite="specs/tasks/input_no_column.yaml",
        suite_options={},
        tasks={"split": "all"},
        seed_knowledge={"split": None},
        arms=[{"name": "a"}],
    ),
    "taskfile_options": _spec("x", suite="specs/tasks/ok_py.yaml", suite_options={"limit": 2}),
    "other_spec": _spec("base", max_loop=2),
}

_TASK_FILES: dict[str, Any] = {
    "bad_yaml.yaml": "tasks: [ {id: a, name: b\n",
    "no_description.yaml": {"tasks": [{"id": "a", "name": "A"}]},
    "dup_id.yaml": {**_PY_TASKS, "tasks": _PY_TASKS["tasks"] * 2},
    "no_entry_point.yaml": {
        **_PY_TASKS,
        "tasks": [{k: v for k, v in _PY_TASKS["tasks"][0].items() if k != "entry_point"}],
    },
    "split_unknown.yaml": {**_PY_TASKS, "splits": {"test": ["add", "sub"]}},
    "gt_file_missing.yaml": {
        "tasks": [{"id": "a", "name": "A", "description": "d", "ground_truth_file": "gt/a.py"}]
    },
    "kind_sql.yaml": {**_PY_TASKS, "kind": "sql"},
    "input_missing.yaml": _factor_tasks("data/missing.parquet"),
    "input_corrupt.yaml": _factor_tasks("data/corrupt.parquet"),
    "input_no_column.yaml": _factor_tasks("data/no_close.parquet"),
    "ok_py.yaml": _PY_TASKS,
}


def _c(name: str, area: str, what: str, argv: list[str], expect: str, code: int = 2) -> BadInput:
    return BadInput(name, area, what, tuple(argv), expect, code)


def _run(spec: str, what: str, expect: str, area: str = "spec") -> BadInput:
    return _c(
        f"spec-{spec}", area, what, ["run", f"specs/{spec}.yaml", "--out", "runs/new"], expect
    )


BAD_INPUTS: tuple[BadInput, ...] = (
    _c("cli-no-command", "cli", "no subcommand", [], "COMMAND"),
    _c("cli-unknown-command", "cli", "subcommand `runn`", ["runn"], "invalid choice: 'runn'"),
    _c("cli-run-no-out", "cli", "`run` without --out", ["run", "specs/good.yaml"], "--out"),
    _c(
        "cli-k-zero",
        "cli",
        "`kb query -k 0`",
        ["kb", "query", "runs/good/kb/v2-seed0.db", "add", "-k", "0"],
        "-k: expected a whole",
    ),
    _c(
        "cli-k-word",
        "cli",
        "`kb query -k many`",
        ["kb", "query", "runs/good/kb/v2-seed0.db", "add", "-k", "many"],
        "-k: expected a whole",
    ),
    _c(
        "spec-file-missing",
        "spec",
        "spec file does not exist",
        ["run", "specs/nope.yaml", "--out", "runs/new"],
        "specs/nope.yaml",
    ),
    _c(
        "spec-is-dir",
        "spec",
        "spec path is a directory",
        ["run", "specs", "--out", "runs/new"],
        "'specs' is a directory",
    ),
    _c(
        "spec-bad-yaml",
        "spec",
        "spec is not valid YAML",
        ["run", "specs/bad_yaml.yaml", "--out", "runs/new"],
        "cannot parse spec specs/bad_yaml.yaml: line 2, column 1: expected ',' or ']'",
    ),
    _c(
        "spec-a-list",
        "spec",
        "spec is a YAML list",
        ["run", "specs/a_list.yaml", "--out", "runs/new"],
        "a spec must be a mapping",
    ),
    _run("no_name", "no `name`", "name: Field required"),
    _run("no_arms", "no `arms`", "arms: Field required"),
    _run("arm_name_dots", "arm named `..`", "arms.0.name: name '..' is only dots"),
    _run("stage_name_dots", "stage named `..`", "stages.0.name: name '..' is only dots"),
    _run("empty_arms", "`arms: []`", "arms: List should have at least 1 item"),
    _run("unknown_field", "unknown field `max_loops`", "max_loops: unknown field; known: "),
    _run(
        "tasks_field_typo",
        "`tasks.splt` (typo)",
        "tasks.splt: unknown field; known: 'ids', 'limit', 'match', 'split'; "
        "did you mean 'split'?",
    ),
    _run(
        "rag_v3",
        "`arms[0].rag: v3`",
        "arms.0.rag: Input should be 'none', 'v1', 'v2' or 'memory'",
    ),
    _run("arm_name_space", "arm name with a space", "arms.0.name: String should match"),
    _run("dup_arms", "two arms named `a`", "arm names must be unique"),
    _run("dup_seeds", "`seeds: [0, 0]`", "seeds must be unique"),
    _run("max_loop_zero", "`max_loop: 0`", "max_loop: Input should be greater than or equal"),
    _run("max_loop_word", "`max_loop: many`", "max_loop: Input should be a valid integer"),
    _run("no_seeds", "`seeds: []`", "seeds: List should have at least 1 item"),
    _run("executor_gpu", "`parallelism.executor: gpu`", "parallelism.executor: Input should"),
    _run("workers_zero", "`parallelism.workers: 0`", "parallelism.workers: Input should be"),
    _run("limit_zero", "`tasks.limit: 0`", "tasks.limit: Input should be greater"),
    _run("coder_no_name", "coder without `name`", "coder: coder needs a 'name'"),
    _run("coder_typo", "`coder.name: reuze`", "coder.name: unknown coder 'reuze'"),
    _run("coder_bad_arg", "coder option `temprature`", "coder.name: bad arguments for coder"),
    _run(
        "coder_bad_import",
        "coder import path that does not import",
        "coder.name: cannot import coder 'no_such_pkg.mod:Coder'",
    ),
    _run("embedder_typo", "`embedder: hashin`", "embedder: unknown embedder 'hashin'"),
    _run("suite_typo", "`suite: humaneva`", "suite: unknown suite 'humaneva'"),
    _run("suite_options_typo", "`suite_options: {limt: 4}`", "suite_options of suite"),
    _run("split_typo", "`tasks.split: tset`", "tasks.split: suite 'humaneval' has no split"),
    _run("task_id_typo", "`tasks.ids` with an unknown id", "tasks.ids[1]: suite 'humaneval'"),
    _run("seed_split_typo", "`seed_knowledge.split: trian`", "seed_knowledge.split: suite"),
    _run("arm_field_typo", "arm field `rag_option`", "did you mean 'rag_options'"),
    _run(
        "rag_option_type",
        "`rag_options.max_former_traces: lots`",
        "arms.0: rag_options: max_former_traces: Input should be a valid integer",
    ),
    _run("taskfile_missing", "task file does not exist", "tasks/nope.yaml", "task file"),
    _run(
        "taskfile_bad_yaml",
        "task file is not valid YAML",
        "is not valid JSON/YAML: line 2, column 1: expected ',' or '}'",
        "task file",
    ),
    _run(
        "taskfile_no_description",
        "task without `description`",
        "tasks[0].description: Field required",
        "task file",
    ),
    _run(
        "taskfile_dup_id",
        "two tasks with one id",
        "tasks[1].id: duplicate task id 'add'",
        "task file",
    ),
    _run(
        "taskfile_no_entry_point",
        "python_function task without `entry_point`",
        "tasks[0].entry_point: required",
        "task file",
    ),
    _run(
        "taskfile_split_unknown",
        "split naming an unknown task",
        "splits.test[1]: unknown task id 'sub'",
        "task file",
    ),
    _run("taskfile_gt_file_missing", "`ground_truth_file` does not exist", "gt/a.py", "task file"),
    _run(
        "taskfile_kind",
        "`kind: sql`",
        "kind: Input should be 'factor' or 'python_function'",
        "task file",
    ),
    _run(
        "taskfile_input_missing",
        "input data file does not exist",
        "inputs.daily_pv.parquet: file",
        "task file",
    ),
    _run(
        "taskfile_input_corrupt",
        "input Parquet file is damaged",
        "is not a readable Parquet file",
        "task file",
    ),
    _run(
        "taskfile_input_no_column",
        "input data lacks the `close` column",
        "task 'MOM1': the reference implementation failed (exit code 1): KeyError: 'close'",
        "task file",
    ),
    _run(
        "taskfile_options",
        "`suite_options` given to a task file",
        "task files take no options",
        "task file",
    ),
    _c(
        "out-is-file",
        "run output",
        "`--out` is a file",
        ["run", "specs/good.yaml", "--out", "notes.txt"],
        "--out 'notes.txt'",
    ),
    _c(
        "out-under-file",
        "run output",
        "`--out` inside a file",
        ["run", "specs/good.yaml", "--out", "notes.txt/run"],
        "its parent 'notes.txt'",
    ),
    _c(
        "out-other-spec",
        "run output",
        "`--out` holds a run of another spec",
        ["run", "specs/other_spec.yaml", "--out", "runs/good"],
        "fields that differ: max_loop",
    ),
    _c(
        "out-corrupt-spec",
        "run output",
        "`--out` holds a damaged spec.json",
        ["run", "specs/good.yaml", "--out", "runs/damaged"],
        "spec.json' is unreadable",
    ),
    _c(
        "report-missing",
        "report",
        "results folder does not exist",
        ["report", "runs/nope"],
        "'runs/nope' does not exist",
    ),
    _c(
        "report-is-file",
        "report",
        "results folder is a file",
        ["report", "notes.txt"],
        "'notes.txt' is a file",
    ),
    _c(
        "report-empty",
        "report",
        "folder without results",
        ["report", "runs/empty"],
        "no results.parquet or results.csv",
    ),
    _c(
        "report-corrupt",
        "report",
        "damaged results.parquet",
        ["report", "runs/bad_parquet"],
        "results.parquet' is unreadable",
    ),
    _c(
        "report-corrupt-spec",
        "report",
        "damaged spec.json next to the results",
        ["report", "runs/damaged"],
        "spec.json' is unreadable",
    ),
    _c(
        "report-missing-column",
        "report",
        "results.parquet lacks a column",
        ["report", "runs/no_column"],
        "success",
    ),
    _c(
        "report-output-dir",
        "report",
        "`--output` is a folder",
        ["report", "runs/good", "--output", "runs"],
        "--output 'runs' is a directory",
    ),
    _c(
        "report-over-results",
        "report",
        "`--output` is the run's results file",
        ["report", "runs/good", "--output", "runs/good/results.parquet"],
        "is not a costeer_lab report; refusing to replace it",
    ),
    _c(
        "report-over-spec",
        "report",
        "`--output` is a spec",
        ["report", "runs/good", "--output", "specs/good.yaml"],
        "is not a costeer_lab report",
    ),
    _c(
        "run-out-empty",
        "cli",
        "`--out ''` (would write into the current folder)",
        ["run", "specs/good.yaml", "--out", ""],
        "got an empty string",
    ),
    _c(
        "kb-missing",
        "store",
        "`kb stats` on a mistyped path",
        ["kb", "stats", "runs/good/kb/v2-sed0.db"],
        "does not exist",
    ),
    _c(
        "kb-dir",
        "store",
        "`kb stats` on a folder",
        ["kb", "stats", "runs/good/kb"],
        "is a directory",
    ),
    _c(
        "kb-text",
        "store",
        "`kb stats` on a text file",
        ["kb", "stats", "notes.txt"],
        "not a SQLite database",
    ),
    _c(
        "kb-empty",
        "store",
        "`kb stats` on an empty file",
        ["kb", "stats", "empty.db"],
        "is an empty file",
    ),
    _c(
        "kb-foreign",
        "store",
        "`kb stats` on another program's SQLite file",
        ["kb", "stats", "foreign.db"],
        "not a costeer_lab store",
    ),
    _c(
        "kb-url",
        "store",
        "`kb stats` on a malformed URL",
        ["kb", "stats", "sqlite://x.db"],
        "malformed SQLite URL",
    ),
    _c(
        "kb-memory",
        "store",
        "`kb stats :memory:`",
        ["kb", "stats", ":memory:"],
        "in-memory database",
    ),
    _c(
        "kb-query-missing",
        "store",
        "`kb query` on a mistyped path",
        ["kb", "query", "runs/good/kb/v3-seed0.db", "add"],
        "does not exist",
    ),
    _c(
        "kb-query-kind",
        "store",
        "`kb query --kind trace`",
        ["kb", "query", "runs/good/kb/v2-seed0.db", "add", "--kind", "trace"],
        "--kind 'trace' is not a knowledge kind",
    ),
    _c(
        "kb-query-v1",
        "store",
        "`kb query` on a V1 KB with the default kind",
        ["kb", "query", "runs/good/kb/v1-seed0.db", "add"],
        "use --kind kb1",
    ),
    _c(
        "kb-query-none",
        "store",
        "`kb query` on a store without knowledge",
        ["kb", "query", "runs/good/kb/none-seed0.db", "add"],
        "holds no embedded knowledge",
    ),
    _c(
        "kb-query-empty-text",
        "store",
        "`kb query` with empty text",
        ["kb", "query", "runs/good/kb/v2-seed0.db", "  "],
        "query text is empty",
    ),
    _c(
        "kb-query-embedder",
        "store",
        "`kb query --embedder hashin`",
        ["kb", "query", "runs/good/kb/v2-seed0.db", "add", "--embedder", "hashin"],
        "unknown embedder 'hashin'",
    ),
)


def _write(path: Path, content: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")


def _panel_without_close(path: Path) -> None:
    import numpy as np
    import pandas as pd

    idx = pd.MultiIndex.from_product(
        [pd.date_range("2024-01-01", periods=20), ["A", "B"]], names=["datetime", "instrument"]
    )
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"open": rng.random(len(idx)), "volume": rng.random(len(idx))}, index=idx)
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_parquet(path)


def build_workspace(root: str | os.PathLike[str]) -> Path:
    """Write every file the cases need into ``root`` (a real tiny run included, ~10 s).

    Returns ``root`` as a :class:`Path`.
    """
    import sqlite3

    from costeer_lab.experiment import load_results, run_experiment

    d = Path(root)
    _write(d / "specs" / "good.yaml", BASE_SPEC)
    _write(d / "specs" / "bad_yaml.yaml", "name: [unclosed\n")
    _write(d / "specs" / "a_list.yaml", "- name: a\n")
    for name, spec in SPEC_VARIANTS.items():
        _write(d / "specs" / f"{name}.yaml", spec)
    for name, doc in _TASK_FILES.items():
        _write(d / "specs" / "tasks" / name, doc)
    _write(d / "specs" / "tasks" / "data" / "corrupt.parquet", b"PAR1 not really parquet")
    _panel_without_close(d / "specs" / "tasks" / "data" / "no_close.parquet")
    _write(d / "notes.txt", "not a store\n")
    _write(d / "empty.db", b"")
    conn = sqlite3.connect(d / "foreign.db")
    conn.execute("CREATE TABLE songs (title TEXT)")
    conn.commit()
    conn.close()
    (d / "runs" / "empty").mkdir(parents=True)
    run_experiment(BASE_SPEC, d / "runs" / "good", progress=False)
    _write(d / "runs" / "damaged" / "spec.json", "{not json")
    _write(d / "runs" / "bad_parquet" / "results.parquet", b"PAR1\x00\x00garbage")
    results = load_results(d / "runs" / "good")
    broken = results.drop(columns=["success"])
    (d / "runs" / "no_column").mkdir(parents=True)
    broken.to_parquet(d / "runs" / "no_column" / "results.parquet")
    return d


@dataclass(frozen=True)
class _Entry:
    size: int
    mtime_ns: int
    mode: int = field(compare=True)


def snapshot(root: str | os.PathLike[str]) -> Mapping[str, _Entry]:
    """Every path under ``root`` with size, mtime and mode (to prove nothing was written).

    Directories are listed without their mtime: opening a SQLite store in WAL mode creates
    ``-wal``/``-shm`` side files that SQLite removes again on close, which touches the folder.
    """
    out: dict[str, _Entry] = {}
    for p in sorted(Path(root).rglob("*")):
        st = p.lstat()
        mtime = 0 if p.is_dir() else st.st_mtime_ns
        out[str(p.relative_to(root))] = _Entry(st.st_size, mtime, st.st_mode)
    return out


def as_json(case: BadInput) -> str:
    """A case as one JSON line (for logs)."""
    return json.dumps({"name": case.name, "argv": list(case.argv), "expect": case.expect})
