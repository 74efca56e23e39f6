"""Bad inputs: spec values and types (strict types, ranges, pairs of fields, target leaks).

Gathered by :mod:`costeer_lab.testing._bad_inputs` (see ``_bad_inputs_base`` for the shape).
Values YAML reads as text (``1e23``) are written verbatim (:func:`_raw`), since a YAML dump of
the text would quote it.
"""

from __future__ import annotations

from typing import Any

import yaml

from costeer_lab.testing._bad_inputs_base import BASE_SPEC, BadInput, case, run_case, spec_variant

#: The placeholder :func:`_raw` replaces with the verbatim YAML value.
_MARK = "__VERBATIM__"


def _raw(label: str, value: str, **changes: Any) -> str:
    """A spec variant as YAML text in which the value ``_MARK`` is replaced by ``value``."""
    text = yaml.safe_dump(spec_variant(label, **changes), sort_keys=False)
    assert _MARK in text
    return text.replace(_MARK, value)


def _run(stem: str, what: str, expect: str, suffix: str = "yaml", **env: str) -> BadInput:
    """``run specs/<stem>.<suffix> --out runs/new`` must fail with ``expect``."""
    argv = ["run", f"specs/{stem}.{suffix}", "--out", "runs/new"]
    return case(f"spec-{stem}", "spec", what, argv, expect, env=env or None)


_ALPHA = {
    "suite": "alpha158",
    "suite_options": {"n_instruments": 2, "n_days": 2},
    "tasks": {"ids": ["alpha158/ROC10"]},
    "seed_knowledge": {"split": None},
}
_NO_KEY = {"OPENAI_API_KEY": "", "COSTEER_LAB_OPENAI__API_KEY": "", "COSTEER_LAB_LLM__API_KEY": ""}
_UTF16 = yaml.safe_dump(spec_variant("utf16"), sort_keys=False).encode("utf-16")
_LATIN1 = yaml.safe_dump(
    spec_variant("latin1", name="ux-café"), sort_keys=False, allow_unicode=True
).encode("latin-1")
_DUP_KEY = yaml.safe_dump(spec_variant("dup-key"), sort_keys=False) + "max_loop: 3\n"
_JSON = '{"name": "ux-json", "suite": "humaneval", "arms": [{"name": "a"}],}\n'
_JSON_DUP = '{"name": "ux-json", "suite": "humaneval", "name": "other", "arms": [{"name": "a"}]}\n'
_TASKS_DUP_KEY = (
    "kind: python_function\ntasks:\n  - id: add\n    name: add\n    description: Add.\n"
    "    entry_point: add\n    entry_point: plus\n"
    '    canonical_solution: "def add(a, b):\\n    return a + b\\n"\n'
    '    tests: "def check(f):\\n    assert f(1, 2) == 3\\n"\n'
)

