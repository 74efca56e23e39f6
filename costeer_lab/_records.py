"""Deprecated alias of :mod:`costeer_lab.records`, where the records are defined.

Kept so that existing ``from costeer_lab._records import Task`` imports keep working (the same
classes, not copies); new code imports from :mod:`costeer_lab.records`.
"""

from costeer_lab.records import *  # noqa: F403
from costeer_lab.records import __all__ as __all__
