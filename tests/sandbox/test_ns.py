"""Isolation primitives of the sandbox worker, with real processes (root only where needed)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="uid sweeps need root on Linux",
)

UID = 62990  # outside the sandbox's slot range (62000-62063), so no worker ever uses it


def test_sweep_kills_every_process_of_the_uid_and_only_those() -> None:
    """The sweep runs in a process that, like the worker, holds extra threads; it must kill
    all processes of the target uid (also ones in their own session) and leave the caller's
    threads and the caller itself as root."""
    script = textwrap.dedent(
        f"""
        import os, subprocess, sys, threading, time
        from costeer_lab.sandbox._ns import sweep_uid

        stop = threading.Event()
        helpers = [threading.Thread(target=stop.wait) for _ in range(3)]
        for t in helpers:
            t.start()
        def as_uid():
            os.setsid()
            os.setgid({UID})
            os.setuid({UID})
        victims = [subprocess.Popen(["sleep", "60"], preexec_fn=as_uid) for _ in range(3)]
        bystander = subprocess.Popen(["sleep", "60"])
        time.sleep(0.2)
        sweep_uid({UID})
        codes = [v.wait(10) for v in victims]
        alive = bystander.poll() is None
        bystander.kill()
        stop.set()
        for t in helpers:
            t.join()
        print(codes, alive, os.getresuid())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == ["[-9,", "-9,", "-9]", "True", "(0,", "0,", "0)"], out.stderr
