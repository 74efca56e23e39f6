"""How many trading days an Alpha158 feature needs before its first value.

``Ref(x, n)`` is missing for the first ``n`` rows of an instrument, and a statistic of two or
more values (``Std``, ``Corr``, ``Slope``, ``Rsquare``, ``Resi``) is missing until two rows
exist. A panel with fewer days than a feature needs leaves *every* value of that feature
missing: a candidate that writes only NaN would then match the reference. The formulas decide
the minimum; ``tests/suites/test_alpha158_days.py`` checks it against the references.

Example:
    >>> first_value_day("Ref($close, 60)/$close"), first_value_day("Mean($close, 5)/$close")
    (61, 1)
    >>> first_value_day("Corr($close/Ref($close,1), Log($volume/Ref($volume, 1)+1), 5)")
    3
"""

from __future__ import annotations

import re

__all__ = ["first_value_day"]

_REF = re.compile(r"Ref\([^()]*?,\s*(\d+)\s*\)")
_PAIRWISE = re.compile(r"\b(Std|Corr|Slope|Rsquare|Resi)\(")


def first_value_day(formula: str) -> int:
    """The smallest number of rows of one instrument for which ``formula`` has a value on its
    last row: the longest ``Ref`` lag, plus 2 if it uses a statistic of two values, else 1."""
    lag = max((int(n) for n in _REF.findall(formula)), default=0)
    return lag + (2 if _PAIRWISE.search(formula) else 1)
