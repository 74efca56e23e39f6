"""Experiment specification: a YAML file or dict, validated with errors that name the field."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from costeer_lab._redact import redact_url
from costeer_lab.errors import ConfigurationError, InvalidInputError, did_you_mean

__all__ = ["ArmSpec", "ExperimentSpec", "SharedStore", "StageSpec", "StartSnapshot", "load_spec"]

#: Whole numbers and booleans are taken as written: no text (``'2'``, ``'yes'``), no decimal
#: number (``1e23``, ``2.0``) and no boolean as a number (``true`` is not 1).
StrictInt = Annotated[int, Strict()]
StrictBool = Annotated[bool, Strict()]
#: Largest seed: experiment seeds feed ``numpy.random.default_rng`` and friends (0..2**32-1).
MAX_SEED = 2**32 - 1
#: Largest ``limit`` of a task selection (no suite holds more tasks).
MAX_LIMIT = 1_000_000
#: A PostgreSQL schema name a store accepts (``?schema=``).
_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}")
#: A task limit: ``1 <= limit <= MAX_LIMIT``.
Limit = Annotated[int, Strict(), Field(ge=1, le=MAX_LIMIT)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskSelection(_Strict):
    """Which tasks of the suite to evolve: a split, explicit ids, a regular expression the ids
    must match (``re.search``), and/or a limit (applied last)."""

    split: str | None = "test"
    ids: list[str] | None = None
    match: str | None = None
    limit: Limit | None = None

    @field_validator("ids")
    @classmethod
    def _some_ids(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and not v:
            raise ValueError("an empty list selects nothing; omit ids or list at least one")
        if v is not None:
            twice = sorted({i for i in v if v.count(i) > 1})
            if twice:
                raise ValueError(f"task id(s) listed twice: {twice[:5]}")
        return v

    @field_validator("match")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"match {v!r} is not a regular expression: {exc}") from None
        return v


class SeedKnowledge(_Strict):
    """Ground truths loaded into each arm's knowledge base before the run (never the targets).

    ``suite`` (with ``suite_options``) takes them from another suite than the experiment's,
    e.g. Alpha158 knowledge for a user's task file or an RD-Agent benchmark file.
    """

    split: str | None = "train"
    limit: Limit | None = None
    suite: str | None = None
    suite_options: dict[str, Any] = Field(default_factory=dict)


def _path_safe_name(value: str) -> str:
    """An arm or stage name becomes a file or folder name under ``--out``: ``.`` and ``..``
    (names of only dots) would write into the run folder or above it."""
    if set(value) <= {"."}:
        raise ValueError(
            f"name {value!r} is only dots; it becomes a folder or file name under --out, where "
            "'.' and '..' would leave it (use letters, digits, '_', '-' or '.')"
        )
    return value


class ArmSpec(_Strict):
    """One experimental condition.

    ``rag``: ``none`` (no knowledge), ``v1`` (similar successful implementations), ``v2`` (graph
    KB: former traces + components + errors) or ``memory`` (the pattern and failure memory,
    :class:`~costeer_lab.memory.MemoryStrategy`). ``rag_options`` override RAG settings for this
    arm, e.g. ``{"error_query": false}`` for "V2 without the error query"; for ``memory`` they
    are ``threshold``, ``failure_threshold`` and ``limit``. Every key is checked against the
    options the strategy honours (:func:`costeer_lab.knowledge.rag_option_keys`), so a misspelt
    or inapplicable key is an error, never a silently unchanged arm.
    """

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    _name_is_path_safe = field_validator("name")(_path_safe_name)
    rag: Literal["none", "v1", "v2", "memory"] = "none"
    rag_options: dict[str, Any] = Field(default_factory=dict)
    seed_knowledge: StrictBool = True

    @model_validator(mode="after")
    def _options_honoured(self) -> ArmSpec:
        if self.rag == "none":
            if self.rag_options:
                raise ValueError(
                    f"arm {self.name!r} uses no knowledge (rag: none), so rag_options "
                    f"{sorted(self.rag_options)} would be ignored; remove them or set rag"
                )
            return self
        from costeer_lab.errors import InvalidInputError
        from costeer_lab.knowledge import validate_rag_options

        if self.rag == "memory":
            _check_memory_options(self.rag_options)
            return self
        try:
            validate_rag_options(self.rag, self.rag_options)
        except InvalidInputError as exc:
            raise ValueError(str(exc)) from None
        return self


#: Options of a ``rag: memory`` arm and the checks of their values.
MEMORY_OPTIONS = ("failure_threshold", "limit", "threshold")


def _check_memory_options(options: dict[str, Any]) -> None:
    """Keys and values of a memory arm's ``rag_options`` (ValueError naming the problem)."""
    for key, value in options.items():
        if key not in MEMORY_OPTIONS:
            raise ValueError(
                f"rag_options: {key!r} is not an option of the memory strategy; valid keys: "
                f"{did_you_mean(str(key), MEMORY_OPTIONS)}"
            )
        if key == "limit":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"rag_options: limit must be a whole number >= 1, got {value!r}")
        elif key == "threshold" and value == "calibrated":
            continue  # the embedder's calibrated threshold (the default when omitted)
        elif isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
            what = " or 'calibrated'" if key == "threshold" else ""
            raise ValueError(
                f"rag_options: {key} must be a cosine similarity in [-1, 1]{what}, got {value!r}"
            )


