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

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from costeer_lab.testing import (
    _bad_inputs_lifecycle,
    _bad_inputs_settings,
    _bad_inputs_spec,
    _bad_inputs_tasks,
)
from costeer_lab.testing._bad_inputs_base import (
    BASE_SPEC,
    DROP,
    PY_TASKS,
    BadInput,
    case,
    factor_tasks,
    run_case,
    spec_variant,
    write,
)

__all__ = [
    "BAD_INPUTS",
    "BASE_SPEC",
    "SPEC_VARIANTS",
    "BadInput",
    "as_json",
    "build_workspace",
    "snapshot",
]

#: The catalogue modules that add cases, spec variants and files to the core ones below.
_MODULES = (_bad_inputs_settings, _bad_inputs_spec, _bad_inputs_tasks, _bad_inputs_lifecycle)

#: spec file name -> spec document (written as YAML by :func:`build_workspace`).
SPEC_VARIANTS: dict[str, Any] = {
    "no_name": spec_variant("x", name=DROP),
    "no_arms": spec_variant("x", arms=DROP),
    "empty_arms": spec_variant("x", arms=[]),
    "unknown_field": spec_variant("x", max_loops=3),
    "rag_v3": spec_variant("x", arms__0__rag="v3"),
    "tasks_field_typo": spec_variant("x", tasks={"splt": "test"}),
    "arm_name_space": spec_variant("x", arms__0__name="no knowledge"),
    "arm_name_dots": spec_variant("x", arms__0__name=".."),
    "stage_name_dots": spec_variant(
        "x", tasks=DROP, stages=[{"name": "..", "tasks": {"split": "test"}}]
    ),
    "dup_arms": spec_variant("x", arms=[{"name": "a"}, {"name": "a"}]),
    "dup_seeds": spec_variant("x", seeds=[0, 0]),
    "max_loop_zero": spec_variant("x", max_loop=0),
    "max_loop_word": spec_variant("x", max_loop="many"),
    "no_seeds": spec_variant("x", seeds=[]),
    "executor_gpu": spec_variant("x", parallelism={"executor": "gpu"}),
    "workers_zero": spec_variant("x", parallelism={"executor": "serial", "workers": 0}),
    "limit_zero": spec_variant("x", tasks={"split": "test", "limit": 0}),
    "coder_no_name": spec_variant("x", coder={"seed": 1}),
    "coder_typo": spec_variant("x", coder={"name": "reuze"}),
    "coder_bad_arg": spec_variant("x", coder={"name": "reuse", "temprature": 0.2}),
    "coder_bad_import": spec_variant("x", coder={"name": "no_such_pkg.mod:Coder"}),
    "embedder_typo": spec_variant("x", embedder="hashin"),
    "suite_typo": spec_variant("x", suite="humaneva"),
    "suite_options_typo": spec_variant("x", suite_options={"limt": 4}),
    "split_typo": spec_variant("x", tasks={"split": "tset"}),
    "task_id_typo": spec_variant("x", tasks={"ids": ["humaneval/0", "humaneval/99"]}),
    "seed_split_typo": spec_variant("x", seed_knowledge={"split": "trian"}),
    "arm_field_typo": spec_variant("x", arms=[{"name": "a", "rag": "v2", "rag_option": {}}]),
    "rag_option_type": spec_variant(
        "x", arms=[{"name": "a", "rag": "v2", "rag_options": {"max_former_traces": "lots"}}]
    ),
    "taskfile_missing": spec_variant("x", suite="specs/tasks/nope.yaml", suite_options={}),
    "taskfile_bad_yaml": spec_variant("x", suite="specs/tasks/bad_yaml.yaml", suite_options={}),
    "taskfile_no_description": spec_variant(
        "x", suite="specs/tasks/no_description.yaml", suite_options={}
    ),
    "taskfile_dup_id": spec_variant("x", suite="specs/tasks/dup_id.yaml", suite_options={}),
    "taskfile_no_entry_point": spec_variant(
        "x", suite="specs/tasks/no_entry_point.yaml", suite_options={}
    ),
    "taskfile_split_unknown": spec_variant(
        "x", suite="specs/tasks/split_unknown.yaml", suite_options={}
    ),
    "taskfile_gt_file_missing": spec_variant(
        "x", suite="specs/tasks/gt_file_missing.yaml", suite_options={}
    ),
    "taskfile_kind": spec_variant("x", suite="specs/tasks/kind_sql.yaml", suite_options={}),
    "taskfile_input_missing": spec_variant(
        "x", suite="specs/tasks/input_missing.yaml", suite_options={}
    ),
    "taskfile_input_corrupt": spec_variant(
        "x", suite="specs/tasks/input_corrupt.yaml", suite_options={}
    ),
    "taskfile_input_no_column": spec_variant(
        "x",
        suite="specs/tasks/input_no_column.yaml",
        suite_options={},
        tasks={"split": "all"},
        seed_knowledge={"split": None},
        arms=[{"name": "a"}],
    ),
    "taskfile_options": spec_variant(
        "x", suite="specs/tasks/ok_py.yaml", suite_options={"limit": 2}
    ),
    "other_spec": spec_variant("base", max_loop=2),
}

