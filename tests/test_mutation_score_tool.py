"""``tools/mutation_score.py``: the score table keeps the rows of modules not in a run."""

from __future__ import annotations

import datetime as dt
import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mutation_score", ROOT / "tools/mutation_score.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_score"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_partial_run_updates_its_rows_and_keeps_the_others(tmp_path: Path) -> None:
    tool = _tool()
    old = tool.table(
        {
            "pkg.a": tool.Score(Counter(killed=90, survived=10)),
            "pkg.b": tool.Score(Counter(killed=5, survived=5)),
            "pkg.c": tool.Score(),
        },
        {"pkg.a": 120.0, "pkg.b": 30.0},
        dt.date(2026, 1, 1),
    )
    doc = tmp_path / "doc.md"
    doc.write_text(f"intro\n{tool.START}\n{old}\n{tool.END}\nrest\n")
    kept = tool.parse_rows(tool.read_table(doc))
    assert list(kept) == ["pkg.a", "pkg.b", "pkg.c"]
    assert (kept["pkg.a"].total, kept["pkg.a"].detected, kept["pkg.a"].seconds) == (100, 90, 120)
    assert kept["pkg.c"].seconds is None

    fresh = {"pkg.b": tool.Score(Counter(killed=9, timeout=1, survived=2))}
    new = tool.table(fresh, {"pkg.b": 90.0}, dt.date(2026, 2, 1), keep=kept, children=1)
    tool.write_table(doc, new)
    text = doc.read_text()
    assert text.startswith(f"intro\n{tool.START}\n") and text.endswith(f"{tool.END}\nrest\n")
    lines = tool.read_table(doc).strip().splitlines()
    assert "Rows updated on 2026-02-01: `pkg.b`; the other rows are kept" in lines[0]
    assert lines[4] == kept["pkg.a"].line
    assert lines[5] == "| `pkg.b` | 12 | 10 | 2 | 83.3 % | 1.5 min (1 core) |"
    assert lines[6] == kept["pkg.c"].line
    assert lines[7] == "| **all** | **112** | **100** | **12** | **89.3 %** | **4 min** |"

    again = {"pkg.c": tool.Score(Counter(killed=3))}  # another module later the same day
    same_day = tool.table(again, {}, dt.date(2026, 2, 1), keep=tool.parse_rows(new), earlier=new)
    assert "Rows updated on 2026-02-01: `pkg.b`, `pkg.c`; the other rows" in same_day
    next_day = tool.table(again, {}, dt.date(2026, 2, 2), keep=tool.parse_rows(new), earlier=new)
    assert "Rows updated on 2026-02-02: `pkg.c`; the other rows" in next_day

    everything = {m: tool.Score(Counter(killed=1)) for m in ("pkg.a", "pkg.b", "pkg.c")}
    full = tool.table(everything, {}, dt.date(2026, 3, 1), keep=tool.parse_rows(new))
    assert "Rows updated" not in full and "run time unknown" in full
    assert full.splitlines()[-1] == "| **all** | **3** | **3** | **0** | **100.0 %** | — |"


def test_a_package_row_sums_its_modules_and_names_those_without_a_row(tmp_path: Path) -> None:
    tool = _tool()
    folder = tmp_path / "costeer_lab" / "docs"
    folder.mkdir(parents=True)
    for name in ("__init__", "_a", "_b", "_c"):
        (folder / f"{name}.py").write_text("def f() -> int:\n    return 1\n")
    # a module that only re-exports has nothing to mutate: never "no row yet"
    (folder / "_reexport.py").write_text("from os import sep\n\n__all__ = ['sep']\n")
    scores = {
        "costeer_lab.docs._a": tool.Score(Counter(killed=8, survived=2)),
        "costeer_lab.docs._b": tool.Score(Counter(killed=7, timeout=1, survived=2)),
        "costeer_lab.store._x": tool.Score(Counter(killed=1)),
    }
    rows = {m: tool._row(m, s, None, 1) for m, s in scores.items()}
    assert tool.package_rows(rows, tmp_path) == [
        "| **package `costeer_lab.docs`** (2 modules; no row yet: `_c`) | **20** | **16** "
        "| **4** | **80.0 %** | — |"
    ]
    (folder / "_c.py").unlink()
    assert "(2 modules) |" in tool.package_rows(rows, tmp_path)[0]
    assert tool.parse_rows("\n".join(tool.package_rows(rows, tmp_path))) == {}


def test_a_sampled_row_says_so_and_reads_back() -> None:
    tool = _tool()
    s = tool.Score(Counter(killed=9, survived=1))
    row = tool._row("costeer_lab.docs._a", s, 120.0, 1, (4, 41))
    assert "| 90.0 % (sampled: 1 in 4 of 41) | 2.0 min (1 core) |" in row.line
    assert tool.parse_rows(row.line)["costeer_lab.docs._a"].total == 10
    assert "sampled" not in tool._row("costeer_lab.docs._a", s, None, 2).line
