"""Names of a spec that become paths, checked once, and the one function that makes them paths.

What becomes a path under ``--out``: a stage name (``kb/<stage>/``) and an arm name with its
seed (``kb/[<stage>/]<arm>-seed<s>.db``). Their charset is the spec's (letters, digits, ``_``,
``-``, ``.``; not only dots); here their length is bounded, so the file name fits every file
system. The experiment name and task ids are labels: no path is built from them (a task id
such as ``humaneval/0`` holds a ``/`` legitimately); the experiment name is refused only when it
holds a control character (it is shown on one line), and a task file refuses such ids itself.
Should a label ever become a path, :func:`costeer_lab._fs.path_component` escapes it.

Example:
    >>> store_path(Path("runs/x"), "v2", 0, "learn").as_posix()
    'runs/x/kb/learn/v2-seed0.db'
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from costeer_lab._fs import path_component
from costeer_lab.errors import ConfigurationError
from costeer_lab.experiment._spec import ExperimentSpec

__all__ = ["MAX_NAME_CHARS", "check_path_names", "store_path"]

#: Longest arm or stage name (it becomes a file or folder name).
MAX_NAME_CHARS = 100
#: Longest experiment name (a label in reports and spec.json).
MAX_EXPERIMENT_NAME_CHARS = 200


def store_path(out_dir: Path, arm: str, seed: int, stage: str = "") -> Path:
    """The knowledge-base store of one (arm, seed) of a stage under ``out_dir``.

    Valid arm and stage names come out unchanged; anything else is escaped by
    :func:`~costeer_lab._fs.path_component`, so the path never leaves ``out_dir / "kb"``.
    """
    folder = out_dir / "kb"
    if stage:
        folder = folder / path_component(stage)
    return folder / path_component(f"{arm}-seed{seed}.db")


def _control(text: str) -> str | None:
    bad = next((c for c in text if unicodedata.category(c) == "Cc"), None)
    return None if bad is None else f"U+{ord(bad):04X}"


def check_path_names(spec: ExperimentSpec) -> None:
    """Refuse names that cannot become file names or be shown on one line.

    Raises:
        ConfigurationError: naming the field (``arms[1].name``) and the limit.

    Example:
        >>> spec = ExperimentSpec.model_validate({"name": "a\\nb", "suite": "humaneval",
        ...     "arms": [{"name": "x"}]})
        >>> check_path_names(spec)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        costeer_lab.errors.ConfigurationError: name: 'a\\nb' contains a control character ...
    """
    bad = _control(spec.name)
    if bad is not None:
        raise ConfigurationError(
            f"name: {spec.name[:60]!r} contains a control character ({bad}); the experiment "
            "name is shown on one line"
        )
    if len(spec.name) > MAX_EXPERIMENT_NAME_CHARS:
        raise ConfigurationError(
            f"name: {len(spec.name)} characters; an experiment name has at most "
            f"{MAX_EXPERIMENT_NAME_CHARS}"
        )
    named = [(f"arms[{i}].name", a.name) for i, a in enumerate(spec.arms)]
    named += [(f"stages[{i}].name", s.name) for i, s in enumerate(spec.stages)]
    for field, name in named:
        if len(name) > MAX_NAME_CHARS:
            raise ConfigurationError(
                f"{field}: {len(name)} characters ({name[:20]!r}…); it becomes a file name "
                f"under --out, so at most {MAX_NAME_CHARS}"
            )