def _openable_store(value: str, why_not_memory: str) -> str:
    """A spec's store path or URL, stripped; refused when in memory (``why_not_memory`` says
    why, for the field at hand) or not a store target.

    Example:
        >>> _openable_store(" kb.db ", "so nothing could be shared")
        'kb.db'
    """
    from costeer_lab.store import check_store_target

    text = value.strip()
    if text in (":memory:", "sqlite:///:memory:") or text.startswith("sqlite:///:memory:?"):
        raise ValueError(f"an in-memory store is new and empty at every open, {why_not_memory}")
    try:
        check_store_target(text)
    except ConfigurationError as exc:
        raise ValueError(str(exc)) from None
    return text


class StartSnapshot(_Strict):
    """Where a stage's knowledge starts: the named snapshot of a store (``start_from`` of a
    stage; the snapshots are the store's, :meth:`~costeer_lab.store.BaseStore.snapshot`).

    ``store``: a store file path, ``sqlite:///`` or ``postgresql://`` URL; every (arm, seed) of
    the stage starts from a branch of its snapshot (the source is only read). Left out: each
    (arm, seed)'s own store of the previous stage (the first stage: the top-level
    ``start_from`` run's ``kb/<arm>-seed<s>.db``). After each stage the runner takes the
    snapshot ``stage:<name>`` in every (arm, seed)'s store, so ``{snapshot: "stage:learn"}``
    starts from the end of stage ``learn`` even when later stages wrote more.

    Example:
        >>> StartSnapshot.model_validate({"snapshot": "stage:learn"}).store is None
        True
    """

    snapshot: str = Field(min_length=1)
    store: str | None = None

    @field_validator("snapshot")
    @classmethod
    def _visible(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("a snapshot name must not be blank")
        return v

    @field_validator("store")
    @classmethod
    def _openable(cls, v: str | None) -> str | None:
        if v is None:
            return v
        return _openable_store(
            v, "so it holds no snapshot; give a store file path or a postgresql:// URL"
        )


class StageSpec(_Strict):
    """One stage of a staged experiment: its tasks, and where its knowledge starts.

    With ``carry_knowledge`` every (arm, seed) starts from a copy of its knowledge base at the
    end of the previous stage (the first stage: of ``start_from``, when set), so errors fixed
    and tasks solved earlier are retrievable; run ids get the stage name as a suffix. With
    ``start_from`` (:class:`StartSnapshot`) it starts from a named snapshot instead.
    """

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    _name_is_path_safe = field_validator("name")(_path_safe_name)
    tasks: TaskSelection = Field(default_factory=TaskSelection)
    carry_knowledge: StrictBool = True
    start_from: StartSnapshot | None = None

    @model_validator(mode="after")
    def _one_start(self) -> StageSpec:
        if self.start_from is not None and not self.carry_knowledge:
            raise ValueError(
                "carry_knowledge: false starts the stage empty, start_from from a snapshot; "
                "keep one of them"
            )
        return self


class SharedStore(_Strict):
    """A store the arms' knowledge (``knowledge``) or pattern memory (``memory``) shares,
    instead of one SQLite file per (arm, seed) under the run folder (the default).

    ``store``: a ``postgresql://`` URL (many processes and machines) or a SQLite file
    (``sqlite:///path.db`` or ``path.db``: processes of one machine). ``scope``:

    * ``arm``: each (arm, seed) of this run keeps its own namespace inside the store (a
      PostgreSQL schema, :func:`~costeer_lab.experiment.shared_target`), so arms stay as
      independent as with their own files; PostgreSQL only (a SQLite file has no namespaces).
    * ``experiment``: every arm and seed of the experiment reads and writes the store itself,
      and so does any other experiment or process naming it. Arms then see each other's
      knowledge: the ones that run later start from more (they run in spec order), so a contrast
      between them no longer measures the treatment alone; the report says so.

    Step records and the query log of such an arm live in the shared store too (one transaction
    per step, as in a file), under run ids that carry this run's key.
    """

    store: str = Field(min_length=1)
    scope: Literal["experiment", "arm"]

    @field_validator("store")
    @classmethod
    def _openable(cls, v: str) -> str:
        return _openable_store(
            v, "so nothing could be shared; give a postgresql:// URL or a SQLite file path"
        )

    @model_validator(mode="after")
    def _arm_scope_needs_namespaces(self) -> SharedStore:
        from costeer_lab.experiment._shared import is_postgres, postgres_schema

        if is_postgres(self.store):
            schema = postgres_schema(self.store)
            if not _SCHEMA.fullmatch(schema):
                raise ValueError(
                    f"schema {schema!r} of {redact_url(self.store)!r} is not a lower-case SQL "
                    "identifier (letters, digits, '_'; at most 63)"
                )
        elif self.scope == "arm":
            raise ValueError(
                "scope 'arm' keeps each arm in its own namespace of the store, which PostgreSQL "
                "holds as a schema and a SQLite file cannot; use a postgresql:// store, scope "
                "'experiment', or leave the field out (each arm its own SQLite file, the default)"
            )
        return self


class Parallelism(_Strict):
    """Where coders and evaluations run. ``dask`` connects to ``dask_address`` (a scheduler,
    ``tcp://host:8786``) or, without one, starts a local cluster of ``workers`` processes."""

    executor: Literal["process", "thread", "serial", "dask"] = "process"
    workers: StrictInt | None = Field(default=None, ge=1, le=4096)
    dask_address: str | None = None

    @field_validator("dask_address")
    @classmethod
    def _address_needs_dask(cls, v: str | None, info: ValidationInfo) -> str | None:
        executor = info.data.get("executor")
        if v is not None and executor is not None and executor != "dask":
            raise ValueError(
                f"only executor 'dask' uses an address, not {executor!r}; remove dask_address "
                "or set executor: dask"
            )
        if v is not None and not v.strip():
            raise ValueError(
                "empty; omit it to start a local Dask cluster, or give the scheduler's address "
                "(tcp://host:8786)"
            )
        return v


class ExperimentSpec(_Strict):
    """A whole experiment: arms × seeds over a task selection.

    ``coder`` is the coder config (``{"name": "reuse"}``, ``{"name": "llm", "model": …}``, or
    ``{"name": "package.module:Class", …}``) given to ``coders.coder_from_config``. An ``llm``
    coder without a ``store`` caches its responses in ``<out>/llm_cache.db`` (on by default;
    ``cache_mode: off`` disables it); ``cache_mode: replay_only`` with the ``store`` of a
    recorded run replays it with no network. Its endpoint is probed before the run starts.

    Example:
        >>> spec = ExperimentSpec.model_validate({"name": "tiny", "suite": "alpha158",
        ...     "arms": [{"name": "no_knowledge"}], "seeds": [0], "max_loop": 2})
        >>> spec.arms[0].rag
        'none'
    """

    name: str = Field(min_length=1)
    suite: str
    suite_options: dict[str, Any] = Field(default_factory=dict)
    tasks: TaskSelection = Field(default_factory=TaskSelection)
    seed_knowledge: SeedKnowledge = Field(default_factory=SeedKnowledge)
    coder: dict[str, Any] = Field(default_factory=lambda: {"name": "reuse"})
    embedder: str = "hashing"
    arms: list[ArmSpec] = Field(min_length=1)
    seeds: list[Annotated[int, Strict(), Field(ge=0, le=MAX_SEED)]] = Field(
        default_factory=lambda: [0], min_length=1
    )
    max_loop: StrictInt = Field(default=5, ge=1, le=1000)
    max_trials: StrictInt | None = Field(default=None, ge=1, le=1_000_000)
    parallelism: Parallelism = Field(default_factory=Parallelism)
    #: Stages run in order (empty: one stage with ``tasks``); see :class:`StageSpec`.
    stages: list[StageSpec] = Field(default_factory=list)
    #: Directory of an earlier run: each (arm, seed) starts from its ``kb/<arm>-seed<s>.db``.
    start_from: str | None = None
    #: Shuffle each seed's task order with that seed (coders see tasks in a seeded order).
    shuffle_tasks: StrictBool = False
    #: Let the seed knowledge hold target tasks (same suite, same ids), e.g. an oracle arm.
    #: Off: such an overlap is refused before the run; on: the run records it in ``spec.json``
    #: and its report carries a warning.
    allow_target_leak: StrictBool = False
    #: Where ``v1``/``v2`` arms keep their knowledge (``None``: a SQLite file per arm and seed).
    knowledge: SharedStore | None = None
    #: Where ``memory`` arms keep their pattern memory (``None``: a SQLite file per arm and seed).
    memory: SharedStore | None = None

    @field_validator("knowledge", "memory")
    @classmethod
    def _shared_used(cls, v: SharedStore | None, info: ValidationInfo) -> SharedStore | None:
        if v is None:
            return v
        from costeer_lab.experiment._shared import SHARED_RAGS

        rags = SHARED_RAGS[str(info.field_name)]
        arms = info.data.get("arms") or []
        if arms and not any(a.rag in rags for a in arms):
            raise ValueError(
                f"no arm uses it (it applies to arms with rag {' or '.join(rags)}), so it would "
                "be ignored; remove it or add such an arm"
            )
        if info.data.get("start_from") is not None:
            raise ValueError(
                "start_from copies each arm's SQLite file of an earlier run, which a shared "
                "store has not; remove start_from or this field"
            )
        snapped = [st.name for st in info.data.get("stages") or [] if st.start_from]
        if snapped:
            raise ValueError(
                f"stage(s) {snapped} start from a snapshot, but a shared store is one line of "
                "knowledge that other arms and runs write too: starting from a snapshot would "
                "roll it back under them; remove start_from or this field"
            )
        dropped = [st.name for st in info.data.get("stages") or [] if not st.carry_knowledge]
        if dropped:
            raise ValueError(
                f"stage(s) {dropped} set carry_knowledge: false, but knowledge in a shared store "
                "carries over from stage to stage; remove carry_knowledge: false or this field"
            )
        return v

    @field_validator("coder")
    @classmethod
    def _coder_has_name(cls, v: dict[str, Any]) -> dict[str, Any]:
        if "name" not in v:
            raise ValueError("coder needs a 'name' (e.g. 'reuse' or 'llm')")
        return v

    @field_validator("arms")
    @classmethod
    def _unique_arms(cls, v: list[ArmSpec]) -> list[ArmSpec]:
        names = [a.name for a in v]
        if len(set(names)) != len(names):
            raise ValueError(f"arm names must be unique, got {names}")
        return v

    @field_validator("seeds")
    @classmethod
    def _unique_seeds(cls, v: list[int]) -> list[int]:
        if len(set(v)) != len(v):
            raise ValueError(f"seeds must be unique, got {v}")
        return v

    @field_validator("stages")
    @classmethod
    def _unique_stages(cls, v: list[StageSpec]) -> list[StageSpec]:
        if not v:
            raise ValueError(
                "an empty list runs nothing; omit stages (one stage with 'tasks') or give at "
                "least one"
            )
        names = [st.name for st in v]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be unique, got {names}")
        return v

    @model_validator(mode="after")
    def _first_stage_has_a_source(self) -> ExperimentSpec:
        first = self.stages[0].start_from if self.stages else None
        if first is not None and first.store is None and self.start_from is None:
            raise ValueError(
                f"stages.0.start_from: snapshot {first.snapshot!r} of which store? The first "
                "stage has no previous stage; give start_from.store (a store file or URL) or "
                "the top-level start_from (an earlier run's folder)"
            )
        return self

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON data that :func:`load_spec` reads back (``stages`` left out when
        there are none: an explicit empty list is refused)."""
        data: dict[str, Any] = json.loads(self.model_dump_json())
        if not data["stages"]:
            del data["stages"]
        for field in ("knowledge", "memory"):
            if data[field] is None:
                del data[field]  # as written by runs before shared stores existed
            else:
                data[field]["store"] = redact_url(data[field]["store"])
        for stage in data.get("stages", []):
            start = stage.get("start_from")
            if start is None:
                del stage["start_from"]  # as written by runs before stage snapshots existed
            elif start["store"] is None:
                del start["store"]
            else:
                start["store"] = redact_url(start["store"])
        return data

    def _repr_html_(self) -> str:
        from costeer_lab._html import card

        sel = self.tasks
        chosen = f"ids {sel.ids}" if sel.ids else f"split {sel.split!r}"
        arms = [
            [a.name, a.rag, json.dumps(a.rag_options) if a.rag_options else "", a.seed_knowledge]
            for a in self.arms
        ]
        return card(
            f"Experiment spec {self.name}",
            [
                ("suite", f"{self.suite} {json.dumps(self.suite_options)}"),
                ("tasks", chosen + (f", first {sel.limit}" if sel.limit else "")),
                ("seed knowledge", f"split {self.seed_knowledge.split!r}"),
                ("coder", json.dumps(self.coder)),
                ("embedder", self.embedder),
                ("seeds", self.seeds),
                ("max_loop", self.max_loop),
                ("runs", f"{len(self.arms)} arm(s) × {len(self.seeds)} seed(s)"),
                *[
                    (field, f"{shared.scope} scope in {redact_url(shared.store)}")
                    for field, shared in (("knowledge", self.knowledge), ("memory", self.memory))
                    if shared is not None
                ],
            ],
            table=(["arm", "rag", "rag_options", "seed_knowledge"], arms),
        )


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The spec model that holds the field at ``loc`` (for "did you mean" on unknown fields)."""
    model: Any = ExperimentSpec
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if model is not None else None
        ann = getattr(field, "annotation", None)
        args = getattr(ann, "__args__", ()) or (ann,)
        model = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if model is None:
            return None
    return model if isinstance(model, type) else None


def _given(value: Any) -> str:
    """What a value of the wrong type is, in the words of a YAML/JSON writer."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):  # a store URL given where a mapping belongs: no password shown
        return f"the text {redact_url(value)!r}"
    if isinstance(value, float):
        return f"the decimal number {value!r}"
    if isinstance(value, int):
        return f"the whole number {value}"
    return f"a {'list' if isinstance(value, list) else type(value).__name__}"


#: Error types of a value of the wrong type (strict types: no coercion).
_TYPE_ERRORS = {"int_type", "bool_type", "string_type", "list_type", "dict_type", "model_type"}


def _describe(err: Any) -> str:
    loc = tuple(err["loc"])
    where = ".".join(str(p) for p in loc) or "(top)"
    msg = str(err["msg"]).removeprefix("Value error, ")
    kind = err.get("type")
    if kind == "extra_forbidden" and loc:
        model = _model_at(loc)
        if model is not None:
            msg = f"unknown field; {did_you_mean(str(loc[-1]), list(model.model_fields))}"
    elif kind == "model_type" and (model := _model_at((*loc, "_"))) is not None:
        fields = ", ".join(model.model_fields)
        msg = f"expected a mapping with fields {fields}, got {_given(err.get('input'))}"
        if loc == ("seed_knowledge",):
            msg += " (none: {split: null}; an arm without it: seed_knowledge: false)"
    elif kind in _TYPE_ERRORS and "input" in err:
        value = err["input"]
        msg = f"{msg}, got {_given(value)}"
        if kind == "bool_type":
            msg += " (write true or false, without quotes)"
        elif kind == "int_type" and isinstance(value, str) and value.strip().isdigit():
            msg += " (write the number without quotes)"
    elif loc[:1] == ("seeds",) and kind in ("less_than_equal", "greater_than_equal"):
        msg += f" (seeds are numpy seeds: whole numbers from 0 to {MAX_SEED})"
    if not loc and re.match(r"[A-Za-z_][\w.]*: ", msg):
        return msg  # a check across fields that names the field itself
    return f"{where}: {msg}"


def load_spec(source: str | Path | Mapping[str, Any] | ExperimentSpec) -> ExperimentSpec:
    """Load and validate a spec from a YAML/JSON file, a dict, or a spec.

    Raises:
        ConfigurationError: the file is missing or unparsable, or a field is invalid (the message
            names the field path, e.g. ``arms.1.rag``, and what was expected).
    """
    if isinstance(source, ExperimentSpec):
        return source
    if isinstance(source, str | Path):
        path = Path(source)
        if not path.is_file():
            raise ConfigurationError(f"experiment spec file not found: {path}")
        from costeer_lab.suites._document import parse_document, read_utf8

        try:
            text = read_utf8(path, "spec")
        except InvalidInputError as exc:
            raise ConfigurationError(str(exc)) from None
        try:
            data = parse_document(text, json_file=path.suffix.lower() == ".json")
        except InvalidInputError as exc:
            raise ConfigurationError(f"cannot parse spec {path}: {exc}") from None
        where = str(path)
    else:
        data, where = dict(source), "spec"
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"{where}: a spec must be a mapping, got {type(data).__name__}")
    try:
        return ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_describe(e) for e in exc.errors())
        raise ConfigurationError(f"invalid experiment spec ({where}): {problems}") from None
