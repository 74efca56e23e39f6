"""One self-contained HTML report of an experiment: metrics tables, plots, spec and seeds.

The page opens with a warning when an arm sits at a floor (0 %) or a ceiling (100 %), a table
of contents, and the provenance (code version and commit, when the run and the report were
made, the machine, spec and seeds); knowledge items are named by the task they belong to.

Plots are embedded as base64 PNG, tables as HTML; the page has no scripts and references no
external URL, so it can be mailed or archived as a single file.

Example:
    >>> import tempfile, pathlib
    >>> from costeer_lab.testing import example_results
    >>> from costeer_lab.viz import build_report
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "report.html"
    >>> build_report(example_results(), out, title="demo", n_boot=50).name
    'report.html'
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from costeer_lab._fs import atomic_write_bytes
from costeer_lab._redact import redact_url
from costeer_lab.errors import ConfigurationError, InvalidInputError
from costeer_lab.experiment import (
    arm_agreement,
    arm_differences,
    attempts_to_success,
    calibrated_hit_rate,
    compare_arms,
    contrasts,
    default_pairs,
    harmful_knowledge,
    hit_rate,
    knowledge_usage,
    load_results,
    power_table,
    read_start_snapshots,
    retrieval_success,
    success_lift,
    success_linked,
    summary_table,
    validate_results,
)
from costeer_lab.viz._attempts import plot_attempts
from costeer_lab.viz._benchmark_section import BENCHMARK_SECTION, benchmark_section
from costeer_lab.viz._hit_rate import plot_hit_rate
from costeer_lab.viz._item_labels import item_label, knowledge_item_labels
from costeer_lab.viz._kb_growth import plot_kb_growth
from costeer_lab.viz._knowledge_usage import plot_knowledge_usage
from costeer_lab.viz._outcomes import floor_ceiling_html, task_outcome_table
from costeer_lab.viz._provenance import provenance_html, report_provenance
from costeer_lab.viz._report_layout import contents, section
from costeer_lab.viz._spec_warnings import spec_warnings
from costeer_lab.viz._success_curve import plot_success_curve

__all__ = ["REPORT_SECTIONS", "build_report"]

#: Section headings of the report, in order (the last appears only with ``extra_tables``).
REPORT_SECTIONS = (
    "Provenance",
    "Summary",
    "Per-task outcomes",
    "Differences between arms",
    "Success per attempt",
    "Attempts to success",
    "Retrieval",
    "Retrieval linked to success",
    "Arm comparisons",
    "Paired contrasts and power",
    "Stages and knowledge carry-over",
    "Harmful knowledge",
    "Knowledge usage",
    "Knowledge-base growth",
    "Evaluation integrity",
    "Specification and seeds",
    "Additional tables",
)

_STYLE = """body{font-family:sans-serif;margin:2em auto;max-width:75em;color:#222;padding:0 1em}
table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;
padding:2px 6px;font-size:88%;text-align:right}th{background:#f3f3f3}img{max-width:100%}
pre{background:#f6f6f6;padding:0.8em;overflow-x:auto}.note{color:#555;font-size:90%}
.tbl{max-width:100%;overflow-x:auto}.tbl table{font-size:82%}.tbl th{position:sticky;top:0}
.warn{border:2px solid #c62828;background:#fdecea;color:#611a15;padding:0.3em 1em;margin:1em 0}
.toc{background:#f6f6f6;padding:0.4em 1em;margin:1em 0}.toc ol{columns:2;margin:0.3em 0}
table.prov th,table.prov td{text-align:left}summary{cursor:pointer;color:#1a4f8b}"""


def _table(df: pd.DataFrame) -> str:
    if df.empty:
        return '<p class="note">(no rows)</p>'
    table = df.to_html(index=False, border=0, float_format=lambda x: f"{x:.4g}", na_rep="–")
    return f'<div class="tbl">{table}</div>'  # wide tables scroll inside the page


def _plot(draw: Callable[..., Any], results: pd.DataFrame, alt: str, **kw: Any) -> str:
    from matplotlib.figure import Figure

    from costeer_lab.viz._common import figure_png, png_data_uri

    fig = Figure(figsize=(7.5, 4.2), layout="constrained")
    draw(results, ax=fig.subplots(), **kw)
    return f'<img alt="{html.escape(alt)}" src="{png_data_uri(figure_png(fig))}">'


def _integrity_block(r: pd.DataFrame) -> str:
    """How every attempt was isolated and what its coder was told, and the attempts that were
    not evaluated because a reference failed (infrastructure errors of the experiment)."""
    cols = [c for c in ("isolation", "feedback_detail") if c in r]
    if not cols or not len(r):
        return '<p class="note">No attempts.</p>'
    counts = r.groupby(["arm", *cols]).size().rename("attempts").reset_index()
    weak = r[~r["isolation"].isin(["full", ""])] if "isolation" in r else r.iloc[:0]
    infra = r[r["infra_error"] != ""] if "infra_error" in r else r.iloc[:0]
    notes = []
    if len(weak):
        notes.append(
            f"<p><b>Warning:</b> {len(weak)} attempt(s) ran without full isolation "
            f"({html.escape(', '.join(sorted(set(weak['isolation']))))}); their success "
            "figures are only as trustworthy as that isolation.</p>"
        )
    if len(infra):
        notes.append(
            f"<p><b>{len(infra)} attempt(s) were not evaluated</b> because a reference "
            "implementation failed (an error of the experiment, not of the code):</p>"
            + _table(
                infra.groupby(["arm", "task_id", "infra_error"])
                .size()
                .rename("attempts")
                .reset_index()
            )
        )
    else:
        notes.append('<p class="note">No infrastructure errors.</p>')
    return _table(counts) + "".join(notes)


def _memory_block(r: pd.DataFrame) -> str:
    """Hit rate and success-when-used of the arms that queried the pattern memory ("" if none)."""
    from costeer_lab.experiment import memory_metrics

    table = memory_metrics(r)
    if table.empty:
        return ""
    return (
        "<h3>Pattern memory: hit rate and success when used</h3>"
        + _table(table)
        + '<p class="note">A hit: the memory returned a pattern above its threshold; used: the '
        "coder used a memory pattern or failure fix.</p>"
    )


def _started_from(starts: list[dict[str, Any]], arm: str) -> str:
    """Where the arm's stages with ``start_from`` started: snapshot, store, when taken."""
    mine = [s for s in starts if str(s.get("arm")) == arm]
    return "".join(
        f"; stage {html.escape(str(s.get('stage')))} seed {html.escape(str(s.get('seed')))} "
        f"started from snapshot <b>{html.escape(str(s.get('snapshot')))}</b> of store "
        f"{html.escape(redact_url(str(s.get('store'))))} "
        f"(taken {html.escape(str(s.get('taken_at')))})"
        for s in mine
    )


def _spec_block(
    spec: Mapping[str, Any] | None, r: pd.DataFrame, starts: list[dict[str, Any]] | None = None
) -> str:
    seeds = r.groupby("arm")["seed"].unique() if len(r) else pd.Series(dtype=object)
    runs = r.groupby("arm")["run_id"].unique() if len(r) else pd.Series(dtype=object)
    items = "".join(
        f"<li><b>{html.escape(str(arm))}</b>: seeds "
        f"{html.escape(', '.join(str(s) for s in sorted(seeds[arm])))}; run ids "
        f"{html.escape(', '.join(sorted(str(x) for x in runs[arm])))}"
        f"{_started_from(starts or [], str(arm))}</li>"
        for arm in seeds.index
    )
    text = json.dumps(spec, indent=2, sort_keys=True, default=str) if spec else "(none given)"
    return f"<h3>Seeds per arm</h3><ul>{items}</ul><h3>Spec</h3><pre>{html.escape(text)}</pre>"


def _linked_block(r: pd.DataFrame, n_boot: int, ci: float, seed: int, embedder: str | None) -> str:
    cal = calibrated_hit_rate(r, embedder=embedder)
    linked = success_linked(r, embedder=embedder, n_boot=n_boot, ci=ci, seed=seed)
    return (
        '<p class="note">Per-kind definitions: a query could return something when it ran '
        "(the error query from attempt 2 and former traces from attempt 3, both only after an "
        "attempt that failed with an error fingerprint); it <i>returned</i> something when its "
        "best item reaches the kind's score threshold (shown) and it <i>hit</i> when an item "
        "it returned is relevant to the task by ground truth (similar/component: a shared "
        "operator; error: the same error cause; former trace: an earlier attempt with the "
        "current failure's cause, never that failure itself). The hit rate counts only queries "
        "whose relevance was recorded. The success-linked table compares the success of "
        "eligible attempts where the kind hit (or the coder used one of its items) with those "
        "where it did not: an association, not an effect; ablation arms measure effects.</p>"
        "<h3>Returned and hit rate per query kind</h3>"
        + _table(cal)
        + "<h3>Success linked to retrieval</h3>"
        + _table(linked)
    )


def _comparisons(r: pd.DataFrame, pairs: list[tuple[str, str]], **boot: Any) -> str:
    if not pairs:
        return '<p class="note">No pair of knowledge arms to compare.</p>'
    out = []
    for arm, ref in pairs:
        sentence = compare_arms(r, arm, ref, **boot)
        table = _table(arm_agreement(r, arm, ref))
        out.append(f"<p>{html.escape(sentence)}</p>{table}")
    return "".join(out)


def _stages_block(r: pd.DataFrame, baseline: str, embedder: str | None, **boot: Any) -> str:
    if "stage" not in r or r["stage"].nunique() < 2:
        return '<p class="note">One stage: no knowledge carried over.</p>'
    parts = []
    for stage, g in r.groupby("stage", sort=False):
        s = summary_table(g.reset_index(drop=True), baseline=baseline, **boot)
        cols = ["arm", "final_success", "final_success_ci_low", "final_success_ci_high"]
        cols += ["first_try_success", "mean_attempts", "lift", "lift_ci_low", "lift_ci_high"]
        later = g[g["success"] & (g["attempt"] > 1)].groupby("arm").size()
        table = s[cols].assign(solved_after_attempt_1=s["arm"].map(later).fillna(0).astype(int))
        parts.append(f"<h3>Stage {html.escape(str(stage))}</h3>{_table(table)}")
    cal = calibrated_hit_rate(r, embedder=embedder)
    err = cal[cal["query_kind"] == "error"]
    parts.append("<h3>Error query per stage</h3>" + _table(err))
    return "".join(parts)


def _named(table: pd.DataFrame, labels: Mapping[str, str]) -> pd.DataFrame:
    """``table`` with its ``item_id`` column read as what each item stands for."""
    if "item_id" not in table or table.empty:
        return table
    items = [item_label(str(i), labels) for i in table["item_id"]]
    return table.assign(item_id=items).rename(columns={"item_id": "item"})


def _outcomes_block(r: pd.DataFrame) -> str:
    table = task_outcome_table(r)
    note = (
        '<p class="note">Per task and arm: seeds in which the task was solved / seeds that '
        "attempted it, and the mean attempt of the first success over the solved seeds "
        "(&quot;att&quot;); &quot;–&quot;: the arm did not attempt the task.</p>"
    )
    if len(table) <= 15:
        return note + _table(table)
    return (
        f"{note}<details><summary>{len(table)} tasks × {r['arm'].nunique()} arms (show the "
        f"table)</summary>{_table(table)}</details>"
    )


def _harmful_block(found: pd.DataFrame) -> str:
    return (
        '<p class="note">Items the coder <i>used</i> in at least 3 attempts that succeeded '
        "less often than the same tasks' other attempts in the arm (a stratified exact test "
        "per task, one-sided, p &lt; 0.05: tasks that fail with and without the item are no "
        "evidence; items retrieved but not used never count). The <code>demote_harmful</code> "
        "RAG option moves such items behind all others; an arm using it measures the "
        "effect.</p>" + _table(found)
    )


def _rag_kinds(spec: Mapping[str, Any] | None) -> dict[str, str] | None:
    """Arm name -> ``rag`` kind from the spec (``None`` without a spec: kinds by name)."""
    listed = spec.get("arms", []) if spec else []
    kinds = {
        str(a["name"]): str(a.get("rag", "none"))
        for a in listed
        if isinstance(a, Mapping) and "name" in a
    }
    return kinds or None


def _contrasts_block(
    r: pd.DataFrame, spec: Mapping[str, Any] | None, n_boot: int, ci: float, seed: int
) -> str:
    arms = list(dict.fromkeys(str(a) for a in r["arm"]))
    pairs = default_pairs(arms, _rag_kinds(spec))
    if not pairs:
        return '<p class="note">No V2 arm: no default contrast.</p>'
    table = contrasts(r, pairs, n_boot=n_boot, ci=ci, seed=seed)
    power = power_table(r, list(dict.fromkeys(ref for _, ref in pairs)), seed=seed)
    return (
        f'<p class="note">Differences of final success (arm - reference), paired by (seed, '
        f"task); {round(100 * ci)}% interval from resampling tasks (each with all its seeds), "
        f"{n_boot} resamples. <code>arm_only</code> / <code>reference_only</code>: pairs "
        "solved by one arm only. Arms draw common random numbers (the samplers' draws are "
        "keyed by seed, stage, task and attempt, not by the arm).</p>"
        + _table(table)
        + '<h3>Power of this design</h3><p class="note">This run read as a pilot: the '
        "reference's final success and task ICC (correlation of two seeds' outcomes on a "
        "task; 0.5 assumed when one seed leaves it unmeasured), the simulated probability "
        "that a true difference of the size shown is detected with this stage's tasks and "
        "seeds, and the tasks needed for 80% power at these seeds.</p>" + _table(power)
    )


def _pairs(spec: Mapping[str, Any] | None, arms: list[str]) -> list[tuple[str, str]]:
    """(arm, reference) pairs: every V2 arm against the first V1 arm (from the spec), and
    every other V2 arm against the first plain V2 arm (ablations)."""
    listed = spec.get("arms", []) if spec else []
    arm_specs = [a for a in listed if isinstance(a, Mapping) and "name" in a]
    kinds = {str(a["name"]): str(a.get("rag", "none")) for a in arm_specs}
    opts = {str(a["name"]): a.get("rag_options") or {} for a in arm_specs}
    present = [a for a in kinds if a in arms]
    v1 = next((a for a in present if kinds[a] == "v1"), None)
    v2 = [a for a in present if kinds[a] == "v2"]
    pairs = [(a, v1) for a in v2 if v1 is not None]
    if v2:
        base = min(v2, key=lambda a: len(opts[a]))
        pairs += [(a, base) for a in v2 if a != base]
    return pairs


def build_report(
    results: pd.DataFrame | str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    *,
    title: str,
    spec: Mapping[str, Any] | None = None,
    extra_tables: Mapping[str, pd.DataFrame] | None = None,
    baseline: str = "no_knowledge",
    threshold: float = 0.5,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    force: bool = False,
) -> Path:
    """Write one self-contained HTML report and return its path (replaced atomically).

    An existing ``out_path`` is replaced only when it is a report this function wrote (or with
    ``force``): a report never overwrites a run's data or a spec.

    Args:
        results: a results table, or a path accepted by :func:`load_results`.
        out_path: the HTML file to write (parent directories are created).
        title: page title.
        spec: the experiment specification, shown as JSON.
        extra_tables: more tables to append, by heading.
        baseline: reference arm of the lift and of the differences section.
        threshold: score threshold of "returned something" (a hit is a relevant item).
        n_boot, ci, seed: bootstrap parameters of every confidence interval.
        force: replace ``out_path`` even when it is not a report.

    Raises:
        ConfigurationError: ``out_path`` exists and is not a report (without ``force``).
    """
    check_report_target(out_path, force=force)
    r = validate_results(results) if isinstance(results, pd.DataFrame) else load_results(results)
    run_dir = None if isinstance(results, pd.DataFrame) else Path(results)
    if run_dir is not None and not run_dir.is_dir():
        run_dir = run_dir.parent  # a results file: its folder is the run
    if extra_tables is not None and not all(
        isinstance(t, pd.DataFrame) for t in extra_tables.values()
    ):
        raise InvalidInputError("extra_tables must map headings to pandas DataFrames")
    boot: dict[str, Any] = {"n_boot": n_boot, "ci": ci, "seed": seed}
    embedder = str(spec["embedder"]) if spec and isinstance(spec.get("embedder"), str) else None
    summary = summary_table(r, baseline=baseline, threshold=threshold, embedder=embedder, **boot)
    arms = sorted(str(a) for a in r["arm"].unique())
    level = f"{round(100 * ci)}%"
    if baseline in arms:
        lift = _table(success_lift(r, baseline=baseline, **boot))
    else:
        lift = f'<p class="note">Baseline arm {html.escape(repr(baseline))} is not present.</p>'
    differences = "".join(f"<li>{html.escape(s)}</li>" for s in arm_differences(
        summary, baseline=baseline, ci=ci
    ))  # fmt: skip
    usage = knowledge_usage(r).head(25)
    harmful = harmful_knowledge(r)
    labels = knowledge_item_labels(run_dir, [*usage["item_id"], *harmful["item_id"]])
    tick_labels = {i: item_label(i, labels) for i in labels}
    sections = [
        provenance_html(report_provenance(run_dir, spec, r)),
        _table(summary)
        + f'<p class="note">Intervals: {level} percentile bootstrap, {n_boot} resamples, seed '
        f"{seed}; seeds are resampled when an arm has at least two, else tasks.</p>",
        _outcomes_block(r),
        f"<ul>{differences}</ul><h3>Paired lift of final success vs {html.escape(baseline)}"
        f"</h3>{lift}<h3>Success of attempts whose retrieval hit (returned a "
        f"relevant item) vs missed</h3>{_table(retrieval_success(r, threshold=threshold))}",
        _plot(plot_success_curve, r, "success per attempt", **boot),
        _plot(plot_attempts, r, "attempts to success") + _table(attempts_to_success(r)),
        _plot(plot_hit_rate, r, "hit rate (relevant) and returned rate", threshold=threshold)
        + _table(hit_rate(r, threshold=threshold))
        + _memory_block(r),
        _linked_block(r, n_boot, ci, seed, embedder),
        _comparisons(r, _pairs(spec, arms), **boot),
        _contrasts_block(r, spec, n_boot, ci, seed),
        _stages_block(r, baseline, embedder, **boot),
        _harmful_block(_named(harmful, labels)),
        _plot(plot_knowledge_usage, r, "knowledge usage", labels=tick_labels)
        + _table(_named(usage, labels)),
        _plot(plot_kb_growth, r, "knowledge-base growth"),
        _integrity_block(r),
        _spec_block(spec, r, read_start_snapshots(run_dir) if run_dir is not None else None),
    ]
    headings = list(REPORT_SECTIONS[: len(sections)])
    body = "".join(section(h, content) for h, content in zip(headings, sections, strict=True))
    bench = benchmark_section(r)
    if bench:
        body += bench
        headings.append(BENCHMARK_SECTION)
    if extra_tables:
        extra = "".join(
            f"<h3>{html.escape(name)}</h3>{_table(t)}" for name, t in extra_tables.items()
        )
        body += section(REPORT_SECTIONS[-1], extra)
        headings.append(REPORT_SECTIONS[-1])
    warnings = spec_warnings(spec) + floor_ceiling_html(r)
    page = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="generator" content="{REPORT_GENERATOR}">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n<body>"
        f"<h1>{html.escape(title)}</h1><p>Arms: {html.escape(', '.join(arms))}; "
        f"{len(r)} result rows.</p>\n{warnings}{contents(headings)}{body}</body></html>\n"
    )
    return atomic_write_bytes(out_path, page.encode("utf-8"))


#: The ``generator`` meta tag of every report: how an existing file is recognised as one.
REPORT_GENERATOR = "costeer_lab report"


def is_report(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an HTML report written by :func:`build_report` (its first 4 KiB
    carry the generator tag; reports from before the tag: a costeer_lab title).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"; _ = p.write_text("mine")
        >>> is_report(p)
        False
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    return head.startswith("<!DOCTYPE html>") and (
        f'content="{REPORT_GENERATOR}"' in head or "<title>costeer_lab" in head
    )


def check_report_target(out_path: str | os.PathLike[str], *, force: bool = False) -> None:
    """Refuse to write a report over a file that is not a report (a run's results, a spec).

    Raises:
        ConfigurationError: naming the file and how to proceed.
    """
    target = Path(out_path)
    if target.is_dir():
        raise ConfigurationError(
            f"report output {str(target)!r} is a directory; expected an HTML file path such as "
            f"{str(target / 'report.html')!r}"
        )
    if target.exists() and not force and not is_report(target):
        raise ConfigurationError(
            f"report output {str(target)!r} exists and is not a costeer_lab report; refusing to "
            "replace it (choose another --output, or pass --force / force=True)"
        )


def report_experiment(
    directory: str | os.PathLike[str],
    *,
    out_path: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> Path:
    """Write ``report.html`` for a directory produced by
    :func:`costeer_lab.experiment.run_experiment` (its ``spec.json`` is shown in the report).

    Example:
        >>> import tempfile
        >>> from costeer_lab.experiment import save_results
        >>> from costeer_lab.testing import example_results
        >>> d = tempfile.mkdtemp(); _ = save_results(example_results(), d)
        >>> report_experiment(d).name
        'report.html'
    """
    d = Path(directory)
    spec_file = d / "spec.json"
    spec = None
    if spec_file.exists():
        try:
            spec = json.loads(spec_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InvalidInputError(f"{str(spec_file)!r} is unreadable ({exc})") from None
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise InvalidInputError(f"{str(spec_file)!r} is not an experiment spec")
    title = f"costeer_lab experiment: {spec['name']}" if spec else f"costeer_lab: {d.name}"
    target = out_path or d / "report.html"
    check_report_target(target, force=force)
    return build_report(d, target, title=title, spec=spec, force=force)
