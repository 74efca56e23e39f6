"""Checks of suite options (``suite_options`` of a spec), with errors that name the option.

Example:
    >>> whole_number("humaneval", "limit", 3, minimum=1)
    3
    >>> whole_number("humaneval", "limit", -1, minimum=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    costeer_lab.errors.InvalidInputError: humaneval option limit: expected a whole number >= 1...
"""

from __future__ import annotations

from typing import Any

from costeer_lab.errors import InvalidInputError

__all__ = ["whole_number"]


def whole_number(
    suite: str,
    option: str,
    value: Any,
    *,
    minimum: int,
    maximum: int | None = None,
    hint: str = "",
) -> int:
    """``value`` if it is a whole number in ``[minimum, maximum]`` (not a boolean, not text).

    Raises:
        InvalidInputError: ``"<suite> option <option>: expected a whole number >= <minimum>,
            got <value>"`` (plus ``hint``).
    """
    bound = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        raise InvalidInputError(
            f"{suite} option {option}: expected a whole number {bound}, got {value!r}{hint}"
        )
    return value
