"""Records round-trip through JSON; the documenter never raises on any text."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from costeer_lab.context import (
    EVIDENCE_TYPES,
    TASK_TYPES,
    Action,
    ActionContext,
    Evidence,
    Output,
    TaskContext,
    document_python,
    register_file,
)

from .samples import SHAPES

text = st.text(max_size=40)
json_scalars = st.none() | st.booleans() | st.integers(-(2**31), 2**31) | text
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
stamps = st.floats(0, 2e9, allow_nan=False)

evidence = st.builds(
    Evidence,
    id=text,
    type=st.sampled_from(EVIDENCE_TYPES),
    content=text,
    confidence=st.floats(0, 1),
    source=text,
    timestamp=stamps,
    metadata=st.dictionaries(text, json_values, max_size=3),
)
outputs = st.builds(
    Output,
    success=st.booleans(),
    result=text,
    files=st.dictionaries(text, text, max_size=2),
    code=text,
    documentation=text,
    metadata=st.dictionaries(text, json_values, max_size=3),
)
actions = st.builds(
    Action,
    id=text,
    type=text,
    inputs=st.dictionaries(text, json_values, max_size=3),
    outputs=outputs,
    timestamp=stamps,
    success=st.booleans(),
    evidence=st.lists(text, max_size=3).map(tuple),
    context=st.builds(ActionContext, text, text),
)
SOURCES = [SHAPES, "x = 1\n", "def f(:\n", "", "class A:\n    class B:\n        pass\n"]
files = st.tuples(st.sampled_from(["a.py", "b.md", "c.csv", "d.toml"]), st.sampled_from(SOURCES))


@settings(max_examples=60, deadline=None)
@given(
    task_type=st.sampled_from(TASK_TYPES),
    task=text,
    acts=st.lists(actions, max_size=3),
    evs=st.lists(evidence, max_size=3),
    written=st.lists(files, max_size=2),
    complete=st.booleans(),
    stop=st.none() | text,
)
def test_task_context_round_trips_through_json(
    task_type: str,
    task: str,
    acts: list[Action],
    evs: list[Evidence],
    written: list[tuple[str, str]],
    complete: bool,
    stop: str | None,
) -> None:
    refs = tuple(
        register_file(p, c, file_id=f"f{i}", action_id="a", now=float(i))
        for i, (p, c) in enumerate(written)
    )
    ctx = TaskContext(
        "t", task_type, task, tuple(acts), tuple(evs), refs,  # type: ignore[arg-type]
        complete=complete, completion_evidence=tuple(e.id for e in evs), stop_reason=stop,
    )  # fmt: skip
    data = json.loads(json.dumps(ctx.to_dict()))
    assert TaskContext.from_dict(data) == ctx


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_document_python_never_raises(source: str) -> None:
    ref = document_python(source, "fuzz.py")
    assert (ref.syntax_error is None) or (ref.functions == () and ref.classes == ())
