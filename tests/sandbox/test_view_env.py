"""A Python environment under a path each run replaces with a private mount (``/tmp``).

A checkout with its ``.venv`` under ``/tmp`` is common (CI, scratch clones). Each run mounts a
private ``/tmp``; the parts of the environment beneath it must still be in the run's view —
what the allowlist allows of them, and nothing else of the host's ``/tmp``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")

PROBE = textwrap.dedent(
    """
    import importlib.util, json, os
    out = {"forbidden": importlib.util.find_spec("isoforbidden") is not None,
           "secret": os.path.exists(SECRET)}
    try:
        import isoallowed
        out["allowed"] = isoallowed.VALUE
    except ImportError as exc:
        out["allowed"] = repr(exc)
    out["tmp"] = sorted(os.path.relpath(os.path.join(d, n), "/tmp")
                        for d, dirs, files in os.walk("/tmp") for n in dirs + files)
    print(json.dumps(out))
    """
)


def _package(site: Path, name: str) -> None:
    """A minimal installed distribution ``name`` (one module package) in ``site``."""
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text(f"VALUE = {name!r}\n")
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "top_level.txt").write_text(name + "\n")
    records = [f"{name}/__init__.py", f"{info.name}/METADATA", f"{info.name}/top_level.txt"]
    (info / "RECORD").write_text("".join(f"{r},,\n" for r in [*records, f"{info.name}/RECORD"]))


@pytest.fixture
def venv_under_tmp() -> Iterator[Path]:
    """A virtual environment in ``/tmp/<dir>/venv`` (``tmp_path`` may lie elsewhere) whose
    site-packages holds an allowed and a forbidden package, and a secret file beside it."""
    top = Path(tempfile.mkdtemp(prefix="costeer-env-", dir="/tmp"))
    try:
        os.chmod(top, 0o755)
        venv = top / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = _site_packages(venv)
        _package(site, "isoallowed")
        _package(site, "isoforbidden")
        (top / "secret.txt").write_text("secret")
        yield venv
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def _script(secret: Path) -> str:
    return textwrap.dedent(
        f"""
        import json, warnings
        from costeer_lab import Workspace
        from costeer_lab.sandbox import Sandbox, Limits
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with Sandbox(Limits(wall_time_s=30), packages=["isoallowed"], preimport=()) as sb:
                r = sb.run(Workspace({{"main.py": {"SECRET = " + repr(str(secret)) + PROBE!r}}}))
        print(json.dumps({{"ok": r.ok, "isolation": r.isolation, "run": r.stdout,
                          "err": r.stderr, "error": r.error,
                          "warnings": [str(w.message) for w in caught]}}))
        """
    )


def _rootless_prefix() -> list[str]:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("simulating an unprivileged user needs root and util-linux unshare")
    return ["unshare", "--user", "--map-user=1000", "--map-group=1000"]


def _visible(venv: Path) -> set[str]:
    """What of ``/tmp`` a run may see (paths relative to it): the directories down to the
    environment's parts, its ``bin`` and ``pyvenv.cfg``, and the allowed package."""
    site = _site_packages(venv)
    parts = [
        venv / "bin",
        venv / "pyvenv.cfg",
        site / "isoallowed",
        site / "isoallowed-1.0.dist-info",
    ]
    seen = set()
    for part in parts:
        seen |= {str(p) for p in part.parents if p.is_relative_to("/tmp") and p != Path("/tmp")}
        seen.add(str(part))
        if part.is_dir():
            seen |= {os.path.join(d, n) for d, dirs, files in os.walk(part) for n in dirs + files}
    return {os.path.relpath(p, "/tmp") for p in seen}


@pytest.mark.parametrize("mode", ["as-is", "rootless"])
def test_an_environment_under_tmp_is_in_the_view(venv_under_tmp: Path, mode: str) -> None:
    """A sandbox started from a venv under ``/tmp``: the run imports the allowlisted package
    from that venv (not pre-imported: from its view), not the other package beside it, and
    sees nothing else of the host's ``/tmp``."""
    prefix = _rootless_prefix() if mode == "rootless" else []
    secret = venv_under_tmp.parent / "secret.txt"
    deps = [p for p in sys.path if p.endswith("site-packages")]  # the caller's own imports
    done = subprocess.run(
        [*prefix, str(venv_under_tmp / "bin" / "python"), "-c", _script(secret)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), *deps])},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["ok"] and report["isolation"] == "full", report
    run = json.loads(report["run"])
    assert run["allowed"] == "isoallowed"
    assert run["forbidden"] is False and run["secret"] is False
    rel = os.path.relpath(_site_packages(venv_under_tmp), "/tmp")
    assert f"{rel}/isoallowed/__init__.py" in run["tmp"]
    assert set(run["tmp"]) <= _visible(venv_under_tmp)
    assert report["warnings"] == []  # nothing of the environment is hidden from runs
