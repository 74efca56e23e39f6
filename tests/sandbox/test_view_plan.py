"""The view plan names what a run could not see: parts of the Python environment under the
paths each run replaces with private mounts (a checkout and its ``.venv`` under ``/tmp``)."""

from __future__ import annotations

import os
import sys

import pytest

from costeer_lab.sandbox import _sandbox
from costeer_lab.sandbox._allowlist import resolve
from costeer_lab.sandbox._view import RUN_PRIVATE, plan


def test_an_environment_outside_the_private_paths_is_fully_visible() -> None:
    if any(os.path.realpath(sys.prefix).startswith(p + "/") for p in RUN_PRIVATE):
        pytest.skip(f"this environment itself lives under a run-private path: {sys.prefix}")
    assert plan(resolve(["numpy", "pandas", "pyarrow", "tables"]))["shadowed"] == []


def test_a_site_directory_under_tmp_is_reported_and_warned_about(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    site = "/tmp/checkout/.venv/lib/python3.11/site-packages"
    view = plan({site: ["tables"], "/opt/env/site-packages": ["numpy"]})
    assert view["shadowed"] == [site]
    assert plan({"/var/tmpfiles/site-packages": ["x"]})["shadowed"] == []  # not /var/tmp

    monkeypatch.setattr(_sandbox, "resolve", lambda packages: {site: ["tables"]})
    with pytest.warns(RuntimeWarning, match="runs cannot see /tmp/checkout"):
        _sandbox._planned_view(("tables",))
