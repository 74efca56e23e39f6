"""Issue 28: a report a newcomer can read — provenance, a table of contents whose links resolve,
knowledge items named by their task (not a hash), per-task outcomes, and a visible warning when
an arm sits at a floor (0 %) or a ceiling (100 %)."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from costeer_lab import __version__
from costeer_lab._provenance import machine_summary
from costeer_lab.experiment import load_results, run_experiment
from costeer_lab.testing import synthetic_results
from costeer_lab.viz import REPORT_SECTIONS, build_report, report_experiment
from costeer_lab.viz._provenance import git_commit

HASH_ID = re.compile(r"\b[a-z_]+:[0-9a-f]{64}\b")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real staged run: no knowledge, V1 and V2 over two held-out factor families."""
    tmp = tmp_path_factory.mktemp("newcomer")
    options = {"n_instruments": 8, "n_days": 80, "holdout_families": ["STD", "MIN"]}
    spec = {
        "name": "newcomer-demo",
        "suite": "alpha158",
        "suite_options": {**options, "cache_dir": str(tmp / "cache")},
        "seed_knowledge": {"split": "train"},
        "arms": [
            {"name": "no_knowledge", "rag": "none"},
            {"name": "rag_v1", "rag": "v1"},
            {"name": "rag_v2", "rag": "v2"},
        ],
        "stages": [
            {"name": "learn", "tasks": {"split": "test", "match": "^alpha158/(STD|MIN)10$"}},
            {"name": "transfer", "tasks": {"split": "test", "match": "^alpha158/(STD|MIN)60$"}},
        ],
        "seeds": [0, 1],
        "max_loop": 2,
        "parallelism": {"executor": "serial"},
    }
    out = tmp / "run"
    run_experiment(spec, out, progress=False)
    report_experiment(out)
    return out


def _page(run: Path) -> str:
    return (run / "report.html").read_text(encoding="utf-8")


def _cells(page: str, section_id: str) -> list[list[str]]:
    """The rows of the first table in a section, as lists of unescaped cell texts."""
    part = page.split(f'<section id="{section_id}">')[1].split("</section>")[0]
    table = part.split("<tbody>")[1].split("</tbody>")[0]
    return [
        [html.unescape(c.strip()) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)
    ]


def test_provenance_names_the_code_the_run_the_report_and_the_machine(run: Path) -> None:
    page = _page(run)
    prov = page.split('<section id="provenance">')[1].split("</section>")[0]
    rows = dict(re.findall(r"<tr><th>([^<]+)</th><td>([^<]*)</td></tr>", prov))
    assert rows["costeer_lab"] == __version__
    assert rows["code commit"] == git_commit()
    top = Path(__file__).resolve().parents[2]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=top, capture_output=True, text=True)
    if head.returncode == 0:  # the tests run in a checkout: its commit is shown
        assert rows["code commit"].split()[0] == head.stdout.strip()
    assert "spec.json written" in rows["run made"] and "results written" in rows["run made"]
    # the code and machine the run recorded itself (settings.json), not only the report's
    recorded = json.loads((run / "settings.json").read_text(encoding="utf-8"))["run"]
    assert recorded["code_commit"] == git_commit() and recorded["machine"] == machine_summary()
    assert rows["run made with"] == f"costeer_lab {__version__}, commit {git_commit()}"
    assert rows["run made on"] == machine_summary()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", rows["report made"])
    assert "Python " in rows["report made on"] and "CPU(s)" in rows["report made on"]
    assert rows["spec"] == "newcomer-demo" and rows["seeds"] == "0, 1"
    # the provenance is the first section, before any result
    assert page.index('<section id="provenance">') < page.index('<section id="summary">')


def test_git_commit_never_fails_outside_a_checkout(tmp_path: Path) -> None:
    pkg = tmp_path / "costeer_lab"
    pkg.mkdir()
    assert git_commit(pkg) == "not a git checkout"


def test_every_contents_link_resolves_to_a_section(run: Path) -> None:
    page = _page(run)
    toc = page.split('<nav class="toc">')[1].split("</nav>")[0]
    links = re.findall(r'<a href="#([^"]+)">([^<]+)</a>', toc)
    ids = re.findall(r'<section id="([^"]+)"><h2>([^<]+)</h2>', page)
    assert [(a, html.unescape(t)) for a, t in links] == [(i, html.unescape(h)) for i, h in ids]
    assert len(set(ids)) == len(ids)
    assert [html.unescape(h) for _, h in ids][: len(REPORT_SECTIONS) - 1] == list(
        REPORT_SECTIONS[:-1]
    )


