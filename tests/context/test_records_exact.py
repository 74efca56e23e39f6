"""Exact behaviour of the context records: what ``from_dict`` fills in for every key a stored
record may lack (records written before a field existed), and the exact refusals.

Each default is compared field by field and by type: ``""`` is not ``None``, ``()`` is not
``[]``, and a missing list must not make ``from_dict`` fail.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest

from costeer_lab.context import (
    Action,
    ActionContext,
    Evidence,
    FileMetadata,
    FileReference,
    Output,
)
from costeer_lab.context._codedoc import ClassDoc, FunctionDoc, Parameter
from costeer_lab.errors import InvalidInputError

EVIDENCE = {
    "id": "ev-0001",
    "type": "execution",
    "content": "exit 0",
    "confidence": 0.9,
    "source": "run.py",
    "timestamp": 5,
}
FILE = {
    "id": "f-1",
    "path": "a.py",
    "file_type": "code",
    "content": "x = 1\n",
    "size": "6",
    "created_by": "act-1",
    "created_at": 1,
    "modified_at": 2,
    "checksum": "c0ffee",
}


def same(a: Any, b: Any) -> None:
    """Equal field by field, each value of the same type (a frozen record's ``==`` would take
    ``()`` for ``[]``)."""
    assert type(a) is type(b)
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        assert (f.name, x, type(x)) == (f.name, y, type(y))


def test_evidence_without_metadata() -> None:
    ev = Evidence.from_dict(EVIDENCE)
    same(ev, Evidence("ev-0001", "execution", "exit 0", 0.9, "run.py", 5.0, {}))
    assert type(ev.timestamp) is float and type(ev.metadata) is dict


def test_a_file_reference_without_metadata_has_empty_metadata() -> None:
    ref = FileReference.from_dict(FILE)
    expected = FileReference("f-1", "a.py", "code", "x = 1\n", 6, "act-1", 1.0, 2.0, "c0ffee")
    same(ref, expected)
    same(ref.metadata, FileMetadata())
    assert (type(ref.size), type(ref.created_at), type(ref.modified_at)) == (int, float, float)


def test_file_metadata_defaults_for_every_missing_key() -> None:
    meta = FileMetadata.from_dict({})
    same(meta, FileMetadata("", (), (), (), (), "", "", None))
    assert (meta.language, meta.purpose, meta.documentation) == ("", "", "")


def test_file_metadata_reads_every_key_it_writes() -> None:
    full = FileMetadata(
        language="python",
        functions=(FunctionDoc("f", "f"),),
        classes=(ClassDoc("C", "C"),),
        imports=("os",),
        dependencies=("numpy",),
        purpose="p",
        documentation="d",
        syntax_error="line 1: bad",
    )
    same(FileMetadata.from_dict(full.to_dict()), full)


def test_output_defaults_for_every_missing_key() -> None:
    out = Output.from_dict({"success": 1})
    same(out, Output(True, "", {}, "", "", {}))
    assert out.success is True


def test_output_reads_every_key_it_writes() -> None:
    full = Output(False, "r", {"a.py": "x"}, "code", "doc", {"k": 1})
    same(Output.from_dict(full.to_dict()), full)


def test_action_context_defaults() -> None:
    same(ActionContext.from_dict({}), ActionContext("", ""))
    same(ActionContext.from_dict({"plan_id": "p"}), ActionContext("p", ""))
    same(ActionContext.from_dict({"reasoning": "r"}), ActionContext("", "r"))


def test_action_defaults_for_every_missing_key() -> None:
    d = {"id": "act-1", "type": "write_file", "outputs": {"success": True}, "timestamp": 3}
    act = Action.from_dict({**d, "success": 0})
    same(act, Action("act-1", "write_file", {}, Output(True), 3.0, False, (), ActionContext()))
    assert type(act.inputs) is dict and act.success is False


def test_action_reads_every_key_it_writes() -> None:
    full = Action(
        "act-2",
        "run",
        {"path": "a.py"},
        Output(True, "ok"),
        4.0,
        True,
        ("ev-1", "ev-2"),
        ActionContext("plan-1", "because"),
    )
    same(Action.from_dict(full.to_dict()), full)


def test_code_docs_defaults_for_every_missing_key() -> None:
    same(Parameter.from_dict({"name": "a"}), Parameter("a", None, None, "positional"))
    fn = FunctionDoc.from_dict({"name": "f"})
    same(fn, FunctionDoc("f", "f", (), None, None, 0, 0, 1, (), False, False, False, (), ()))
    cls = ClassDoc.from_dict({"name": "C", "qualname": "M.C"})
    same(cls, ClassDoc("C", "M.C", (), (), None, 0, 0, (), (), 0, (), ()))


def test_an_unknown_evidence_type_is_refused_by_name() -> None:
    with pytest.raises(InvalidInputError) as err:
        Evidence.from_dict({**EVIDENCE, "type": "hunch"})
    assert str(err.value) == (
        "Evidence.type must be one of file_creation, code_implementation, documentation, "
        "synthesis, execution, validation; got 'hunch'"
    )


def test_a_confidence_outside_0_1_is_refused_by_name() -> None:
    for bad in (-0.01, 1.01):
        with pytest.raises(InvalidInputError) as err:
            Evidence.from_dict({**EVIDENCE, "confidence": bad})
        assert str(err.value) == f"Evidence.confidence must be in [0, 1]; got {bad}"
    for edge in (0, 1):  # both ends are allowed
        assert Evidence.from_dict({**EVIDENCE, "confidence": edge}).confidence == edge


def test_an_unknown_file_type_is_refused_by_name() -> None:
    with pytest.raises(InvalidInputError) as err:
        FileReference.from_dict({**FILE, "file_type": "binary"})
    assert str(err.value) == (
        "FileReference.file_type must be one of code, documentation, data, config, output; "
        "got 'binary'"
    )
