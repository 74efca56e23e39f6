"""The HTML report: one self-contained file with every arm, section, image and the spec."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment import save_results, summary_table
from costeer_lab.testing import synthetic_results
from costeer_lab.viz import REPORT_SECTIONS, build_report

PNG = b"\x89PNG\r\n\x1a\n"
ARMS = {"no_knowledge": 0.3, "rag": 0.5, "rag_v2": 0.6}


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return synthetic_results(arms=ARMS, n_seeds=3, n_tasks=6, max_attempts=3, seed=1)


def test_report_is_self_contained(results: pd.DataFrame, tmp_path: Path) -> None:
    spec = {"name": "demo <spec>", "seeds": [0, 1, 2], "arms": sorted(ARMS)}
    extra = {"Costs by arm": results.groupby("arm", as_index=False)[["cost_usd"]].sum()}
    out = build_report(
        results, tmp_path / "out" / "report.html", title="Demo & test", spec=spec,
        extra_tables=extra, n_boot=200,
    )  # fmt: skip
    assert out == tmp_path / "out" / "report.html" and out.is_file()
    page = out.read_text(encoding="utf-8")
    assert "<title>Demo &amp; test</title>" in page
    for arm in ARMS:
        assert arm in page
    headings = re.findall(r"<h2>([^<]+)</h2>", page)
    assert headings == list(REPORT_SECTIONS)
    images = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([^"]+)">', page)
    assert len(images) == 5
    assert all(base64.b64decode(b, validate=True).startswith(PNG) for b in images)
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page and "<link" not in page
    assert "demo &lt;spec&gt;" in page  # the spec, escaped
    assert "Costs by arm" in page
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # atomic, no temp left


def test_differences_section_states_measured_numbers(
    results: pd.DataFrame, tmp_path: Path
) -> None:
    page = build_report(results, tmp_path / "r.html", title="t", n_boot=200).read_text()
    section = page.split("<h2>Differences between arms</h2>")[1].split("</section>")[0]
    s = summary_table(results, n_boot=200).set_index("arm")
    for arm in ("rag", "rag_v2"):
        pct = f"{100 * s['final_success'].astype(float)[arm]:.1f}%"
        lift = f"{100 * s['lift'].astype(float)[arm]:+.1f} pp"
        line = next(li for li in section.split("<li>") if li.startswith(f"&#x27;{arm}&#x27;"))
        assert pct in line and lift in line and "paired lift over 3 seed(s)" in line
        assert ("excludes zero" in line) != ("includes zero" in line)
    assert "Reference arm: &#x27;no_knowledge&#x27;" in section


def test_report_from_a_results_directory(results: pd.DataFrame, tmp_path: Path) -> None:
    save_results(results, tmp_path / "run")
    a = build_report(tmp_path / "run", tmp_path / "a.html", title="t", n_boot=100)
    b = build_report(results, tmp_path / "b.html", title="t", n_boot=100)
    # same input, same seed: identical file but for the provenance (the run's and report's dates)
    prov = re.compile(r'<section id="provenance">.*?</section>', re.S)
    pa, pb = a.read_text(), b.read_text()
    assert len(prov.findall(pa)) == len(prov.findall(pb)) == 1
    assert prov.sub("", pa) == prov.sub("", pb)


def test_report_without_baseline_arm(results: pd.DataFrame, tmp_path: Path) -> None:
    only = results[results["arm"] != "no_knowledge"]
    page = build_report(only, tmp_path / "r.html", title="t", n_boot=100).read_text()
    assert "Baseline arm &#x27;no_knowledge&#x27; is not present." in page
    assert "Reference arm: &#x27;rag&#x27;" in page
    assert "Specification and seeds" in page and "(none given)" in page


def test_report_rejects_bad_extra_tables(results: pd.DataFrame, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="extra_tables"):
        build_report(results, tmp_path / "r.html", title="t", extra_tables={"x": [1]})  # type: ignore[dict-item]
    assert not (tmp_path / "r.html").exists()


def test_integrity_section_shows_weak_isolation_and_infrastructure_errors(
    results: pd.DataFrame, tmp_path: Path
) -> None:
    clean = build_report(results, tmp_path / "clean.html", title="t").read_text()
    assert "No infrastructure errors." in clean and "Warning:" not in clean
    bad = results.copy()
    bad.loc[bad.index[0], "isolation"] = "none"
    bad.loc[bad.index[1], "infra_error"] = "the reference implementation failed (exit code 1)"
    page = build_report(bad, tmp_path / "bad.html", title="t").read_text()
    assert "1 attempt(s) ran without full isolation (none)" in page
    assert "1 attempt(s) were not evaluated" in page
    assert "the reference implementation failed (exit code 1)" in page


def test_contrasts_section_shows_the_paired_contrasts_and_the_power(
    results: pd.DataFrame, tmp_path: Path
) -> None:
    from costeer_lab.experiment import contrasts

    spec = {"name": "s", "arms": [{"name": a, "rag": "none" if a == "no_knowledge" else "v2"}
                                  for a in ARMS]}  # fmt: skip
    page = build_report(results, tmp_path / "r.html", title="t", spec=spec, n_boot=200)
    section = page.read_text().split("<h2>Paired contrasts and power</h2>")[1]
    section = re.sub(r">\s+<", "><", section.split("</section>")[0])
    # the spec's kinds: ``rag_v2`` is the V2 reference, ``rag`` (V2 by the spec) its ablation
    table = contrasts(results, [("rag_v2", "no_knowledge"), ("rag", "rag_v2")], n_boot=200)
    for _, row in table.iterrows():
        cells = f"<td>{row['arm']}</td><td>{row['reference']}</td><td>{row['difference']:.4g}"
        assert cells in section
    assert "Power of this design" in section and "tasks_needed" in section


def test_a_report_replaces_only_a_report(tmp_path: Path) -> None:
    """Issue 28: an output never replaces a run's data or a spec; a report replaces a report."""
    from costeer_lab.errors import ConfigurationError
    from costeer_lab.experiment import save_results
    from costeer_lab.testing import example_results
    from costeer_lab.viz import report_experiment
    from costeer_lab.viz._report import is_report

    run = tmp_path / "run"
    results = save_results(example_results(), run)
    data = results.read_bytes()
    with pytest.raises(ConfigurationError, match="is not a costeer_lab report"):
        report_experiment(run, out_path=results)
    assert results.read_bytes() == data  # the run's data is untouched
    first = report_experiment(run)
    assert is_report(first)
    assert report_experiment(run) == first  # its own report is replaced
    mine = tmp_path / "mine.html"
    mine.write_text("<html>my notes</html>")
    with pytest.raises(ConfigurationError, match="--force"):
        report_experiment(run, out_path=mine)
    assert mine.read_text() == "<html>my notes</html>"
    assert is_report(report_experiment(run, out_path=mine, force=True))
