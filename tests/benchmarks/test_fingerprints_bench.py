"""The fingerprint benchmark: pairwise F1, the mutation operators (each planted mistake really
fails the way its cause says when run), and a tiny run of the whole benchmark."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ._harness import ROOT, run_benchmark

if str(ROOT) not in sys.path:  # ``benchmarks`` is a top-level folder, not an installed package
    sys.path.insert(0, str(ROOT))

from benchmarks._mutants import CAUSES, mutants, mutate
from benchmarks.fingerprints import pairwise_f1

SOURCE = """\
import math


def stats(values, scale):
    total = 0
    names = {"a": 1}
    for i, v in enumerate(values):
        total = total + v * names["a"]
    first, last = values[0], values[-1]
    mean = total / len(values)
    ranked = sorted(values)
    if scale > 0:
        return round(math.sqrt(abs(mean)) + first - last + ranked[0], 2)
    return mean
"""
CALL = "\nprint(stats([3.0, 1.0, 2.0], 1))\n"
#: cause -> the exception its mutants of SOURCE raise (None: a wrong value, no exception)
RAISES = {
    "undefined_name": "NameError",
    "missing_import": "NameError",
    "missing_module": "ModuleNotFoundError",
    "attribute_typo": "AttributeError",
    "wrong_arity": "TypeError",
    "type_mix": "TypeError",
    "index_past_end": "IndexError",
    "zero_division": "ZeroDivisionError",
    "wrong_key": "KeyError",
    "unpack_mismatch": "ValueError",
    "syntax_typo": "SyntaxError",
    "none_value": "TypeError",
    "logic_error": None,
}


def _run(code: str) -> subprocess.CompletedProcess[str]:
    # -S: no site-packages, as in the sandbox, where only allowed packages can be imported
    return subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60
    )


def test_pairwise_f1_by_hand() -> None:
    # pairs: (0,1) same cause same key; (2,3) same cause, different keys; (1,2) same key only
    causes = ["a", "a", "b", "b"]
    keys = ["x", "x", "x", "y"]
    precision, recall, f1 = pairwise_f1(causes, keys)
    # same key: (0,1),(0,2),(1,2) = 3 pairs, 1 right; same cause: (0,1),(2,3) = 2, 1 found
    assert (precision, recall) == (1 / 3, 1 / 2)
    assert f1 == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert pairwise_f1(causes, causes) == (1.0, 1.0, 1.0)
    assert pairwise_f1(["a", "b"], ["x", "y"]) == (1.0, 1.0, 1.0)  # no pair on either side
    with pytest.raises(ValueError, match="3 causes but 2 keys"):
        pairwise_f1(["a", "b", "c"], ["x", "y"])


def test_the_reference_runs() -> None:
    proc = _run(SOURCE + CALL)
    assert proc.returncode == 0 and proc.stdout.strip() == "3.41"


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("cause", CAUSES)
def test_each_operator_plants_its_mistake(cause: str, seed: int) -> None:
    m = mutate("stats", SOURCE, cause, "humaneval", seed)
    assert m is not None and m.cause == cause and m.code != SOURCE
    proc = _run(m.code + CALL)
    expected = RAISES[cause]
    if expected is None:  # a wrong value (or, for some sites, a crash): never the right answer
        assert proc.stdout.strip() != "3.41"
    else:
        assert proc.returncode != 0
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith(expected + ":"), (m.code, proc.stderr)


def test_mutants_are_reproducible_and_skip_functions_without_sites() -> None:
    functions = [("stats", SOURCE), ("const", "def const():\n    return 1\n")]
    one = list(mutants(functions, "humaneval", seed=5))
    assert one == list(mutants(functions, "humaneval", seed=5))
    assert {m.cause for m in one if m.function == "stats"} == set(CAUSES)
    const = {m.cause for m in one if m.function == "const"}
    assert "index_past_end" not in const and "missing_module" in const


def test_alpha158_mutations_stay_in_the_factor_code() -> None:
    from costeer_lab.suites._alpha158 import alpha158_suite

    suite = alpha158_suite(n_instruments=3, n_days=5, cache_dir=None)
    code = suite.ground_truth("alpha158/MA20").files["main.py"]
    main_part = code[code.index("def main():") :]

    def main_of(text: str) -> str:
        tree = ast.parse(text)
        return next(ast.dump(n) for n in tree.body if getattr(n, "name", "") == "main")

    for cause in ("wrong_key", "attribute_typo", "undefined_name", "type_mix", "logic_error"):
        m = mutate("MA20", code, cause, "alpha158", 0)
        assert m is not None and main_of(m.code) == main_of(code), cause
    for seed in range(5):
        typo = mutate("MA20", code, "syntax_typo", "alpha158", seed)
        assert typo is not None and typo.code.endswith(main_part), seed


def test_tiny_benchmark_run(tmp_path: Path) -> None:
    out, dump = tmp_path / "fp.json", tmp_path / "set.jsonl"
    args = ["--functions", "2", "--dump", str(dump)]
    values = run_benchmark("fingerprints", *args, out=out, timeout=600).values
    rows = [json.loads(line) for line in dump.read_text().splitlines()]
    assert values["all", "mutants"] == len(rows) > 10
    assert {r["suite"] for r in rows} == {"humaneval", "alpha158"}
    assert {r["split"] for r in rows} == {"design", "held-out"}
    assert values["all", "generated"] == len(rows) + values["all", "equivalent"]
    for key in ("fingerprint", "exception_type", "last_line"):
        expected = pairwise_f1([r["cause"] for r in rows], [r[key] for r in rows])[2]
        assert values["all", f"{key}_f1"] == pytest.approx(expected)
    best = max(values["all", "exception_type_f1"], values["all", "last_line_f1"])
    assert values["all", "f1_ratio"] == pytest.approx(values["all", "fingerprint_f1"] / best)