#: Spec file stem -> spec document (written to ``specs/<stem>.yaml``).
SPECS: dict[str, Any] = {
    "seeds_true": spec_variant("x", seeds=[True]),
    "seeds_decimal": spec_variant("x", seeds=[1.0e23]),
    "seeds_negative": spec_variant("x", seeds=[-1]),
    "seeds_too_big": spec_variant("x", seeds=[2**32]),
    "max_loop_text": spec_variant("x", max_loop="2"),
    "max_loop_decimal": spec_variant("x", max_loop=2.0),
    "ids_empty": spec_variant("x", tasks={"ids": []}),
    "ids_twice": spec_variant("x", tasks={"ids": ["humaneval/1", "humaneval/1"]}),
    "limit_huge": spec_variant("x", tasks={"split": "test", "limit": 10**12}),
    "seed_limit_bool": spec_variant("x", seed_knowledge={"split": "train", "limit": True}),
    "stages_empty": spec_variant("x", stages=[]),
    "address_serial": spec_variant(
        "x", parallelism={"executor": "serial", "dask_address": "tcp://127.0.0.1:8786"}
    ),
    "address_empty": spec_variant("x", parallelism={"executor": "dask", "dask_address": ""}),
    "workers_text": spec_variant("x", parallelism={"executor": "serial", "workers": "2"}),
    "coder_dict": spec_variant("x", coder={"name": "builtins:dict"}),
    "coder_llm_no_key": spec_variant("x", coder={"name": "llm", "model": "gpt-4o-mini"}),
    "arm_seed_knowledge_text": spec_variant("x", arms__0__seed_knowledge="yes"),
    "seed_knowledge_text": spec_variant("x", seed_knowledge="yes"),
    "shuffle_text": spec_variant("x", shuffle_tasks="no"),
    "leak_text": spec_variant("x", allow_target_leak="true"),
    "n_days_2": spec_variant("x", arms=[{"name": "a"}], **_ALPHA),
    "n_days_text": spec_variant(
        "x", arms=[{"name": "a"}], **{**_ALPHA, "suite_options": {"n_days": "300"}}
    ),
    "humaneval_limit_negative": spec_variant("x", suite_options={"limit": -1}),
    "humaneval_limit_text": spec_variant("x", suite_options={"limit": "4"}),
    "leak_split_all": spec_variant("x", suite_options={"limit": 8}, tasks={"split": "all"}),
    "leak_ids": spec_variant(
        "x", tasks={"ids": ["humaneval/0", "humaneval/1"]}, seed_knowledge={"split": "all"}
    ),
    "leak_same_suite": spec_variant(
        "x",
        seed_knowledge={"suite": "humaneval", "suite_options": {"limit": 8}, "split": "test"},
    ),
    "knowledge_unknown_key": spec_variant(
        "x", knowledge={"store": "runs/lab.db", "scope": "experiment", "shard": 2}
    ),
    "knowledge_scope_bad": spec_variant("x", knowledge={"store": "runs/lab.db", "scope": "team"}),
    "knowledge_no_scope": spec_variant("x", knowledge={"store": "runs/lab.db"}),
    "knowledge_text": spec_variant("x", knowledge="postgresql://lab:s3cret@db/kb"),
    "knowledge_mysql": spec_variant("x", knowledge={"store": "mysql://db/kb", "scope": "arm"}),
    "knowledge_in_memory": spec_variant(
        "x", knowledge={"store": ":memory:", "scope": "experiment"}
    ),
    "knowledge_arm_sqlite": spec_variant("x", knowledge={"store": "runs/lab.db", "scope": "arm"}),
    "knowledge_bad_schema": spec_variant(
        "x", knowledge={"store": "postgresql://lab:s3cret@db/kb?schema=Team-A", "scope": "arm"}
    ),
    "knowledge_no_carry": spec_variant(
        "x",
        knowledge={"store": "runs/lab.db", "scope": "experiment"},
        stages=[{"name": "a", "carry_knowledge": False}],
    ),
    "memory_unused": spec_variant(
        "x", memory={"store": "postgresql://lab:s3cret@db/kb", "scope": "arm"}
    ),
    "stage_snapshot_no_store": spec_variant(
        "x", stages=[{"name": "a", "start_from": {"snapshot": "stage:learn"}}]
    ),
    "stage_snapshot_no_carry": spec_variant(
        "x",
        stages=[
            {
                "name": "a",
                "carry_knowledge": False,
                "start_from": {"snapshot": "s", "store": "runs/lab.db"},
            }
        ],
    ),
    "stage_snapshot_unknown_key": spec_variant(
        "x", stages=[{"name": "a", "start_from": {"snapshot": "s", "stores": "runs/lab.db"}}]
    ),
    "stage_snapshot_in_memory": spec_variant(
        "x", stages=[{"name": "a", "start_from": {"snapshot": "s", "store": ":memory:"}}]
    ),
    "stage_snapshot_shared": spec_variant(
        "x",
        arms=[{"name": "a", "rag": "v1"}],
        knowledge={"store": "runs/lab.db", "scope": "experiment"},
        stages=[{"name": "a", "start_from": {"snapshot": "s", "store": "runs/old.db"}}],
    ),
    "taskfile_dup_key": spec_variant(
        "x", suite="specs/tasks/dup_yaml_key.yaml", suite_options={}, tasks={"split": "all"}
    ),
}

#: Workspace-relative path -> content (text, bytes, or a document written as YAML).
FILES: dict[str, Any] = {
    "specs/seeds_1e23.yaml": _raw("x", "1e23", seeds=[_MARK]),
    "specs/limit_1e12.yaml": _raw("x", "1e12", tasks={"split": "test", "limit": _MARK}),
    "specs/dup_key.yaml": _DUP_KEY,
    "specs/trailing_comma.json": _JSON,
    "specs/dup_key_json.json": _JSON_DUP,
    "specs/utf16.yaml": _UTF16,
    "specs/latin1.yaml": _LATIN1,
    "specs/tasks/dup_yaml_key.yaml": _TASKS_DUP_KEY,
}

