"""Source of the script that runs hidden HumanEval-style tests against a candidate.

It runs as ``__main__`` (in the sandbox) next to the candidate's files, ``_costeer_tests.py``
(the hidden ``check(candidate)`` code) and ``_costeer_config.json`` (main file, entry point).
As in HumanEval, the tests run in a copy of the candidate module's namespace (some tests call
helpers defined by the prompt). The outcome goes to ``_costeer_result.json``: ``status``
(``passed``, ``load_error``, ``missing_entry_point``, ``assertion_failed``, ``error``), the
failing statement, its line in the tests, and the value its left side evaluated to.
"""

from __future__ import annotations

__all__ = ["CONFIG_FILE", "HARNESS_FILE", "HARNESS_SOURCE", "RESULT_FILE", "TESTS_FILE"]

HARNESS_FILE = "_costeer_harness.py"
TESTS_FILE = "_costeer_tests.py"
CONFIG_FILE = "_costeer_config.json"
RESULT_FILE = "_costeer_result.json"

HARNESS_SOURCE = r"""
import ast
import json
import sys
import traceback

TESTS_NAME = "hidden_tests.py"


def finish(code, **result):
    with open("_costeer_result.json", "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    sys.exit(code)


def failing_statement(tests_src, tb):
    frames = [f for f in traceback.walk_tb(tb) if f[0].f_code.co_filename == TESTS_NAME]
    if not frames:
        return None, None, None
    frame, lineno = frames[-1]
    text, left = tests_src.splitlines()[lineno - 1].strip(), None
    for node in ast.walk(ast.parse(tests_src)):
        if isinstance(node, ast.Assert) and node.lineno <= lineno <= (node.end_lineno or 0):
            text = ast.get_source_segment(tests_src, node) or text
            target = node.test.left if isinstance(node.test, ast.Compare) else node.test
            try:
                value = eval(compile(ast.Expression(target), "<left>", "eval"),
                             frame.f_globals, frame.f_locals)
                left = repr(value)[:500]
            except BaseException as exc:
                left = "raised " + type(exc).__name__ + ": " + str(exc)[:300]
            break
    return lineno, text, left


def main():
    with open("_costeer_config.json", encoding="utf-8") as fh:
        config = json.load(fh)
    main_file, entry = config["main_file"], config["entry_point"]
    namespace = {"__name__": "candidate"}
    try:
        with open(main_file, encoding="utf-8") as fh:
            source = fh.read()
        exec(compile(source, main_file, "exec"), namespace)
    except BaseException as exc:
        traceback.print_exc()
        finish(1, status="load_error", error=type(exc).__name__ + ": " + str(exc)[:500])
    candidate = namespace.get(entry)
    if not callable(candidate):
        print(main_file + " does not define a function named " + repr(entry), file=sys.stderr)
        finish(1, status="missing_entry_point", entry_point=entry)
    if not config.get("has_tests"):
        finish(0, status="passed", tests=False)
    with open("_costeer_tests.py", encoding="utf-8") as fh:
        tests_src = fh.read()
    scope = dict(namespace)
    scope["__name__"] = "hidden_tests"
    try:
        exec(compile(tests_src, TESTS_NAME, "exec"), scope)
        scope["check"](candidate)
    except AssertionError as exc:
        traceback.print_exc()
        lineno, text, left = failing_statement(tests_src, exc.__traceback__)
        finish(1, status="assertion_failed", line=lineno, statement=text, left=left,
               message=str(exc)[:500])
    except BaseException as exc:
        traceback.print_exc()
        lineno, text, _ = failing_statement(tests_src, exc.__traceback__)
        finish(1, status="error", line=lineno, statement=text,
               error=type(exc).__name__ + ": " + str(exc)[:500])
    finish(0, status="passed", tests=True)


main()
"""
