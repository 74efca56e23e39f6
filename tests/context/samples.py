"""Source texts the context tests document, write and run."""

from __future__ import annotations

from costeer_lab.context import Output

#: What the tool box's run_python returns for a run that exited 0.
RAN_OK = Output(True, "6", metadata={"returncode": 0})

SHAPES = '''"""Shapes and their areas, for the documentation tests."""

from __future__ import annotations

import functools
import math
import os.path
from dataclasses import dataclass

import numpy as np
from pandas import DataFrame


def plain(a, b: int = 2, *args: str, key: bool = False, **kw) -> int:
    """Sum with branches."""
    if a > b and key:
        return a
    elif a < 0 or b < 0:
        return -1
    for x in args:
        try:
            a += int(x)
        except ValueError:
            pass
    return a + b if kw else a


@functools.lru_cache(maxsize=None)
def cached(n: int) -> int:
    return n


async def fetch(url: str, /, retries: int = 3) -> bytes:
    """Fetch a URL."""
    while retries:
        retries -= 1
    return b"" if url else b"x"


def outer(x):
    def inner(y):
        if y:
            return y
        return 0

    return inner(x)


@dataclass(frozen=True)
class Shape(object):
    """A named shape."""

    name: str

    @property
    def label(self) -> str:
        """The label."""
        return self.name.upper()

    @staticmethod
    def unit() -> Shape:
        return Shape("unit")

    class Meta:
        """Nested options."""

        class Inner:
            def depth(self) -> int:
                return 2

    async def area(self) -> float:
        vals = [x for x in range(3) if x]
        return math.pi if vals else 0.0
'''

BROKEN = "def broken(:\n    pass\n"

DOCUMENTED = '''"""Greatest common divisor of two integers, by Euclid's algorithm."""


def gcd(a: int, b: int) -> int:
    """The largest integer dividing both ``a`` and ``b`` (``gcd(0, 0) == 0``)."""
    while b:
        a, b = b, a % b
    return abs(a)


if __name__ == "__main__":
    print(gcd(12, 18))
'''

UNDOCUMENTED = """def gcd(a, b):
    while b:
        a, b = b, a % b
    return abs(a)


print(gcd(12, 18))
"""