_TASK_FILES: dict[str, Any] = {
    "bad_yaml.yaml": "tasks: [ {id: a, name: b\n",
    "no_description.yaml": {"tasks": [{"id": "a", "name": "A"}]},
    "dup_id.yaml": {**PY_TASKS, "tasks": PY_TASKS["tasks"] * 2},
    "no_entry_point.yaml": {
        **PY_TASKS,
        "tasks": [{k: v for k, v in PY_TASKS["tasks"][0].items() if k != "entry_point"}],
    },
    "split_unknown.yaml": {**PY_TASKS, "splits": {"test": ["add", "sub"]}},
    "gt_file_missing.yaml": {
        "tasks": [{"id": "a", "name": "A", "description": "d", "ground_truth_file": "gt/a.py"}]
    },
    "kind_sql.yaml": {**PY_TASKS, "kind": "sql"},
    "input_missing.yaml": factor_tasks("data/missing.parquet"),
    "input_corrupt.yaml": factor_tasks("data/corrupt.parquet"),
    "input_no_column.yaml": factor_tasks("data/no_close.parquet"),
    "ok_py.yaml": PY_TASKS,
}


_CORE: tuple[BadInput, ...] = (
    case("cli-no-command", "cli", "no subcommand", [], "COMMAND"),
    case("cli-unknown-command", "cli", "subcommand `runn`", ["runn"], "invalid choice: 'runn'"),
    case("cli-run-no-out", "cli", "`run` without --out", ["run", "specs/good.yaml"], "--out"),
    case(
        "cli-k-zero",
        "cli",
        "`kb query -k 0`",
        ["kb", "query", "runs/good/kb/v2-seed0.db", "add", "-k", "0"],
        "-k: expected a whole",
    ),
    case(
        "cli-k-word",
        "cli",
        "`kb query -k many`",
        ["kb", "query", "runs/good/kb/v2-seed0.db", "add", "-k", "many"],
        "-k: expected a whole",
    ),
    case(
        "spec-file-missing",
        "spec",
        "spec file does not exist",
        ["run", "specs/nope.yaml", "--out", "runs/new"],
        "specs/nope.yaml",
    ),
    case(
        "spec-is-dir",
        "spec",
        "spec path is a directory",
        ["run", "specs", "--out", "runs/new"],
        "'specs' is a directory",
    ),
    case(
        "spec-bad-yaml",
        "spec",
        "spec is not valid YAML",
        ["run", "specs/bad_yaml.yaml", "--out", "runs/new"],
        "cannot parse spec specs/bad_yaml.yaml: line 2, column 1: expected ',' or ']'",
    ),
    case(
        "spec-a-list",
        "spec",
        "spec is a YAML list",
        ["run", "specs/a_list.yaml", "--out", "runs/new"],
        "a spec must be a mapping",
    ),
    run_case("no_name", "no `name`", "name: Field required"),
    run_case("no_arms", "no `arms`", "arms: Field required"),
    run_case("arm_name_dots", "arm named `..`", "arms.0.name: name '..' is only dots"),
    run_case("stage_name_dots", "stage named `..`", "stages.0.name: name '..' is only dots"),
    run_case("empty_arms", "`arms: []`", "arms: List should have at least 1 item"),
    run_case("unknown_field", "unknown field `max_loops`", "max_loops: unknown field; known: "),
    run_case(
        "tasks_field_typo",
        "`tasks.splt` (typo)",
        "tasks.splt: unknown field; known: 'ids', 'limit', 'match', 'split'; "
        "did you mean 'split'?",
    ),
    run_case(
        "rag_v3",
        "`arms[0].rag: v3`",
        "arms.0.rag: Input should be 'none', 'v1', 'v2' or 'memory'",
    ),
    run_case("arm_name_space", "arm name with a space", "arms.0.name: String should match"),
    run_case("dup_arms", "two arms named `a`", "arm names must be unique"),
    run_case("dup_seeds", "`seeds: [0, 0]`", "seeds must be unique"),
    run_case("max_loop_zero", "`max_loop: 0`", "max_loop: Input should be greater than or equal"),
    run_case("max_loop_word", "`max_loop: many`", "max_loop: Input should be a valid integer"),
    run_case("no_seeds", "`seeds: []`", "seeds: List should have at least 1 item"),
    run_case("executor_gpu", "`parallelism.executor: gpu`", "parallelism.executor: Input should"),
    run_case("workers_zero", "`parallelism.workers: 0`", "parallelism.workers: Input should be"),
    run_case("limit_zero", "`tasks.limit: 0`", "tasks.limit: Input should be greater"),
    run_case("coder_no_name", "coder without `name`", "coder: coder needs a 'name'"),
    run_case("coder_typo", "`coder.name: reuze`", "coder.name: unknown coder 'reuze'"),
    run_case("coder_bad_arg", "coder option `temprature`", "coder.name: bad arguments for coder"),
    run_case(
        "coder_bad_import",
        "coder import path that does not import",
        "coder.name: cannot import coder 'no_such_pkg.mod:Coder'",
    ),
    run_case("embedder_typo", "`embedder: hashin`", "embedder: unknown embedder 'hashin'"),
    run_case("suite_typo", "`suite: humaneva`", "suite: unknown suite 'humaneva'"),
    run_case("suite_options_typo", "`suite_options: {limt: 4}`", "suite_options of suite"),
    run_case("split_typo", "`tasks.split: tset`", "tasks.split: suite 'humaneval' has no split"),
    run_case("task_id_typo", "`tasks.ids` with an unknown id", "tasks.ids[1]: suite 'humaneval'"),
    run_case("seed_split_typo", "`seed_knowledge.split: trian`", "seed_knowledge.split: suite"),
    run_case("arm_field_typo", "arm field `rag_option`", "did you mean 'rag_options'"),
    run_case(
        "rag_option_type",
        "`rag_options.max_former_traces: lots`",
        "arms.0: rag_options: max_former_traces: Input should be a valid integer",
    ),
    run_case("taskfile_missing", "task file does not exist", "tasks/nope.yaml", "task file"),
    run_case(
        "taskfile_bad_yaml",
        "task file is not valid YAML",
        "is not valid JSON/YAML: line 2, column 1: expected ',' or '}'",
        "task file",
    ),
    run_case(
        "taskfile_no_description",
        "task without `description`",
        "tasks[0].description: Field required",
        "task file",
    ),
    run_case(
        "taskfile_dup_id",
        "two tasks with one id",
        "tasks[1].id: duplicate task id 'add'",
        "task file",
    ),
    run_case(
        "taskfile_no_entry_point",
        "python_function task without `entry_point`",
        "tasks[0].entry_point: required",
        "task file",
    ),
    run_case(
        "taskfile_split_unknown",
        "split naming an unknown task",
        "splits.test[1]: unknown task id 'sub'",
        "task file",
    ),
    run_case(
        "taskfile_gt_file_missing", "`ground_truth_file` does not exist", "gt/a.py", "task file"
    ),
    run_case(
        "taskfile_kind",
        "`kind: sql`",
        "kind: Input should be 'factor' or 'python_function'",
        "task file",
    ),
    run_case(
        "taskfile_input_missing",
        "input data file does not exist",
        "inputs.daily_pv.parquet: file",
        "task file",
    ),
    run_case(
        "taskfile_input_corrupt",
        "input Parquet file is damaged",
        "is not a readable Parquet file",
        "task file",
    ),
    run_case(
        "taskfile_input_no_column",
        "input data lacks the `close` column",
        "'MOM1': the reference implementation failed (exit code 1): KeyError: 'close'",
        "task file",
    ),
    run_case(
        "taskfile_options",
        "`suite_options` given to a task file",
        "task files take no options",
        "task file",
    ),
    case(
        "out-is-file",
        "run output",
        "`--out` is a file",
        ["run", "specs/good.yaml", "--out", "notes.txt"],
        "--out 'notes.txt'",
    ),
    case(
        "out-under-file",
        "run output",
        "`--out` inside a file",
        ["run", "specs/good.yaml", "--out", "notes.txt/run"],
        "its parent 'notes.txt'",
    ),
    case(
        "out-other-spec",
        "run output",
        "`--out` holds a run of another spec",
        ["run", "specs/other_spec.yaml", "--out", "runs/good"],
        "fields that differ: max_loop",
    ),
    case(
        "out-corrupt-spec",
        "run output",
        "`--out` holds a damaged spec.json",
        ["run", "specs/good.yaml", "--out", "runs/damaged"],
        "spec.json' is unreadable",
    ),
    case(
        "report-missing",
        "report",
        "results folder does not exist",
        ["report", "runs/nope"],
        "'runs/nope' does not exist",
    ),
    case(
        "report-is-file",
        "report",
        "results folder is a file",
        ["report", "notes.txt"],
        "'notes.txt' is a file",
    ),
    case(
        "report-empty",
        "report",
        "folder without results",
        ["report", "runs/empty"],
        "no results.parquet or results.csv",
    ),
    case(
        "report-corrupt",
        "report",
        "damaged results.parquet",
        ["report", "runs/bad_parquet"],
        "results.parquet' is unreadable",
    ),
    case(
        "report-corrupt-spec",
        "report",
        "damaged spec.json next to the results",
        ["report", "runs/damaged"],
        "spec.json' is unreadable",
    ),
    case(
        "report-missing-column",
        "report",
        "results.parquet lacks a column",
        ["report", "runs/no_column"],
        "success",
    ),
    case(
        "report-output-dir",
        "report",
        "`--output` is a folder",
        ["report", "runs/good", "--output", "runs"],
        "--output 'runs' is a directory",
    ),
    case(
        "report-over-results",
        "report",
        "`--output` is the run's results file",
        ["report", "runs/good", "--output", "runs/good/results.parquet"],
        "is not a costeer_lab report; refusing to replace it",
    ),
    case(
        "report-over-spec",
        "report",
        "`--output` is a spec",
        ["report", "runs/good", "--output", "specs/good.yaml"],
        "is not a costeer_lab report",
    ),
    case(
        "run-out-empty",
        "cli",
        "`--out ''` (would write into the current folder)",
        ["run", "specs/good.yaml", "--out", ""],
        "got an empty string",
    ),
    case(
        "kb-missing",
        "store",
        "`kb stats` on a mistyped path",
        ["kb", "stats", "runs/good/kb/v2-sed0.db"],
        "does not exist",
    ),
    case(
        "kb-dir",
        "store",
        "`kb stats` on a folder",
        ["kb", "stats", "runs/good/kb"],
        "is a directory",
    ),
    case(
        "kb-text",
        "store",
        "`kb stats` on a text file",
        ["kb", "stats", "notes.txt"],
        "not a SQLite database",
    ),
    case(
        "kb-empty",
        "store",
        "`kb stats` on an empty file",
        ["kb", "stats", "empty.db"],
        "is an empty file",
    ),
    case(
        "kb-foreign",
        "store",
        "`kb stats` on another program's SQLite file",
        ["kb", "stats", "foreign.db"],
        "not a costeer_lab store",
    ),
    case(
        "kb-url",
        "store",
        "`kb stats` on a malformed URL",
        ["kb", "stats", "sqlite://x.db"],
        "malformed SQLite URL",
    ),
    case(
        "kb-memory",
        "store",
        "`kb stats :memory:`",
        ["kb", "stats", ":memory:"],
        "in-memory database",
    ),
    case(
        "kb-query-missing",
        "store",
        "`kb query` on a mistyped path",
        ["kb", "query", "runs/good/kb/v3-seed0.db", "add"],
        "does not exist",
    ),
    case(
        "kb-query-kind",
        "store",
        "`kb query --kind trace`",
        ["kb", "query", "runs/good/kb/v2-seed0.db", "add", "--kind", "trace"],
        "--kind 'trace' is not a knowledge kind",
    ),
    case(
        "kb-query-v1",
        "store",
        "`kb query` on a V1 KB with the default kind",
        ["kb", "query", "runs/good/kb/v1-seed0.db", "add"],
        "use --kind kb1",
    ),
    case(
        "kb-query-none",
        "store",
        "`kb query` on a store without knowledge",
        ["kb", "query", "runs/good/kb/none-seed0.db", "add"],
        "holds no embedded knowledge",
    ),
    case(
        "kb-query-empty-text",
        "store",
        "`kb query` with empty text",
        ["kb", "query", "runs/good/kb/v2-seed0.db", "  "],
        "query text is empty",
    ),
    case(
        "kb-query-embedder",
        "store",
        "`kb query --embedder hashin`",
        ["kb", "query", "runs/good/kb/v2-seed0.db", "add", "--embedder", "hashin"],
        "unknown embedder 'hashin'",
    ),
)


