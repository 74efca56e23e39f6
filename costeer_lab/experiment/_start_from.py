"""Check ``start_from`` before a run writes anything: the earlier run's knowledge bases exist.

A run with ``start_from`` starts each (arm, seed) of its first stage from a copy of
``<start_from>/kb/<arm>-seed<s>.db``. :func:`check_start_from` runs in preflight, so a mistyped
folder ends in one error before ``spec.json`` (or anything) is written, and the corrected spec
then runs on the same ``--out``. Stores already present in the output folder (a resumed run)
need no source.

Example:
    >>> import tempfile, pathlib
    >>> from costeer_lab.experiment._spec import ExperimentSpec
    >>> spec = ExperimentSpec.model_validate({"name": "t", "suite": "humaneval",
    ...     "arms": [{"name": "a"}], "start_from": "/no/such/run"})
    >>> check_start_from(spec, pathlib.Path(tempfile.mkdtemp()), resume=True)
    Traceback (most recent call last):
    ...
    costeer_lab.errors.ConfigurationError: start_from '/no/such/run' does not exist; ...
"""

from __future__ import annotations

from pathlib import Path

from costeer_lab.errors import ConfigurationError
from costeer_lab.experiment._spec import ExperimentSpec

__all__ = ["check_start_from"]

_EXPECTED = "expected the --out folder of an earlier run (holding kb/<arm>-seed<s>.db)"


def check_start_from(spec: ExperimentSpec, out_dir: Path, *, resume: bool) -> None:
    """Refuse a ``start_from`` that is missing, a file, has no ``kb/`` folder, or lacks the
    store of an (arm, seed) this run still has to start.

    Raises:
        ConfigurationError: naming ``start_from`` and what it lacks.
    """
    if spec.start_from is None:
        return
    source = Path(spec.start_from)
    shown = repr(spec.start_from)
    if not source.exists():
        raise ConfigurationError(f"start_from {shown} does not exist; {_EXPECTED}")
    if not source.is_dir():
        raise ConfigurationError(f"start_from {shown} is a file; {_EXPECTED}")
    kb = source / "kb"
    if not kb.is_dir():
        raise ConfigurationError(f"start_from {shown} holds no kb/ folder; {_EXPECTED}")
    first = spec.stages[0].name if spec.stages else ""
    missing = [
        f"kb/{arm.name}-seed{seed}.db"
        for arm in spec.arms
        for seed in spec.seeds
        if not (resume and (out_dir / "kb" / first / f"{arm.name}-seed{seed}.db").exists())
        and not (kb / f"{arm.name}-seed{seed}.db").is_file()
    ]
    if missing:
        held = sorted(p.name for p in kb.glob("*.db")) or ["no .db file"]
        stages = sorted(p.name for p in kb.iterdir() if p.is_dir())
        hint = f"; its stages' stores are in kb/{{{', '.join(stages)}}}/" if stages else ""
        raise ConfigurationError(
            f"start_from {shown} has no knowledge base {', '.join(missing)} (the arms and seeds "
            f"of this spec); it holds {', '.join(held)}{hint}"
        )
