"""Experiment specification: a YAML file or dict, validated with errors that name the field."""

from __future__ import annotations

import json
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
)

from costeer_lab.errors import ConfigurationError, did_you_mean

__all__ = ["ArmSpec", "ExperimentSpec", "load_spec"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskSelection(_Strict):
    """Which tasks of the suite to evolve: a split, explicit ids, and/or a limit."""

    split: str | None = "test"
    ids: list[str] | None = None
    limit: int | None = Field(default=None, ge=1)


class SeedKnowledge(_Strict):
    """Ground truths loaded into each arm's knowledge base before the run (never the targets)."""

    split: str | None = "train"
    limit: int | None = Field(default=None, ge=1)


class ArmSpec(_Strict):
    """One experimental condition.

    ``rag``: ``none`` (no knowledge), ``v1`` (similar successful implementations) or ``v2`` (graph
    KB: former traces + components + errors). ``rag_options`` override RAG settings for this arm,
    e.g. ``{"error_query": false}`` for "V2 without the error query".
    """

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    rag: Literal["none", "v1", "v2"] = "none"
    rag_options: dict[str, Any] = Field(default_factory=dict)
    seed_knowledge: bool = True


class Parallelism(_Strict):
    executor: Literal["process", "thread", "serial", "dask"] = "process"
    workers: int | None = Field(default=None, ge=1)
    dask_address: str | None = None


class ExperimentSpec(_Strict):
    """A whole experiment: arms × seeds over a task selection.

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
