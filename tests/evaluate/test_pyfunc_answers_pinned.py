"""``read_answers``: "only complete lines count" (its documented rule), pinned."""

from __future__ import annotations

import json

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


def test_long_texts_of_a_raised_answer_are_cut_to_their_limits() -> None:
    name, message = "E" * 201, "m" * 501
    line = json.dumps({"i": 0, "raised": name, "message": message, "base": "ValueError"})
    answer = read_answers(LOADED + line.encode() + b"\n", 1).answers[0]
    assert answer.type_name == "E" * 197 + "..."
    assert answer.message == "m" * 497 + "..."
    assert answer.base == "ValueError"
    # exactly at the limit: kept whole
    line = json.dumps({"i": 0, "raised": "E" * 200, "message": "m" * 500})
    answer = read_answers(LOADED + line.encode() + b"\n", 1).answers[0]
    assert (answer.type_name, answer.message) == ("E" * 200, "m" * 500)


def test_a_non_text_message_or_error_is_empty() -> None:
    line = json.dumps({"i": 0, "raised": "ValueError", "message": 3})
    assert read_answers(LOADED + line.encode() + b"\n", 1).answers[0].message == ""
    report = read_answers(b'{"status": "load_error", "error": ["x"]}\n', 1)
    assert (report.status, report.error) == ("load_error", "")


def test_a_read_within_its_budget_refuses_nothing() -> None:
    report = read_answers(LOADED + b'{"i": 0, "value": {"int": "2"}}\n', 1)
    assert report.refused == ""
    assert read_answers(None, 1).status == "no_status"


def test_lines_that_are_no_json_object_answer_nothing() -> None:
    data = LOADED + b'[0, {"int": "2"}]\n"x"\n{"i": 0, "value": {"int": "2"}}\n'
    report = read_answers(data, 1)
    assert report.answers[0].value() == 2 and not report.rejected


def test_an_answer_without_a_known_kind_is_rejected() -> None:
    data = LOADED + b'{"i": 0, "other": 1}\n{"i": 1, "unencodable": 5}\n'
    report = read_answers(data, 2)
    assert not report.answers and report.rejected == {0, 1}
