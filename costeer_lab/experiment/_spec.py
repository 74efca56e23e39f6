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
    model_validator,
)

from costeer_lab.errors import ConfigurationError

__all__ = ["ArmSpec", "ExperimentSpec", "load_spec"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskSelection(_Strict):
    """Which tasks of the suite to evolve: a split, explicit ids, and/or a limit."""

    split: str | None = "test"
    ids: list[str] | None = None
    limit: int | None = Field(default=None, ge=1)


class SeedKnowledge(_Strict):
    """Ground truths loaded into each arm's knowledge base before the run (never the targets).

    ``suite`` (with ``suite_options``) takes them from another suite than the experiment's,
    e.g. Alpha158 knowledge for a user's task file or an RD-Agent benchmark file.
    """

    split: str | None = "train"
    limit: int | None = Field(default=None, ge=1)
    suite: str | None = None
    suite_options: dict[str, Any] = Field(default_factory=dict)


class ArmSpec(_Strict):
    """One experimental condition.

    ``rag``: ``none`` (no knowledge), ``v1`` (similar successful implementations), ``v2`` (graph
    KB: former traces + components + errors) or ``memory`` (the pattern and failure memory,
    :class:`~costeer_lab.memory.MemoryStrategy`). ``rag_options`` override RAG settings for this
    arm, e.g. ``{"error_query": false}`` for "V2 without the error query"; for ``memory`` they
    are ``threshold``, ``failure_threshold`` and ``limit``.
    """

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    rag: Literal["none", "v1", "v2", "memory"] = "none"
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

    @model_validator(mode="after")
    def _unique(self) -> ExperimentSpec:
        names = [a.name for a in self.arms]
        if len(set(names)) != len(names):
            raise ValueError(f"arm names must be unique, got {names}")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be unique, got {self.seeds}")
        return self

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.model_dump_json())
        return data


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
            raise ConfigurationError(f"cannot parse spec {path}: {exc}") from exc
        where = str(path)
    else:
        data, where = dict(source), "spec"
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"{where}: a spec must be a mapping, got {type(data).__name__}")
    try:
        return ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigurationError(f"invalid experiment spec ({where}): {problems}") from None
