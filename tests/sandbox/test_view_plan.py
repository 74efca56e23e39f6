"""The view plan names the parts of the Python environment under the paths each run replaces
with private mounts (a checkout and its ``.venv`` under ``/tmp``), which runs bind again, and
those it cannot show (under ``/proc``), which the sandbox warns about."""

from __future__ import annotations

import os
import sys
import warnings

import pytest

from costeer_lab.sandbox import _sandbox
from costeer_lab.sandbox._allowlist import resolve
from costeer_lab.sandbox._view import RUN_PRIVATE, plan


def test_an_environment_outside_the_private_paths_is_fully_visible() -> None:
    if any(os.path.realpath(sys.prefix).startswith(p + "/") for p in RUN_PRIVATE):
        pytest.skip(f"this environment itself lives under a run-private path: {sys.prefix}")
    assert plan(resolve(["numpy", "pandas", "pyarrow", "tables"]))["shadowed"] == []


def test_a_site_directory_under_tmp_is_reported_and_rebound_without_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    site = "/tmp/checkout/.venv/lib/python3.11/site-packages"
    view = plan({site: ["tables"], "/opt/env/site-packages": ["numpy"]})
    # (the interpreter's own parts are shadowed too when this checkout lies under /tmp)
    assert site in view["shadowed"] and view["hidden"] == []
    assert "/opt/env/site-packages" not in view["shadowed"]
    other = "/var/tmpfiles/site-packages"
    assert other not in plan({other: ["x"]})["shadowed"]  # not /var/tmp

    monkeypatch.setattr(_sandbox, "resolve", lambda packages: {site: ["tables"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _sandbox._planned_view(("tables",))


def test_a_site_directory_under_proc_is_warned_about(monkeypatch: pytest.MonkeyPatch) -> None:
    site = "/proc/odd/site-packages"
    monkeypatch.setattr(_sandbox, "resolve", lambda packages: {site: ["tables"]})
    with pytest.warns(RuntimeWarning, match="runs cannot see /proc/odd"):
        assert _sandbox._planned_view(("tables",))["hidden"] == [site]
