"""Fingerprints of real tracebacks: every snippet below is run by a real interpreter and the
traceback it prints is fingerprinted. One mistake made in different code must give one
signature; different mistakes must give different signatures."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from costeer_lab._fingerprint import error_fingerprint, extract_errors

#: cause -> snippets making that mistake in different code (each fails when run).
MISTAKES: dict[str, list[str]] = {
    "module not installed": [
        "import nonexistent_pkg_abc",
        "from totally_missing.sub import thing",
        "import pandsa as pd\npd.DataFrame()",
    ],
    "missing import": [
        "x = np.zeros(3)",
        "def root(v):\n    return math.sqrt(v)\nroot(4)",
        "frame = pd.DataFrame({'a': [1]})",
    ],
    "undefined name": [
        "value = 1\ntotal = valeu + 1",
        "def first(numbers):\n    return numbrs[0]\nfirst([1])",
        "result = [1]\nprint(reslt)",
    ],
    "wrong attribute": [
        "[1, 2].apend(3)",
        "import math\nmath.sqroot(4)",
        "'abc'.uper()",
        "import pandas as pd\npd.Series([1.0, 2.0]).rolling(2).average()",
        "import pandas as pd\npd.rolling_mean(pd.Series([1.0]), 2)",
    ],
    "missing key": [
        "prices = {'open': 1}\nprices['close']",
        "import pandas as pd\ndf = pd.DataFrame({'close': [1.0]})\ndf['Close']",
        "counts = {1: 2}\ncounts[3]",
    ],
    "wrong number of arguments": [
        "len([1], [2])",
        "def area(w, h):\n    return w * h\narea(3)",
        "def double(x):\n    return 2 * x\ndouble(1, 2)",
        "sorted([2, 1], [3])",
        "'a'.upper(1)",
        "range(1, 2, 3, 4)",
    ],
    "operand types": [
        "label = 'n=' + 3",
        "1 - 'a'",
        "[1] * 'x'",
        "'a' < 1",
        "import pandas as pd\npd.Series([1.0, 2.0]) + pd.Series(['a', 'b'])",
        "import pandas as pd\npd.Series([1.0, 2.0]) < 'a'",
        "word = 'abc'\nword % 2",
    ],
    "None used": [
        "items = None\nitems[0]",
        "len(None)",
        "total = None\ntotal + 1",
        "for x in None:\n    pass",
    ],
    "index out of range": [
        "[1, 2][5]",
        "'abc'[10]",
        "(1,)[3]",
        "import numpy as np\nnp.arange(3)[5]",
        "import pandas as pd\npd.Series([1, 2]).iloc[5]",
    ],
    "division by zero": ["1 / 0", "1.5 / 0", "5 % 0", "5 // 0", "divmod(1, 0)"],
    "unpacking": [
        "a, b = [1, 2, 3]",
        "a, b, c = (1, 2)",
        "for x, y in [(1, 2, 3)]:\n    pass",
    ],
    "string to number": [
        "int('abc')",
        "float('x1')",
        "int('3.5')",
        "import pandas as pd\npd.Series(['a']).astype(float)",
    ],
    "ambiguous truth value": [
        "import pandas as pd\nif pd.Series([1, 2]):\n    pass",
        "import numpy as np\nif np.array([1, 2]):\n    pass",
        "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})\nx = df['a'] > 1 and True",
    ],
    "column length": [
        "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})\ndf['b'] = [1, 2]",
        "import pandas as pd\ndf = pd.DataFrame({'x': range(10)})\ndf['y'] = list(range(4))",
    ],
    "syntax typo": [
        "def f(:\n    pass",
        "x = (1, 2",
        "if x\n    pass",
        "print('a'",
        "for i in range(3)\n    print(i)",
    ],
    "endless recursion": [
        "def f(n):\n    return f(n + 1)\nf(0)",
        "def walk():\n    return walk()\nwalk()",
    ],
    "no common merge column": [
        "import pandas as pd\npd.merge(pd.DataFrame({'a': [1]}), pd.DataFrame({'b': [1]}))",
        "import pandas as pd\npd.DataFrame({'k': [1]}).merge(pd.DataFrame({'z': [2.0]}))",
    ],
}

EXPECTED = {
    "module not installed": "ModuleNotFoundError: No module named <str>",
    "missing import": "NameError: name <str> is not defined (missing import)",
    "undefined name": "NameError: name <str> is not defined",
    "wrong attribute": "AttributeError: object has no attribute <str>",
    "missing key": "KeyError: <str>",
    "wrong number of arguments": "TypeError: wrong number of arguments in a call",
    "operand types": "TypeError: unsupported operand types for an operator",
    "None used": "TypeError: operation on None",
    "index out of range": "IndexError: index out of range",
    "division by zero": "ZeroDivisionError: division by zero",
    "unpacking": "ValueError: wrong number of values to unpack",
    "string to number": "ValueError: could not convert a string to a number",
    "ambiguous truth value": "ValueError: truth value of an array is ambiguous",
    "syntax typo": "SyntaxError: invalid syntax",
    "endless recursion": "RecursionError: maximum recursion depth exceeded",
}


def _run(code: str, workdir: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode != 0, f"snippet did not fail: {code!r}"
    return proc.stderr


#: Runs snippets that import pandas or numpy in one interpreter (one import of pandas instead
#: of twenty): each is compiled and executed as a module of its own, and the traceback Python
#: formats for it is written to ``<i>.txt``.
_BATCH = """
import json, pathlib, sys, traceback
for i, code in enumerate(json.loads(pathlib.Path(sys.argv[1]).read_text())):
    try:
        exec(compile(code, f"<snippet {i}>", "exec"), {"__name__": "__main__"})
    except BaseException:
        pathlib.Path(f"{i}.txt").write_text(traceback.format_exc())
    else:
        pathlib.Path(f"{i}.txt").write_text("")
