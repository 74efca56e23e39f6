"""The sandbox for an ordinary user (a researcher's laptop is not root).

Both tests run a script in a child process that has no capabilities on the host: a user
namespace made by root with ``unshare(1)`` maps the script's uid 1000 onto root's files, so it
can start the same interpreter, but the kernel treats it as an unprivileged process. The
sandbox must then build its isolation from an unprivileged user namespace — or, where even
that is impossible, refuse to run code unless weaker isolation is accepted explicitly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("unshare"),
    reason="simulating an unprivileged user needs root and util-linux unshare",
)

PROBE = textwrap.dedent(
    """
    import json, os, socket
    out = {"uid": os.getuid(), "pid": os.getpid(),
           "cap_eff": open("/proc/self/status").read().split("CapEff:")[1].split()[0],
           "host_file": os.path.exists(HOST_FILE),
           "procs": {p: open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace")
                     for p in os.listdir("/proc") if p.isdigit()}}
    try:
        import costeer_lab
        out["costeer_lab"] = True
    except ImportError:
        out["costeer_lab"] = False
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1)
        out["net"] = "connected"
    except OSError as exc:
        out["net"] = exc.errno
    print(json.dumps(out))
    """
)


#: A host group that is not root's: ``hidepid`` lists every process to members of the proc
#: mount's group (gid 0), which the simulated user is in unless it is started with this one.
NOGROUP = 65534


def _as_user(script: str, host_group: int | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``script`` as uid 1000 of a user namespace without capabilities on the host (the
    host sees uid 0: it can read the checkout); ``host_group``: its host gid (default 0)."""
    return subprocess.run(
        ["unshare", "--user", "--map-user=1000", "--map-group=1000", sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        group=host_group,
        extra_groups=None if host_group is None else [],
    )


#: What a run can do with its PID namespace's init (process 1): each probe's result or errno.
INIT_PROBE = textwrap.dedent(
    """
    import json, os
    def probe(action):
        try:
            return action()
        except OSError as exc:
            return exc.errno
    def read(path):
        with open(path, "rb") as fh:
            return fh.read().decode(errors="replace")
    print(json.dumps({
        "pid": os.getpid(),
        "procs": sorted(p for p in os.listdir("/proc") if p.isdigit()),
        "root_link": probe(lambda: os.readlink("/proc/1/root")),
        "root_list": probe(lambda: os.listdir("/proc/1/root/")),
        "host_file": probe(lambda: read("/proc/1/root" + HOST_FILE)),
        "host_procs": probe(lambda: len(os.listdir("/proc/1/root/proc"))),
        "environ": probe(lambda: read("/proc/1/environ")),
        "cmdline": probe(lambda: read("/proc/1/cmdline")),
    }))
    """
)


def _sandbox_script(host_file: str, config: str = "") -> str:
    """A script running :data:`INIT_PROBE` in a sandbox (``config``: extra worker config
    entries, through a subclass: nothing a candidate can reach)."""
    return textwrap.dedent(
        f"""
        import json, os
        from costeer_lab import Workspace
        from costeer_lab.sandbox import Sandbox, Limits
        assert os.geteuid() != 0
        class Configured(Sandbox):
            def _config(self):
                return {{**super()._config(), {config}}}
        with Configured(Limits(wall_time_s=30), preimport=()) as sb:
            iso = dict(sb.isolation)
            r = sb.run(Workspace({{"main.py": {"HOST_FILE = " + repr(host_file) + INIT_PROBE!r}}}))
        print(json.dumps({{"iso": iso, "ok": r.ok, "isolation": r.isolation, "error": r.error,
                          "run": r.stdout, "err": r.stderr}}))
        """
    )


@pytest.mark.parametrize("host_group", [None, NOGROUP], ids=["root-group", "other-group"])
def test_a_rootless_run_cannot_use_its_namespace_init(
    tmp_path: os.PathLike[str], host_group: int | None
) -> None:
    """Without uid separation the init has the run's uid: were it dumpable (a ``sleep`` is,
    after ``exec``), ``/proc/1/root`` would hand the run the worker's root — the host's files,
    a venv to plant a ``.pth`` in, every host process. The init must be unusable; to a run
    outside root's group it is not even listed."""
    host_file = os.path.join(tmp_path, "host-secret.txt")
    with open(host_file, "w") as fh:
        fh.write("secret")
    os.chmod(tmp_path, 0o755)
    done = _as_user(_sandbox_script(host_file), host_group)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["ok"] and report["isolation"] == "full", report
    run = json.loads(report["run"])
    for probe in ("root_link", "root_list", "host_file", "host_procs", "environ"):
        assert isinstance(run[probe], int), (probe, run[probe])  # an errno: refused
    if host_group == NOGROUP:  # a real unprivileged user: the init is not even listed
        assert run["procs"] == [str(run["pid"])]
        assert isinstance(run["cmdline"], int)


def test_a_run_whose_init_is_usable_is_refused(tmp_path: os.PathLike[str]) -> None:
    """The child verifies its isolation before running candidate code: given the dumpable
    init of a test-only worker setting, it refuses, says why, and the run is not recorded as
    fully isolated."""
    host_file = os.path.join(tmp_path, "host-secret.txt")
    script = _sandbox_script(host_file, config='"test_only_dumpable_init": True')
    done = _as_user(script, NOGROUP)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["iso"]["level"] == "full"  # what the worker intended
    assert not report["ok"] and report["run"] == ""  # the candidate never ran
    assert "refused" in report["error"] and "/proc/1" in report["error"], report["error"]
    assert report["isolation"] not in ("full", "")


def test_an_unprivileged_user_gets_full_isolation(tmp_path: os.PathLike[str]) -> None:
    host_file = os.path.join(tmp_path, "secret.txt")
    with open(host_file, "w") as fh:
        fh.write("secret")
    os.chmod(tmp_path, 0o755)
    script = textwrap.dedent(
        f"""
        import json, os
        from costeer_lab import Workspace
        from costeer_lab.sandbox import Sandbox, Limits
        assert os.geteuid() != 0
        with Sandbox(Limits(wall_time_s=30), preimport=()) as sb:
            iso = dict(sb.isolation)
            r = sb.run(Workspace({{"main.py": "HOST_FILE = {host_file!r}\\n" + {PROBE!r}}}))
        print(json.dumps({{"iso": iso, "ok": r.ok, "isolation": r.isolation,
                          "run": r.stdout, "err": r.stderr}}))
        """
    )
    done = _as_user(script)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["ok"], report["err"]
    assert report["iso"]["level"] == "full" and report["iso"]["user_namespace"]
    assert report["isolation"] == "full"
    run = json.loads(report["run"])
    assert run["uid"] == 1000  # the user's own id, mapped
    assert run["cap_eff"] == "0000000000000000"  # every capability given up
    # alone in its PID namespace with its init (process 1), which it may see only here,
    # where the simulated user's group is the host's root group (hidepid exempts that group)
    assert run["pid"] == 2 and set(run["procs"]) <= {"1", "2"}
    assert all("costeer" not in cmd and "import" not in cmd for cmd in run["procs"].values())
    assert run["host_file"] is False and run["costeer_lab"] is False
    assert run["net"] != "connected"


def test_without_user_namespaces_the_sandbox_refuses_unless_told(tmp_path: object) -> None:
    """User namespaces nest at most 32 deep: a process at that depth cannot create one, a
    real kernel limit that stands in for a machine where they are disabled."""
    script = textwrap.dedent(
        """
        import json, os
        from costeer_lab.sandbox import _ns
        depth, uid = 0, os.getuid()
        while True:
            try:
                _ns.unshare(_ns.CLONE_NEWUSER)
            except OSError:
                break
            for name, text in (("setgroups", "deny"), ("uid_map", f"1000 {uid} 1"),
                               ("gid_map", f"1000 {uid} 1")):
                with open(f"/proc/self/{name}", "w") as fh:
                    fh.write(text)
            depth, uid = depth + 1, 1000
        from costeer_lab import Workspace
        from costeer_lab.errors import IsolationError
        from costeer_lab.sandbox import Sandbox, SandboxSettings
        out = {}
        try:
            Sandbox(preimport=()).start()
            out["refused"] = None
        except IsolationError as exc:
            out["refused"] = str(exc)
        with Sandbox(preimport=(), settings=SandboxSettings(allow_weak_isolation=True)) as sb:
            r = sb.run(Workspace({"main.py": "print(6 * 7)"}))
            out.update(ok=r.ok, stdout=r.stdout, isolation=r.isolation)
        print(json.dumps(out))
        """
    )
    done = _as_user(script)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["refused"] is not None
    assert "COSTEER_LAB_SANDBOX__ALLOW_WEAK_ISOLATION" in out["refused"]
    assert out["ok"] and out["stdout"] == "42\n"
    assert out["isolation"] == "none"  # recorded with the result
