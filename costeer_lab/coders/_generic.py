"""Honest generic attempts for when no knowledge is available (no formula compiler here)."""

from __future__ import annotations

import ast

from costeer_lab.coders._contracts import factor_fields, factor_io, task_family
from costeer_lab.records import Task, Workspace

__all__ = ["generic_attempt"]


def _is_hdf(name: str) -> bool:
    return name.lower().endswith((".h5", ".hdf5", ".hdf"))


def _read(name: str) -> str:
    return f"pd.read_hdf({name!r}, key='data')" if _is_hdf(name) else f"pd.read_parquet({name!r})"


def _write(name: str) -> str:
    return f"to_hdf({name!r}, key='data')" if _is_hdf(name) else f"to_parquet({name!r})"


def _factor_script(task: Task) -> str:
    fields = factor_fields(task)
    field = fields[0] if fields else "$close"
    inp, out, column = factor_io(task)
    formulation = task.formulation.replace(chr(34) * 3, "").replace("\\", "/")
    return (
        f'"""Generic attempt for {task.name}: no usable knowledge was retrieved, so this only\n'
        f"follows the contract and outputs the first data field of the formulation ({field}).\n"
        f'Formulation: {formulation}\n"""\n\n'
        "import pandas as pd\n\n"
        f"df = {_read(inp)}\n"
        f"field = {field!r} if {field!r} in df.columns else {field.lstrip('$')!r}\n"
        "values = df[field].astype('float64')\n"
        f"result = values.to_frame(name={column!r})\n"
        f"result.{_write(out)}\n"
    )


def _body_indent(prompt: str) -> str:
    for line in reversed(prompt.splitlines()):
        if line.strip():
            indent = line[: len(line) - len(line.lstrip())]
            if line.lstrip().startswith("def ") or line.rstrip().endswith(":"):
                return indent + "    "
            return indent or "    "
    return "    "


def _function_stub(task: Task) -> str:
    prompt = str(task.extra.get("prompt", "")).rstrip() + "\n"
    entry = str(task.extra.get("entry_point", task.name))
    message = f"no knowledge retrieved for {entry}"
    indent = _body_indent(prompt)
    for body in (f"raise NotImplementedError({message!r})", "pass"):
        code = f"{prompt}{indent}{body}\n"
        try:
            ast.parse(code)
        except SyntaxError:
            continue
        return code
    commented = "".join(f"# {line}\n" for line in prompt.splitlines())
    stub = f"def {entry}(*args, **kwargs):\n    raise NotImplementedError({message!r})\n"
    return f"{commented}{stub}"


def generic_attempt(task: Task) -> Workspace:
    """A script that follows the task family's contract without any retrieved knowledge.

    Factor tasks: read the input, output the first ``$field`` of the formulation under the task's
    name. Function tasks: the given prompt with a ``raise NotImplementedError`` body. Others: a
    script that raises ``NotImplementedError``.

    Example:
        >>> ws = generic_attempt(Task("x", "MA5", "", formulation="Mean($close, 5)/$close"))
        >>> "'$close' if '$close' in df.columns else 'close'" in ws.code
        True
    """
    family = task_family(task)
    if family == "factor":
        return Workspace({"main.py": _factor_script(task)})
    if family == "function":
        return Workspace({"main.py": _function_stub(task)})
    msg = f"no knowledge retrieved for task {task.name}"
    return Workspace({"main.py": f"raise NotImplementedError({msg!r})\n"})
