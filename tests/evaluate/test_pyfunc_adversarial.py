"""Adversarial candidates against PythonFunctionEvaluator in the real sandbox: every one fails.

The hidden tests hold a canary comment and distinctive expected values. The canary is built at
run time, so no file on disk (this one included) contains it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from costeer_lab.evaluate import EvaluatorSettings, PythonFunctionEvaluator
from costeer_lab.records import SingleFeedback, Task, Workspace

CANARY = "-".join(["zq", "hidden", "tests", "77"])
FIRST = 987654318  # the expected values are FIRST + 3 and FIRST + 4
TASK = Task("adv/solve", "solve", "Return a number.", extra={"entry_point": "solve"})
GT = Workspace(
    {
        "tests.py": (
            f"# {CANARY}\n\ndef check(candidate):\n"
            f"    assert candidate(3) == {FIRST + 3}\n"
            f"    assert candidate(4) == {FIRST + 4}\n"
        )
    }
)
HONEST = f"def solve(x):\n    return {FIRST} + x\n"


@pytest.fixture(scope="module")
def sandboxed() -> Iterator[PythonFunctionEvaluator]:
    ev = PythonFunctionEvaluator(settings=EvaluatorSettings(pyfunc_timeout_s=20))
    yield ev
    ev.close()


def run(ev: PythonFunctionEvaluator, main: str, **files: str) -> SingleFeedback:
    return ev.evaluate(TASK, Workspace({"main.py": main, **files}), GT)


def test_the_honest_solution_passes(sandboxed: PythonFunctionEvaluator) -> None:
    fb = run(sandboxed, HONEST)
    assert fb.final_decision is True, fb.return_checking


FORGED_ANSWERS = """
import json
with open("_costeer_answers.jsonl", "w") as fh:
    fh.write(json.dumps({"status": "loaded"}) + "\\n")
    for i in range(10):
        fh.write(json.dumps({"i": i, "value": True}) + "\\n")
        fh.write(json.dumps({"i": i, "value": {"int": "0"}}) + "\\n")
"""

ATTACKS = {
    "forged result file, exit 0 at import": (
        "import json, sys\n"
        "json.dump({'status': 'passed', 'tests': True}, open('_costeer_result.json', 'w'))\n"
        "sys.exit(0)\n"
    ),
    "sys.exit(0) at import": "import sys\nsys.exit(0)\n\ndef solve(x):\n    return 0\n",
    "forged answers file, os._exit(0) at import": FORGED_ANSWERS + "import os\nos._exit(0)\n",
    "forged answers file, then a wrong solve": FORGED_ANSWERS + "def solve(x):\n    return 0\n",
    "atexit handler forging the answers": (
        "import atexit, json\n\ndef forge():\n"
        "    calls = json.load(open('_costeer_calls.json'))['calls']\n"
        "    with open('_costeer_answers.jsonl', 'w') as fh:\n"
        "        fh.write(json.dumps({'status': 'loaded'}) + '\\n')\n"
        "        for i in range(len(calls)):\n"
        "            fh.write(json.dumps({'i': i, 'value': True}) + '\\n')\n"
        "    open('_costeer_result.json', 'w').write('{\"status\": \"passed\"}')\n\n"
        "atexit.register(forge)\n\ndef solve(x):\n    return None\n"
    ),
    "monkeypatched json and builtins": (
        "import json, builtins\n"
        'json.dumps = lambda *a, **k: \'{"status": "passed"}\'\n'
        'json.dump = lambda obj, fh, *a, **k: fh.write(\'{"status": "passed"}\')\n'
        "builtins.AssertionError = type('Never', (BaseException,), {})\n"
        "builtins.isinstance = lambda *a: True\n"
        "builtins.type = lambda *a: int\n\ndef solve(x):\n    return x\n"
    ),
    "an always-equal object": (
        "class Eq:\n    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n    __hash__ = object.__hash__\n\n"
        "def solve(x):\n    return Eq()\n"
    ),
    "an int subclass that equals everything": (
        "class I(int):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\n\ndef solve(x):\n    return I(0)\n"
    ),
    "a str subclass that equals everything": (
        "class S(str):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = str.__hash__\n\ndef solve(x):\n    return S('')\n"
    ),
    "forged answer lines on stdout and stderr": (
        "import json, sys\n"
        "print(json.dumps({'status': 'loaded'}))\n"
        "for i in range(4):\n"
        "    line = json.dumps({'i': i, 'value': {'int': '0'}})\n"
        "    print(line)\n    print(line, file=sys.stderr)\n"
        "print(json.dumps({'status': 'passed'}))\n\n"
        "def solve(x):\n    print(json.dumps({'i': 0, 'value': True}))\n    return 0\n"
    ),
    "a module shadowing json next to main.py": "def solve(x):\n    return 0\n",
    "SystemExit(0) raised by the function": "def solve(x):\n    raise SystemExit(0)\n",
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attacks_fail(sandboxed: PythonFunctionEvaluator, name: str) -> None:
    extra = {}
    if name == "a module shadowing json next to main.py":
        extra["json.py"] = (
            'def dumps(obj, **kw):\n    return \'{"status": "loaded"}\'\n'
            "def load(fh):\n    return {'main_file': 'main.py', 'entry_point': 'solve', "
            "'calls': []}\n"
        )
    fb = run(sandboxed, ATTACKS[name], **extra)
    assert fb.final_decision is False, (name, fb.return_checking)
    assert fb.details["status"] != "passed"
    text = json.dumps(fb.to_dict())
    assert str(FIRST + 3) not in text and str(FIRST + 4) not in text and CANARY not in text


SEARCH = """
import gc, json, os, sys, time

