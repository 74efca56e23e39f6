"""Per-task outcomes of every arm, and the floor/ceiling check of the report.

A task is *solved* in a seed when one of its attempts succeeded (a solved task is not attempted
again, so its first success is its last attempt). :func:`task_outcomes` gives one row per
(stage, task, arm); :func:`task_outcome_table` the report's wide form, one row per task and one
cell per arm such as ``"2/2 (att 1.5)"`` (solved in 2 of 2 seeds, on average at attempt 1.5).

An arm whose share of solved (seed, task) pairs is exactly 0 or 1 sits at a floor or a ceiling:
it cannot move further, so a contrast involving it says little about the treatment.
:func:`floor_ceiling` finds them, :func:`floor_ceiling_html` words the warning.

Example:
    >>> import pandas as pd
    >>> r = pd.DataFrame({"arm": ["a", "a", "b"], "seed": [0, 0, 0], "task_id": ["t"] * 3,
    ...                   "attempt": [1, 2, 1], "success": [False, True, False]})
    >>> task_outcome_table(r).to_dict("records")
    [{'task': 't', 'a': '1/1 (att 2)', 'b': '0/1'}]
    >>> floor_ceiling(r)
    [('a', '', 1.0), ('b', '', 0.0)]
"""

from __future__ import annotations

import html

import pandas as pd

__all__ = ["floor_ceiling", "floor_ceiling_html", "task_outcome_table", "task_outcomes"]


def _staged(results: pd.DataFrame) -> bool:
    return "stage" in results and results["stage"].astype(str).nunique() > 1


def task_outcomes(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (stage, task, arm): ``seeds`` that attempted the task, ``solved`` seeds and
    ``mean_attempt`` (mean first successful attempt over the solved seeds; NaN if none).

    ``stage`` is ``""`` for results without stages. Rows are in the order stage, task, arm.
    """
    r = results.assign(stage=results["stage"].astype(str) if "stage" in results else "")
    first = (
        r[r["success"].astype(bool)]
        .groupby(["stage", "task_id", "arm", "seed"])["attempt"]
        .min()
        .rename("first")
    )
    per_seed = (
        r.groupby(["stage", "task_id", "arm", "seed"]).size().rename("rows").to_frame().join(first)
    )
    out = per_seed.groupby(["stage", "task_id", "arm"]).agg(
        seeds=("rows", "size"), solved=("first", "count"), mean_attempt=("first", "mean")
    )
    return out.reset_index().astype({"seeds": "int64", "solved": "int64"})


def _cell(seeds: int, solved: int, mean_attempt: float) -> str:
    return f"{solved}/{seeds} (att {mean_attempt:.3g})" if solved else f"0/{seeds}"


def task_outcome_table(results: pd.DataFrame) -> pd.DataFrame:
    """The wide form: columns ``stage`` (only with several stages), ``task``, then one column
    per arm (in sorted order) holding ``"solved/seeds (att mean)"``, ``"0/seeds"``, or ``"–"``
    when the arm never attempted the task."""
    long = task_outcomes(results)
    arms = sorted(str(a) for a in results["arm"].unique())
    long = long.assign(
        cell=[_cell(*v) for v in long[["seeds", "solved", "mean_attempt"]].itertuples(False)]
    )
    wide = long.pivot(index=["stage", "task_id"], columns="arm", values="cell")
    wide = wide.reindex(columns=arms).fillna("–").reset_index()
    wide = wide.rename(columns={"task_id": "task"}).rename_axis(columns=None)
    if not _staged(results):
        wide = wide.drop(columns="stage")
    return wide


def floor_ceiling(results: pd.DataFrame) -> list[tuple[str, str, float]]:
    """``(arm, stage, rate)`` for every arm whose share of solved (seed, task) pairs is 0 or 1:
    over the whole run (stage ``""``), and per stage for a run with several stages (a stage is
    listed only when the whole run is not already at that limit)."""
    long = task_outcomes(results)
    found: list[tuple[str, str, float]] = []
    overall = long.groupby("arm")[["solved", "seeds"]].sum()
    for arm in sorted(overall.index):
        rate = overall.loc[arm, "solved"] / overall.loc[arm, "seeds"]
        if rate in (0.0, 1.0):
            found.append((str(arm), "", float(rate)))
    if _staged(results):
        at_limit = {a for a, _, _ in found}
        per_stage = long.groupby(["stage", "arm"], sort=False)[["solved", "seeds"]].sum()
        for stage, arm, solved, seeds in per_stage.reset_index().itertuples(index=False):
            rate = solved / seeds
            if rate in (0.0, 1.0) and arm not in at_limit:
                found.append((str(arm), str(stage), float(rate)))
    return found


def floor_ceiling_html(results: pd.DataFrame) -> str:
    """A warning box naming the arms at a floor (0 %) or a ceiling (100 %); ``""`` if none."""
    found = floor_ceiling(results)
    if not found:
        return ""
    items = "".join(
        f"<li><b>{html.escape(arm)}</b>{f' (stage {html.escape(stage)})' if stage else ''}: "
        f"{100 * rate:.0f} % of its (seed, task) pairs solved — "
        f"{'a ceiling' if rate == 1.0 else 'a floor'}</li>"
        for arm, stage, rate in found
    )
    return (
        '<div class="warn" role="alert"><p><b>Floor or ceiling:</b> these arms cannot move '
        "further, so contrasts involving them cannot be told apart (two arms at the same limit "
        "look equal whatever their treatment; a difference against one is bounded by the "
        "limit, not measured). Harder or easier tasks, or another attempt budget, make the "
        f"comparison informative.</p><ul>{items}</ul></div>"
    )
