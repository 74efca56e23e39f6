"""Settings of the rich task context (section ``context``; env names like
``COSTEER_LAB_CONTEXT__MAX_ACTIONS=60``).

Example:
    >>> ContextSettings().max_actions, ContextSettings().max_repeats
    (40, 3)
"""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["ContextSettings"]


class ContextSettings(BaseModel):
    """Loop prevention and completion thresholds of :mod:`costeer_lab.context`."""

    #: A task is stopped once it has this many actions.
    max_actions: int = Field(default=40, ge=1)
    #: A task is stopped when the same action (type and inputs) has been taken this many times.
    max_repeats: int = Field(default=3, ge=2)
    #: A task is stopped after this many ``validate`` actions.
    max_validations: int = Field(default=5, ge=1)
    #: A task with more than ``stall_min_actions`` actions is stopped when it gathered no new
    #: evidence during the last ``stall_seconds`` seconds.
    stall_seconds: float = Field(default=60.0, gt=0)
    stall_min_actions: int = Field(default=5, ge=0)
    #: Documentation counts for completion when longer than this many characters.
    doc_min_chars: int = Field(default=50, ge=0)
    #: Evidence counts for completion at this confidence or above.
    min_confidence: float = Field(default=0.5, ge=0.0, le=1.0)
