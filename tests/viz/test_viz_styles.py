"""Curves of arms with identical results stay distinguishable (marker, line style, dodge); the
report's wide tables scroll inside the page."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from costeer_lab.testing import synthetic_results
from costeer_lab.viz import arm_styles, build_report, dodge, plot_kb_growth, plot_success_curve


def _twin_arms() -> pd.DataFrame:
    one = synthetic_results(arms={"a": 0.5}, n_seeds=1, n_tasks=4)
    two = one.assign(arm="b", run_id=one["run_id"].str.replace("a-", "b-"))
    return pd.concat([one, two], ignore_index=True)


def test_identical_curves_do_not_hide_each_other() -> None:
    results = _twin_arms()
    for plot in (plot_success_curve, plot_kb_growth):
        ax = plot(results, ax=Figure().subplots())
        lines = [
            ln
            for ln in ax.get_lines()
            if ln.get_label() in ("a", "b") or "seed" in str(ln.get_label())
        ]
        assert len(lines) == 2
        a, b = lines
        xa, xb = np.asarray(a.get_xdata(), float), np.asarray(b.get_xdata(), float)
        ya, yb = np.asarray(a.get_ydata(), float), np.asarray(b.get_ydata(), float)
        assert ya.tolist() == yb.tolist()  # the same numbers …
        assert a.get_marker() != b.get_marker() and a.get_linestyle() != b.get_linestyle()
        assert bool(((xb - xa) > 0.1).all())


def test_styles_and_offsets_are_stable_and_centred() -> None:
    assert arm_styles(["b", "a"]) == arm_styles(["a", "b"])
    assert len(set(arm_styles(list("abcd")).values())) == 4
    shift = dodge(list("abcd"))
    assert abs(sum(shift.values())) < 1e-9 and max(shift.values()) - min(shift.values()) < 0.25
    assert dodge(["only"]) == {"only": 0.0}


def test_report_tables_scroll_inside_the_page(tmp_path: Path) -> None:
    page = build_report(_twin_arms(), tmp_path / "r.html", title="t", n_boot=20).read_text(
        encoding="utf-8"
    )
    assert page.count("<table") == page.count('<div class="tbl"><table')
    assert ".tbl{max-width:100%;overflow-x:auto}" in page