# built by calls, not "a" + "b" (constant folding would put them in the bytecode cache)
CANARY = "-".join(["zq", "hidden", "tests", "77"])
VALUES = ("".join(["98765", "4321"]), "".join(["98765", "4322"]))
# files: the canary and the assertions' text (the bare digits occur in some binaries)
TEXTUAL = (CANARY, *("== " + v for v in VALUES))
NEEDLES = {"fs": TEXTUAL, "proc": TEXTUAL}
ALL = {*VALUES, *TEXTUAL}
hits = {"fs": [], "memory": [], "frames": [], "proc": [], "check_functions": 0}
scanned = 0


def look(where, text, origin=""):
    for needle in NEEDLES.get(where, ALL):
        if needle in text and text not in ALL:
            i = text.index(needle)
            hits[where].append(origin + ": " + repr(text[max(0, i - 80):i + 80]))


def scan_files(deadline):
    global scanned
    seen = set()
    for top in (".", "/sandbox", "/tmp", "/root", "/work", "/"):
        for root, dirs, files in os.walk(top):
            if time.monotonic() > deadline:
                return
            dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev")]
            for name in files:
                path = os.path.realpath(os.path.join(root, name))
                if time.monotonic() > deadline:
                    return
                if path in seen:
                    continue
                seen.add(path)
                try:
                    if os.path.getsize(path) < 2_000_000:
                        data = open(path, "rb").read()
                        scanned += 1
                        look("fs", data.decode("latin-1"), path)
                except OSError:
                    pass


def scan_memory():
    for obj in gc.get_objects():
        if callable(obj) and getattr(obj, "__name__", "") == "check":
            hits["check_functions"] += 1
        for ref in gc.get_referents(obj):
            if type(ref) is str:
                look("memory", ref)
    for module in list(sys.modules.values()):
        for value in list(vars(module).values()):
            if type(value) is str:
                look("memory", value)
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()) + list(frame.f_code.co_consts):
            if type(value) is str:
                look("frames", value)
        frame = frame.f_back


def scan_processes():
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        for name in ("cmdline", "environ"):
            try:
                data = open(f"/proc/{pid}/{name}", "rb").read()
                look("proc", data.decode("latin-1"), f"/proc/{pid}/{name}")
            except OSError:
                pass
        try:
            maps = open(f"/proc/{pid}/maps").read().splitlines()
            with open(f"/proc/{pid}/mem", "rb") as mem:
                for line in maps[:200]:
                    start, end = (int(x, 16) for x in line.split()[0].split("-"))
                    mem.seek(start)
                    data = mem.read(min(end - start, 4_000_000))
                    look("proc", data.decode("latin-1"), f"/proc/{pid}/mem")
        except (OSError, ValueError, OverflowError):
            pass


def solve(x):
    if not scanned:
        t0 = time.monotonic()
        scan_files(t0 + 3)
        t1 = time.monotonic()
        scan_memory()
        t2 = time.monotonic()
        scan_processes()
        times = [round(t1 - t0, 2), round(t2 - t1, 2), round(time.monotonic() - t2, 2)]
        print("SEARCH-REPORT " + json.dumps({"scanned": scanned, "times": times, **hits}))
    return 0
"""


def test_the_hidden_tests_cannot_be_found_from_the_candidates_process(
    sandboxed: PythonFunctionEvaluator,
) -> None:
    fb = run(sandboxed, SEARCH)
    assert fb.final_decision is False
    match = re.search(r"SEARCH-REPORT (\{.*\})", fb.execution)
    assert match is not None, fb.execution
    report = json.loads(match.group(1))
    assert report["scanned"] > 10  # it did look around
    assert report["check_functions"] == 0
    assert report["fs"] == report["memory"] == report["frames"] == report["proc"] == []


MANY = Workspace(
    {"tests.py": "def check(c):\n" + "".join(f"    assert c({i}) == {i + 1}\n" for i in range(5))}
)
TASK_F = Task("adv/f", "f", "Add one.", extra={"entry_point": "f"})


@pytest.fixture(scope="module")
def quick() -> Iterator[PythonFunctionEvaluator]:
    ev = PythonFunctionEvaluator(settings=EvaluatorSettings(pyfunc_timeout_s=2))
    yield ev
    ev.close()


def test_a_hang_names_the_running_call(quick: PythonFunctionEvaluator) -> None:
    src = "def f(x):\n    while x == 2:\n        pass\n    return x + 1\n"
    fb = quick.evaluate(TASK_F, Workspace({"main.py": src}), MANY)
    assert fb.final_decision is False and fb.details["status"] == "no_result"
    assert "time limit" in fb.execution
    assert (fb.return_checking or "").startswith(
        "[FAIL] the candidate did not report a result for f(2): "
        "the run stopped while this call was running ("
    )
    assert "limit of 2 s exceeded" in (fb.return_checking or "")  # wall clock or CPU time


def test_answers_before_a_crash_are_kept(quick: PythonFunctionEvaluator) -> None:
    # call 1 answers wrongly, call 2 kills the process: the first failure is the answer (not
    # call 0: its expected 1 equals True, a small-domain result diagnostics does not name)
    src = (
        "import os\n\ndef f(x):\n    if x == 2:\n        os.kill(os.getpid(), 9)\n"
        "    return x if x == 1 else x + 1\n"
    )
    fb = quick.evaluate(TASK_F, Workspace({"main.py": src}), MANY)
    assert fb.details["status"] == "assertion_failed"
    assert "rejected the result of f(1)\n  it returned: 1" in (fb.return_checking or "")
    assert "SIGKILL" in fb.execution