BAD_INPUTS: tuple[BadInput, ...] = (*_CORE, *(c for m in _MODULES for c in m.CASES))
SPEC_VARIANTS.update({k: v for m in _MODULES for k, v in m.SPECS.items()})


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
    write(d / "specs" / "good.yaml", BASE_SPEC)
    write(d / "specs" / "bad_yaml.yaml", "name: [unclosed\n")
    write(d / "specs" / "a_list.yaml", "- name: a\n")
    for name, spec in SPEC_VARIANTS.items():
        write(d / "specs" / f"{name}.yaml", spec)
    for module in _MODULES:
        for rel, content in module.FILES.items():
            write(d / rel, content)
    for name, doc in _TASK_FILES.items():
        write(d / "specs" / "tasks" / name, doc)
    write(d / "specs" / "tasks" / "data" / "corrupt.parquet", b"PAR1 not really parquet")
    _panel_without_close(d / "specs" / "tasks" / "data" / "no_close.parquet")
    write(d / "notes.txt", "not a store\n")
    write(d / "empty.db", b"")
    conn = sqlite3.connect(d / "foreign.db")
    conn.execute("CREATE TABLE songs (title TEXT)")
    conn.commit()
    conn.close()
    (d / "runs" / "empty").mkdir(parents=True)
    run_experiment(BASE_SPEC, d / "runs" / "good", progress=False)
    write(d / "runs" / "damaged" / "spec.json", "{not json")
    write(d / "runs" / "bad_parquet" / "results.parquet", b"PAR1\x00\x00garbage")
    results = load_results(d / "runs" / "good")
    broken = results.drop(columns=["success"])
    (d / "runs" / "no_column").mkdir(parents=True)
    broken.to_parquet(d / "runs" / "no_column" / "results.parquet")
    return d