"""


def _run_batch(codes: list[str], workdir: Path) -> list[str]:
    (workdir / "snippets.json").write_text(json.dumps(codes))
    subprocess.run(
        [sys.executable, "-c", _BATCH, "snippets.json"], cwd=workdir, timeout=300, check=True
    )
    out = [(workdir / f"{i}.txt").read_text() for i in range(len(codes))]
    for code, tb in zip(codes, out, strict=True):
        assert tb, f"snippet did not fail: {code!r}"
    return out


@pytest.fixture(scope="module")
def tracebacks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """cause -> the traceback each of its snippets printed: plain snippets each in its own
    interpreter (two at a time), those importing pandas or numpy in one interpreter."""
    workdir = tmp_path_factory.mktemp("snippets")
    jobs = [(cause, code) for cause, codes in MISTAKES.items() for code in codes]
    heavy = [i for i, (_, code) in enumerate(jobs) if "import pandas" in code or "numpy" in code]
    with ThreadPoolExecutor(2) as pool:
        batch = pool.submit(_run_batch, [jobs[i][1] for i in heavy], workdir)
        light = [i for i in range(len(jobs)) if i not in heavy]
        outputs = dict(
            zip(light, pool.map(lambda i: _run(jobs[i][1], workdir), light), strict=True)
        )
        outputs.update(zip(heavy, batch.result(), strict=True))
    out: dict[str, list[str]] = {cause: [] for cause in MISTAKES}
    for i, (cause, _) in enumerate(jobs):
        out[cause].append(outputs[i])
    return out


@pytest.mark.parametrize("cause", sorted(MISTAKES))
def test_one_mistake_in_different_code_has_one_signature(
    tracebacks: dict[str, list[str]], cause: str
) -> None:
    fps = [error_fingerprint(tb) for tb in tracebacks[cause]]
    assert len(set(fps)) == 1, (cause, fps)
    if cause in EXPECTED:
        assert fps[0] == EXPECTED[cause]


def test_the_signatures_merge_different_raw_lines(tracebacks: dict[str, list[str]]) -> None:
    """Most causes' raw exception lines differ from snippet to snippet (the names, values and
    wordings of the code): the one signature per cause really merged different texts."""
    raw = {cause: {extract_errors(tb)[0][1] for tb in tbs} for cause, tbs in tracebacks.items()}
    merged = [cause for cause, lines in raw.items() if len(lines) > 1]
    assert len(merged) >= len(raw) - 2, raw


def test_different_mistakes_have_different_signatures(tracebacks: dict[str, list[str]]) -> None:
    by_cause = {cause: error_fingerprint(tbs[0]) for cause, tbs in tracebacks.items()}
    assert len(set(by_cause.values())) == len(by_cause), by_cause


def test_the_exception_type_alone_would_merge_some_of_them(
    tracebacks: dict[str, list[str]],
) -> None:
    """The mistakes above share exception types; only the message tells them apart."""
    types = {error_fingerprint(tbs[0]).split(":")[0] for tbs in tracebacks.values()}
    assert len(types) < len(tracebacks)


def test_none_attribute_is_not_a_misspelt_attribute(tmp_path: Path) -> None:
    none_attr = error_fingerprint(_run("value = None\nvalue.strip()", tmp_path))
    typo = error_fingerprint(_run("'a'.strp()", tmp_path))
    assert none_attr == "AttributeError: operation on None"
    assert typo == "AttributeError: object has no attribute <str>"


def test_a_chained_pandas_key_error_keeps_the_final_error(tmp_path: Path) -> None:
    tb = _run(
        "import pandas as pd\ndf = pd.DataFrame({'close': [1.0]})\ndf.loc[:, 'Close']", tmp_path
    )
    assert "During handling" in tb or "direct cause" in tb or tb.count("Traceback") >= 1
    assert error_fingerprint(tb) == "KeyError: <str>"
    assert extract_errors(tb)[0][0] == "KeyError: <str>"
