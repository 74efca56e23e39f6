"""The credential scanner of the memory: :mod:`costeer_lab._credentials` (shared with the
document KB, which redacts or refuses what it finds in ingested files).

Example:
    >>> scan_credentials("x = 1")
    []
"""

from __future__ import annotations

from costeer_lab._credentials import SecretFinding, scan_credentials

__all__ = ["SecretFinding", "scan_credentials"]