def test_knowledge_items_are_named_by_their_task_not_a_hash(run: Path) -> None:
    page = _page(run)
    results = load_results(run)
    used = {i for ids in results["used_knowledge_ids"] for i in json.loads(ids)}
    retrieved = {
        item["id"] for text in results["retrieved"] for items in json.loads(text).values()
        for item in items
    }  # fmt: skip
    assert any(HASH_ID.fullmatch(i) for i in used | retrieved)  # the run did use graph nodes
    text = re.sub(r'src="data:[^"]+"', "", page)  # the images' base64 is no id
    assert HASH_ID.findall(text) == []
    usage = page.split('<section id="knowledge-usage">')[1].split("</section>")[0]
    assert re.search(r"(success of|trace of) alpha158/\w+ \([a-z_]+:[0-9a-f]{6}…\)", usage)


def test_per_task_outcomes_match_the_results(run: Path) -> None:
    results = load_results(run)
    rows = _cells(_page(run), "per-task-outcomes")
    arms = sorted(results["arm"].unique())
    expected = []
    for (stage, task), g in results.groupby(["stage", "task_id"], sort=True):
        row = [stage, task]
        for arm in arms:
            per_seed = g[g["arm"] == arm].groupby("seed")
            firsts = [s["attempt"][s["success"]].min() for _, s in per_seed]
            solved = [f for f in firsts if not pd.isna(f)]
            n = len(firsts)
            mean = sum(solved) / len(solved) if solved else 0
            row.append(f"{len(solved)}/{n} (att {mean:.3g})" if solved else f"0/{n}")
        expected.append(row)
    assert rows == expected
    assert len(rows) == 4 and {r[0] for r in rows} == {"learn", "transfer"}


def _outcome_results(rates: dict[str, float]) -> pd.DataFrame:
    return synthetic_results(arms=rates, n_seeds=2, n_tasks=4, max_attempts=2, seed=3)


def _warning(page: str) -> str:
    found = re.findall(r'<div class="warn" role="alert">(.*?)</div>', page, re.S)
    return found[0] if found else ""


@pytest.mark.parametrize(
    ("rates", "flagged"),
    [
        ({"no_knowledge": 0.0, "rag": 0.5}, {"no_knowledge": "a floor"}),
        ({"no_knowledge": 0.5, "rag": 1.0}, {"rag": "a ceiling"}),
        ({"no_knowledge": 0.0, "rag": 1.0}, {"no_knowledge": "a floor", "rag": "a ceiling"}),
    ],
)
def test_an_arm_at_a_floor_or_a_ceiling_is_flagged_at_the_top(
    rates: dict[str, float], flagged: dict[str, str], tmp_path: Path
) -> None:
    results = _outcome_results(rates)
    solved = results.groupby(["arm", "seed", "task_id"])["success"].any().groupby("arm").mean()
    assert {a for a, v in solved.items() if v in (0.0, 1.0)} == set(flagged)  # as built
    page = build_report(results, tmp_path / "r.html", title="t", n_boot=20).read_text()
    box = _warning(page)
    named = dict(re.findall(r"<li><b>([^<]+)</b>: \d+ % of its \(seed, task\) pairs solved — "
                            r"(a floor|a ceiling)</li>", box))  # fmt: skip
    assert named == flagged
    assert page.index('<div class="warn"') < page.index('<nav class="toc">')


def test_no_warning_when_every_arm_is_between_the_limits(tmp_path: Path) -> None:
    results = _outcome_results({"no_knowledge": 0.4, "rag": 0.6})
    solved = results.groupby(["arm", "seed", "task_id"])["success"].any().groupby("arm").mean()
    assert all(0.0 < v < 1.0 for v in solved)
    page = build_report(results, tmp_path / "r.html", title="t", n_boot=20).read_text()
    assert _warning(page) == "" and "Floor or ceiling" not in page


def test_a_staged_run_names_the_stage_an_arm_is_at_a_limit_in(run: Path, tmp_path: Path) -> None:
    results = load_results(run)
    # make rag_v1 solve every task of the transfer stage (at attempt 1 of each seed)
    transfer = (results["arm"] == "rag_v1") & (results["stage"] == "transfer")
    edited = results[~transfer | (results["attempt"] == 1)].copy()
    edited.loc[(edited["arm"] == "rag_v1") & (edited["stage"] == "transfer"), "success"] = True
    page = build_report(edited, tmp_path / "r.html", title="t", n_boot=20).read_text()
    assert "<li><b>rag_v1</b> (stage transfer): 100 %" in _warning(page)
