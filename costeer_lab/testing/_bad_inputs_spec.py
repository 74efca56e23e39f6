"""Bad inputs: spec values and types (strict types, ranges, pairs of fields, target leaks).

Gathered by :mod:`costeer_lab.testing._bad_inputs` (see ``_bad_inputs_base`` for the shape).
"""

from __future__ import annotations

from typing import Any

from costeer_lab.testing._bad_inputs_base import BadInput

#: The cases of this module.
CASES: tuple[BadInput, ...] = ()
#: Spec file stem -> spec document (written to ``specs/<stem>.yaml``).
SPECS: dict[str, Any] = {}
#: Workspace-relative path -> content (text, bytes, or a document written as YAML).
FILES: dict[str, Any] = {}
