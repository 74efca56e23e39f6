"""The knowledge-graph explorer and the query playground over a real tiny run's knowledge base,
the static fallbacks of the widgets, and the ``_repr_html_`` summaries of the main objects."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.errors import NotFoundError
from costeer_lab.experiment import load_spec, run_experiment
from costeer_lab.knowledge import open_kb
from costeer_lab.store import BaseStore, open_existing_store
from costeer_lab.suites import load_suite
from costeer_lab.testing import synthetic_results
from costeer_lab.viz import (
    KnowledgeExplorer,
    get_task_knowledge,
    knowledge_explorer,
    knowledge_label,
    list_tasks,
    query_playground,
    results_dashboard,
)

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SPEC = {
    "name": "explorer",
    "suite": "humaneval",
    "suite_options": {"limit": 4},
    "arms": [{"name": "v2", "rag": "v2"}],
    "max_loop": 2,
    "parallelism": {"executor": "serial"},
}


@pytest.fixture(scope="module")
def kb_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("explorer")
    run_experiment(SPEC, out, progress=False)
    return out / "kb" / "v2-seed0.db"


@pytest.fixture()
def store(kb_file: Path) -> Iterator[BaseStore]:
    st = open_existing_store(kb_file)
    yield st
    st.close()


def _sql(kb_file: Path, query: str, *args: str) -> list[tuple[str, ...]]:
    conn = sqlite3.connect(kb_file)
    try:
        return list(conn.execute(query, args))
    finally:
        conn.close()


def test_task_knowledge_matches_the_stored_graph(kb_file: Path, store: BaseStore) -> None:
    tasks = list_tasks(store)
    assert [t.task_id for t in tasks] == [f"humaneval/{i}" for i in range(4)]
    suite = load_suite("humaneval", limit=4)
    assert [t.name for t in tasks] == [suite.task(t.task_id).name for t in tasks]
    for entry in tasks:
        k = get_task_knowledge(store, entry.task_id)
        traces = _sql(
            kb_file,
            "SELECT i.id, n.attrs FROM edges e JOIN nodes n ON n.seq = e.src "
            "JOIN ids i ON i.seq = n.seq WHERE e.dst = (SELECT seq FROM ids WHERE id = ?) "
            "AND n.kind = 'task_trace' ORDER BY i.id",
            entry.node_id,
        )
        assert [t.node_id for t in k.traces] == [r[0] for r in traces]
        for t, (_, attrs) in zip(k.traces, traces, strict=True):
            a = json.loads(attrs)
            assert t.code == a["workspace"]["files"]["main.py"]
            assert t.success is bool(a["feedback"]["final_decision"])
        comps = _sql(
            kb_file,
            "SELECT n.content FROM edges e JOIN nodes n ON n.seq = e.dst "
            "WHERE e.src = (SELECT seq FROM ids WHERE id = ?) AND n.kind = 'component' "
            "ORDER BY n.content",
            entry.node_id,
        )
        assert list(k.components) == [c[0] for c in comps] and k.components
        hit = {e for t in k.traces for e in t.errors}
        assert set(k.errors) == hit
    # the seed (train) task carries its reference solution as the successful implementation
    train = suite.split("train")[0]
    assert (
        get_task_knowledge(store, train).success_code == suite.ground_truth(train).files["main.py"]
    )
    assert any(get_task_knowledge(store, t.task_id).traces for t in tasks)


def test_unknown_task_names_the_known_ones(store: BaseStore) -> None:
    with pytest.raises(NotFoundError, match=r"no task 'humaneval/9'.*'humaneval/0'"):
        get_task_knowledge(store, "humaneval/9")


def test_labels_name_the_task_and_kind(kb_file: Path, store: BaseStore) -> None:
    rows = _sql(kb_file, "SELECT i.id, kind, attrs FROM nodes n JOIN ids i USING (seq)")
    names = {t.node_id: t.name for t in list_tasks(store)}
    for nid, kind, attrs in rows:
        label = knowledge_label(store, nid)
        assert "task_description:" not in label and len(label) < 80
        if kind == "task_description":
            assert label == f"{names[nid]} · task"
        if kind == "task_trace":
            assert label == f"{names[json.loads(attrs)['td']]} · attempt"
        if kind == "error":
            assert label.startswith("error: ")
    assert knowledge_label(store, "seed:humaneval/0") == "seed:humaneval/0"


def test_explorer_follows_the_dropdown_and_saves_a_fallback(store: BaseStore) -> None:
    ex = knowledge_explorer(store)
    assert isinstance(ex, KnowledgeExplorer)
    assert [v for _, v in ex.task.options] == [t.task_id for t in list_tasks(store)]
    for _, tid in ex.task.options:
        ex.task.value = tid
        k = get_task_knowledge(store, tid)
        assert f"({tid})" in ex.detail.value
        assert ex.detail.value.count("Attempt trace") == len(k.traces)
        assert ("Successful implementation" in ex.detail.value) is (k.success_code is not None)
        bundle = ex._repr_mimebundle_()
        assert WIDGET_MIME in bundle and ex.detail.value in bundle["text/html"]
        assert bundle["text/plain"] == "<KnowledgeExplorer: run the notebook to interact>"


def test_playground_shows_each_query_kind_with_scores(store: BaseStore) -> None:
    pg = query_playground(store, "", k=2)
    assert "Type a query" in pg.results.value
    assert set(pg.kinds) == {"task_description", "component", "error"}
    pg.text.value = "TypeError: f() missing 1 required positional argument: 'x'"
    pg.button.click()
    for kind in pg.kinds:
        assert f"<h5 style='margin:6px 0'>{kind} (" in pg.results.value
    assert pg.results.value.count("<tr><td>0.") + pg.results.value.count("<tr><td>-0.") >= 3
    assert "error: TypeError" in pg.results.value
    assert pg.results.value in pg._repr_mimebundle_()["text/html"]


def test_playground_on_a_store_without_vectors(tmp_path: Path) -> None:
    out = tmp_path / "none"
    run_experiment({**SPEC, "arms": [{"name": "n"}], "max_loop": 1}, out, progress=False)
    pg = query_playground(out / "kb" / "n-seed0.db", "anything")
    assert pg.kinds == [] and "no embedded knowledge" in pg.results.value


def test_dashboard_saves_its_plot_and_summary_as_html() -> None:
    board = results_dashboard(synthetic_results(n_seeds=1, n_tasks=3), n_boot=20)
    bundle = board._repr_mimebundle_()
    assert WIDGET_MIME in bundle
    assert "data:image/png;base64," in bundle["text/html"] and "<table" in bundle["text/html"]
    assert "ResultsDashboard(children" not in bundle["text/plain"]


def test_main_objects_have_html_summaries(store: BaseStore, kb_file: Path) -> None:
    suite = load_suite("humaneval", limit=4)
    html_suite = suite._repr_html_()
    assert "Suite humaneval" in html_suite and "train (" in html_suite
    assert html_suite.count("<tr><td>humaneval/") == 4
    spec_html = load_spec(SPEC)._repr_html_()
    assert "Experiment spec explorer" in spec_html and "1 arm(s) × 1 seed(s)" in spec_html
    kb = open_kb(store=store, version="v2", embedder="hashing")
    kb_html = kb._repr_html_()
    n = _sql(kb_file, "SELECT count(*) FROM nodes WHERE kind = 'component'")[0][0]
    assert f"<th style='text-align:left'>nodes.component</th><td style='text-align:left'>{n}<" in (
        kb_html
    )