assert BASE_SPEC["seed_knowledge"] == {"split": "train"}  # the leak cases rely on it

#: The cases of this module.
CASES: tuple[BadInput, ...] = (
    _run(
        "seeds_1e23",
        "`seeds: [1e23]` (YAML reads it as text)",
        "seeds.0: Input should be a valid integer, got the text '1e23'",
    ),
    run_case(
        "seeds_true",
        "`seeds: [true]`",
        "seeds.0: Input should be a valid integer, got the boolean true",
    ),
    run_case("seeds_decimal", "`seeds: [1.0e+23]`", "got the decimal number 1e+23"),
    run_case("seeds_negative", "`seeds: [-1]`", "seeds are numpy seeds: whole numbers from 0"),
    run_case("seeds_too_big", "`seeds: [4294967296]`", "less than or equal to 4294967295"),
    run_case(
        "max_loop_text",
        "`max_loop: '2'`",
        "max_loop: Input should be a valid integer, got the "
        "text '2' (write the number without quotes)",
    ),
    run_case("max_loop_decimal", "`max_loop: 2.0`", "max_loop: Input should be a valid integer"),
    run_case("ids_empty", "`tasks.ids: []`", "tasks.ids: an empty list selects nothing; omit ids"),
    run_case("ids_twice", "`tasks.ids` listing one id twice", "task id(s) listed twice"),
    _run("limit_1e12", "`tasks.limit: 1e12`", "tasks.limit: Input should be a valid integer"),
    run_case("limit_huge", "`tasks.limit: 1000000000000`", "tasks.limit: Input should be less"),
    run_case(
        "seed_limit_bool", "`seed_knowledge.limit: true`", "seed_knowledge.limit: Input should be"
    ),
    _run("dup_key", "a key given twice (`max_loop`)", "duplicate key 'max_loop' (first on line"),
    _run(
        "trailing_comma",
        "JSON spec with a trailing comma",
        "cannot parse spec specs/trailing_comma.json: line 1, column 67: Expecting property name",
        suffix="json",
    ),
    _run("dup_key_json", "JSON spec with a key twice", "duplicate key 'name'", suffix="json"),
    run_case("stages_empty", "`stages: []`", "omit stages (one stage with 'tasks') or give at"),
    run_case(
        "address_serial",
        "`dask_address` with `executor: serial`",
        "parallelism.dask_address: only executor 'dask' uses an address, not 'serial'",
    ),
    run_case("address_empty", "`dask_address: ''`", "omit it to start a local Dask cluster"),
    run_case("workers_text", "`parallelism.workers: '2'`", "parallelism.workers: Input should"),
    run_case("coder_dict", "`coder: {name: builtins:dict}`", "'builtins:dict' is not a coder"),
    _run(
        "coder_llm_no_key",
        "`coder: llm` with no API key",
        "coder: LLMCoder (model 'gpt-4o-mini') has no API key",
        **_NO_KEY,
    ),
    run_case(
        "arm_seed_knowledge_text",
        "`arms[0].seed_knowledge: 'yes'`",
        "arms.0.seed_knowledge: Input should be a valid boolean, got the text 'yes'",
    ),
    run_case(
        "seed_knowledge_text",
        "`seed_knowledge: 'yes'`",
        "seed_knowledge: expected a mapping with fields split, limit, suite, suite_options",
    ),
    run_case("shuffle_text", "`shuffle_tasks: 'no'`", "shuffle_tasks: Input should be a valid"),
    run_case("leak_text", "`allow_target_leak: 'true'`", "allow_target_leak: Input should be"),
    run_case(
        "n_days_2",
        "alpha158 `n_days: 2` (every value of ROC10 missing)",
        "alpha158 option n_days: 2 days leave every value of 'alpha158/ROC10' "
        "(Ref($close, 10)/$close) missing; the selected tasks need n_days >= 11",
    ),
    run_case("n_days_text", "alpha158 `n_days: '300'`", "alpha158 option n_days: expected a"),
    run_case(
        "humaneval_limit_negative",
        "humaneval `limit: -1`",
        "humaneval option limit: expected a whole number >= 1, got -1",
    ),
    run_case("humaneval_limit_text", "humaneval `limit: '4'`", "humaneval option limit: expected"),
    _run(
        "utf16",
        "spec saved as UTF-16",
        "spec 'specs/utf16.yaml' is not UTF-8 text (found a "
        "UTF-16 byte-order mark); save it as UTF-8",
    ),
    _run("latin1", "spec saved as Latin-1", "is not UTF-8 text (byte 0xe9 at offset"),
    run_case(
        "leak_split_all",
        "targets `split: all` overlap the seed split `train`",
        "seed_knowledge: split 'train' holds 2 of the target tasks ('humaneval/0', 'humaneval/4')",
    ),
    run_case(
        "leak_ids",
        "target ids inside the seed split `all`",
        "set allow_target_leak: true to run it on purpose",
    ),
    run_case(
        "leak_same_suite",
        "`seed_knowledge.suite` naming the same suite, its test split",
        "seed_knowledge: split 'test' holds 3 of the target tasks",
    ),
    run_case(
        "knowledge_unknown_key",
        "`knowledge` with an unknown key (`shard`)",
        "knowledge.shard: unknown field; known: 'scope', 'store'",
    ),
    run_case(
        "knowledge_scope_bad",
        "`knowledge.scope: team`",
        "knowledge.scope: Input should be 'experiment' or 'arm'",
    ),
    run_case(
        "knowledge_no_scope", "`knowledge` without `scope`", "knowledge.scope: Field required"
    ),
    run_case(
        "knowledge_text",
        "`knowledge:` a URL (with a password) instead of a mapping",
        "knowledge: expected a mapping with fields store, scope, got the text "
        "'postgresql://lab:***@db/kb'",
    ),
    run_case(
        "knowledge_mysql",
        "`knowledge.store: mysql://…`",
        "knowledge.store: unsupported store URL scheme 'mysql'",
    ),
    run_case(
        "knowledge_in_memory",
        "`knowledge.store: ':memory:'`",
        "knowledge.store: an in-memory store is new and empty at every open",
    ),
    run_case(
        "knowledge_arm_sqlite",
        "`knowledge: {store: runs/lab.db, scope: arm}` (a SQLite file has no namespaces)",
        "knowledge: scope 'arm' keeps each arm in its own namespace of the store, which "
        "PostgreSQL holds as a schema and a SQLite file cannot",
    ),
    run_case(
        "knowledge_bad_schema",
        "`knowledge.store` naming the schema `Team-A`",
        "knowledge: schema 'Team-A' of 'postgresql://lab:***@db/kb?schema=Team-A' is not a "
        "lower-case SQL identifier",
    ),
    run_case(
        "knowledge_no_carry",
        "`knowledge` shared with a stage of `carry_knowledge: false`",
        "knowledge: stage(s) ['a'] set carry_knowledge: false, but knowledge in a shared store",
    ),
    run_case(
        "stage_snapshot_no_store",
        "the first stage starts from a snapshot without naming a store",
        "stages.0.start_from: snapshot 'stage:learn' of which store? The first stage has no "
        "previous stage",
    ),
    run_case(
        "stage_snapshot_no_carry",
        "a stage with `start_from` and `carry_knowledge: false`",
        "stages.0: carry_knowledge: false starts the stage empty, start_from from a snapshot",
    ),
    run_case(
        "stage_snapshot_unknown_key",
        "a stage's `start_from` with a misspelt field (`stores`)",
        "stages.0.start_from.stores: unknown field; known: 'snapshot', 'store'; did you mean",
    ),
    run_case(
        "stage_snapshot_in_memory",
        "a stage starts from a snapshot of an in-memory store",
        "stages.0.start_from.store: an in-memory store is new and empty at every open",
    ),
    run_case(
        "stage_snapshot_shared",
        "a stage starts from a snapshot while `knowledge` is a shared store",
        "knowledge: stage(s) ['a'] start from a snapshot, but a shared store is one line",
    ),
    run_case(
        "memory_unused",
        "`memory` with no `rag: memory` arm",
        "memory: no arm uses it (it applies to arms with rag memory), so it would be ignored",
    ),
    run_case(
        "taskfile_dup_key",
        "task file with a key twice (`entry_point`)",
        "is not valid JSON/YAML: line 7, column 5: duplicate key 'entry_point' (first on line 6)",
        "task file",
    ),
)
