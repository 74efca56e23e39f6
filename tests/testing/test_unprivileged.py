"""The red team's unprivileged runner: a real non-root uid, no capabilities, a minimal view.

``run_as_unprivileged`` is started by root; the command must run with a non-zero uid (real,
effective, saved and file-system), an empty effective and permitted capability set, its own
``HOME``/``TMPDIR`` owned by that uid, and still reach the interpreter and the checkout (even
when they live under a directory it may not traverse, like ``/root``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from costeer_lab.testing._unprivileged import blocked_ancestors, run_as_unprivileged

ROOT = Path(__file__).resolve().parents[2]

needs_root = pytest.mark.skipif(
    not sys.platform.startswith("linux")
    or os.geteuid() != 0
    or not shutil.which("unshare")
    or not shutil.which("useradd"),
    reason="needs root, util-linux unshare and useradd",
)

PROBE = textwrap.dedent(
    """
    import json, os
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
    import costeer_lab
    home = os.environ["HOME"]
    print(json.dumps({
        "uid": status["Uid"].split(), "gid": status["Gid"].split(),
        "cap_eff": status["CapEff"].strip(), "cap_prm": status["CapPrm"].strip(),
        "groups": status["Groups"].split(), "home_owner": os.stat(home).st_uid,
        "tmp_writable": os.access(os.environ["TMPDIR"], os.W_OK),
        "package": os.path.dirname(costeer_lab.__file__),
    }))
    """
)


@needs_root
def test_the_command_runs_as_a_non_root_uid_without_capabilities() -> None:
    done = run_as_unprivileged([sys.executable, "-c", PROBE], cwd=ROOT, timeout_s=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    uids = {int(u) for u in seen["uid"]}
    assert len(uids) == 1 and 0 not in uids, seen
    assert 0 not in {int(g) for g in seen["gid"]} and seen["groups"] == [], seen
    assert int(seen["cap_eff"], 16) == 0 and int(seen["cap_prm"], 16) == 0, seen
    assert seen["home_owner"] in uids and seen["tmp_writable"], seen
    assert seen["package"] == str(ROOT / "costeer_lab"), seen


def test_blocked_ancestors_names_the_topmost_closed_directory() -> None:
    base = Path(tempfile.mkdtemp(prefix="costeer-blocked-", dir="/tmp"))  # /tmp is traversable
    try:
        closed = base / "closed"
        inner = closed / "a" / "b"
        inner.mkdir(parents=True)
        base.chmod(0o755)
        closed.chmod(0o700)
        (closed / "a").chmod(0o700)
        uid = 65534 if os.geteuid() == 0 else os.geteuid() + 1  # not the owner
        assert blocked_ancestors([inner, closed / "a"], uid, uid) == [str(closed)]
        assert blocked_ancestors([base], uid, uid) == []
    finally:
        shutil.rmtree(base, ignore_errors=True)
