"""Experiment specification: a YAML file or dict, validated with errors that name the field."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from costeer_lab.errors import ConfigurationError, did_you_mean

__all__ = ["ArmSpec", "ExperimentSpec", "StageSpec", "load_spec"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskSelection(_Strict):
    """Which tasks of the suite to evolve: a split, explicit ids, a regular expression the ids
    must match (``re.search``), and/or a limit (applied last)."""

    split: str | None = "test"
    ids: list[str] | None = None
    match: str | None = None
    limit: int | None = Field(default=None, ge=1)

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
    limit: int | None = Field(default=None, ge=1)
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
    seed_knowledge: bool = True

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
        elif isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
            raise ValueError(
                f"rag_options: {key} must be a cosine similarity in [-1, 1], got {value!r}"
            )


class StageSpec(_Strict):
    """One stage of a staged experiment: its tasks, and whether knowledge carries over.

    With ``carry_knowledge`` every (arm, seed) starts from a copy of its knowledge base at the
    end of the previous stage (the first stage: of ``start_from``, when set), so errors fixed
    and tasks solved earlier are retrievable; run ids get the stage name as a suffix.
    """

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    _name_is_path_safe = field_validator("name")(_path_safe_name)
    tasks: TaskSelection = Field(default_factory=TaskSelection)
    carry_knowledge: bool = True


class Parallelism(_Strict):
    executor: Literal["process", "thread", "serial", "dask"] = "process"
    workers: int | None = Field(default=None, ge=1)
    dask_address: str | None = None


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
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    max_loop: int = Field(default=5, ge=1, le=1000)
    max_trials: int | None = Field(default=None, ge=1)
    parallelism: Parallelism = Field(default_factory=Parallelism)
    #: Stages run in order (empty: one stage with ``tasks``); see :class:`StageSpec`.
    stages: list[StageSpec] = Field(default_factory=list)
    #: Directory of an earlier run: each (arm, seed) starts from its ``kb/<arm>-seed<s>.db``.
    start_from: str | None = None
    #: Shuffle each seed's task order with that seed (coders see tasks in a seeded order).
    shuffle_tasks: bool = False

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
        names = [st.name for st in v]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be unique, got {names}")
        return v

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.model_dump_json())
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


def _describe(err: Any) -> str:
    loc = tuple(err["loc"])
    where = ".".join(str(p) for p in loc) or "(top)"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if err.get("type") == "extra_forbidden" and loc:
        model = _model_at(loc)
        if model is not None:
            msg = f"unknown field; {did_you_mean(str(loc[-1]), list(model.model_fields))}"
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
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            from costeer_lab.suites._taskfile import parse_error_text

            raise ConfigurationError(
                f"cannot parse spec {path}: {parse_error_text(exc)}"
            ) from None
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
