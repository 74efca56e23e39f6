"""Read a YAML or JSON document strictly: UTF-8 text only, no duplicate keys, JSON by JSON rules.

Specs and task files are typed by hand. PyYAML keeps the last of two equal keys and reads a
``.json`` file's trailing comma as valid YAML; a UTF-16 file ends in a ``UnicodeDecodeError``.
:func:`read_utf8` and :func:`parse_document` refuse each with one line that names the file,
the line and what to do.

Example:
    >>> parse_document("a: 1\\nb: 2\\n", json_file=False)
    {'a': 1, 'b': 2}
    >>> parse_document("a: 1\\na: 2\\n", json_file=False)
    Traceback (most recent call last):
    ...
    costeer_lab.errors.InvalidInputError: line 2, column 1: duplicate key 'a' (first on line 1)
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import yaml

from costeer_lab.errors import InvalidInputError

__all__ = ["StrictSafeLoader", "parse_document", "read_utf8"]

#: Byte-order marks of encodings that are not UTF-8 (longest first: UTF-32 LE starts like
#: UTF-16 LE).
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


class StrictSafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping with two equal keys (merge keys ``<<`` may
    still be overridden, as YAML intends)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the parent method reports it
                continue
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first on line {first + 1})",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def read_utf8(path: Path, what: str) -> str:
    """The text of ``path``, which must be UTF-8 (a UTF-8 byte-order mark is dropped).

    Raises:
        InvalidInputError: ``"<what> '<path>' is not UTF-8 text (found a UTF-16 byte-order
            mark); save it as UTF-8"`` or the offset of the first byte that is not UTF-8.
    """
    data = path.read_bytes()
    for bom, name in _BOMS:
        if data.startswith(bom):
            raise InvalidInputError(
                f"{what} {str(path)!r} is not UTF-8 text (found a {name} byte-order mark); "
                "save it as UTF-8"
            )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{what} {str(path)!r} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}); save it as UTF-8"
        ) from None


def parse_document(text: str, *, json_file: bool) -> Any:
    """Parse ``text`` as JSON (``json_file``) or YAML, refusing duplicate keys.

    Raises:
        InvalidInputError: ``"line L, column C: <problem>"``.
    """
    try:
        if json_file:
            return json.loads(text, object_pairs_hook=_no_duplicates)
        return yaml.load(text, Loader=StrictSafeLoader)  # a SafeLoader subclass
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except ValueError as exc:  # a duplicate key of a JSON object
        raise InvalidInputError(f"{exc} in a JSON object") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        raise InvalidInputError(f"{where}{problem}") from None