@dataclass(frozen=True)
class _Entry:
    size: int
    mtime_ns: int
    mode: int
    #: sha256 of a file's bytes ("" for folders and links): a change that keeps size and
    #: mtime (a rewrite within the clock's resolution) still shows.
    digest: str = ""


def snapshot(root: str | os.PathLike[str]) -> Mapping[str, _Entry]:
    """Every path under ``root`` with size, mtime, mode and content hash (to prove nothing was
    written).

    Directories are listed without their mtime: opening a SQLite store in WAL mode creates
    ``-wal``/``-shm`` side files that SQLite removes again on close, which touches the folder.
    """
    out: dict[str, _Entry] = {}
    for p in sorted(Path(root).rglob("*")):
        st = p.lstat()
        if p.is_file() and not p.is_symlink():
            digest = hashlib.sha256(p.read_bytes()).hexdigest()
            out[str(p.relative_to(root))] = _Entry(st.st_size, st.st_mtime_ns, st.st_mode, digest)
        else:
            mtime = 0 if p.is_dir() else st.st_mtime_ns
            out[str(p.relative_to(root))] = _Entry(st.st_size, mtime, st.st_mode)
    return out


def as_json(case: BadInput) -> str:
    """A case as one JSON line (for logs)."""
    return json.dumps({"name": case.name, "argv": list(case.argv), "expect": case.expect})
