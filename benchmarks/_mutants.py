"""Mutation operators: one root cause each, applied to reference solutions of real functions.

Each operator makes one small edit of a known kind in a reference solution (a HumanEval
canonical solution or an Alpha158 factor script) and names the mistake it plants: the *cause*
of the failure the mutant will show. The operators, not the fingerprints, define the causes;
an operator knows nothing of the error text the mutant will produce, and a mutant may fail in
a way its operator did not aim at (an off-by-one index can give a wrong value instead of an
``IndexError``): that is part of the measurement.

======================  ======================================================================
cause                   edit
======================  ======================================================================
``undefined_name``      one use of a local name misspelt (``numbers`` → ``numbres``)
``missing_import``      a module used without its import (``import numpy as np`` removed, or
                        ``abs(x)`` → ``np.abs(x)`` / ``math.fabs(x)`` with no import)
``missing_module``      an import of a package the run cannot import (``import scipy.stats``)
``attribute_typo``      a misspelt attribute or method (``.append`` → ``.appned``)
``wrong_arity``         a call with one argument too many, or one too few for the code's own
                        functions
``type_mix``            an operand turned into a string (``a - b`` → ``str(a) - b``)
``index_past_end``      an index replaced by the length (``xs[i]`` → ``xs[len(xs)]``)
``zero_division``       a divisor replaced by zero
``wrong_key``           a string key misspelt (``df["close"]`` → ``df["Close"]``)
``unpack_mismatch``     one target too many (or too few) in a tuple unpacking
``syntax_typo``         a ``:`` or a closing bracket deleted
``none_value``          a call's result replaced by ``None`` (a function that returns nothing)
``logic_error``         a comparison flipped or a constant changed by one
======================  ======================================================================
"""

from __future__ import annotations

import ast
import random
from collections.abc import Iterator
from dataclasses import dataclass

from benchmarks._mutation_ops import OPERATORS, Scope, factor_lines, syntax_typo

__all__ = ["CAUSES", "Mutant", "mutants", "mutate"]

#: Every cause, in a fixed order (``syntax_typo`` edits the text, not the tree).
CAUSES = (*OPERATORS, "syntax_typo")


@dataclass(frozen=True)
class Mutant:
    """One mutated solution: the function it came from, the cause planted, the code."""

    function: str
    cause: str
    code: str


def mutate(function: str, code: str, cause: str, suite: str, seed: int) -> Mutant | None:
    """A mutant of ``code`` planting ``cause``, or ``None`` when the code offers no site.

    Example:
        >>> m = mutate("f", "def f(xs):\\n    return xs[0]\\n", "index_past_end", "humaneval", 0)
        >>> m.code
        'def f(xs):\\n    return xs[len(xs)]'
    """
    rng = random.Random(f"{seed}:{function}:{cause}")
    tree = ast.parse(code)
    if cause == "syntax_typo":
        text = syntax_typo(code, factor_lines(tree, suite), rng)
        return None if text is None else Mutant(function, cause, text)
    if not OPERATORS[cause](Scope(tree, suite), suite, rng):
        return None
    new = ast.unparse(ast.fix_missing_locations(tree))
    return None if new == ast.unparse(ast.parse(code)) else Mutant(function, cause, new)


def mutants(
    functions: list[tuple[str, str]], suite: str, seed: int, causes: tuple[str, ...] = CAUSES
) -> Iterator[Mutant]:
    """One mutant per (function, cause) where the function offers a site."""
    for name, code in functions:
        for cause in causes:
            m = mutate(name, code, cause, suite, seed)
            if m is not None:
                yield m
