"""``read_answers``: "only complete lines count" (its documented rule), pinned."""

from __future__ import annotations

from costeer_lab.evaluate._pyfunc_answers import read_answers

LOADED = b'{"status": "loaded"}\n'


def test_a_complete_answer_without_its_newline_does_not_count() -> None:
    # a run killed after writing an answer's JSON but before its line break
    data = LOADED + b'{"i": 0, "value": {"int": "2"}}\n{"i": 1, "value": {"int": "3"}}'
    report = read_answers(data, 2)
    assert report.status == "loaded"
    assert report.answers[0].value() == 2
    assert 1 not in report.answers and 1 not in report.rejected


def test_the_same_answer_with_its_newline_counts() -> None:
    data = LOADED + b'{"i": 0, "value": {"int": "2"}}\n{"i": 1, "value": {"int": "3"}}\n'
    report = read_answers(data, 2)
    assert report.answers[1].value() == 3


def test_a_status_line_without_its_newline_is_no_status() -> None:
    assert read_answers(b'{"status": "loaded"}', 0).status == "no_status"
