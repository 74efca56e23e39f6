"""The bundled PostgreSQL test server: sized as asked, and a bad size is a clear error that
leaves nothing running."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from costeer_lab.testing import PostgresTestServer, PostgresUnavailable
from costeer_lab.testing._postgres import URL_ENV

pytestmark = pytest.mark.skipif(
    bool(os.environ.get(URL_ENV, "").strip()), reason="sizes apply to the bundled server only"
)


def _setting(url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(f"SHOW {name}").fetchone()
    assert row is not None
    return str(row[0])


def _postgres_pids() -> set[int]:
    """Server processes (``postgres -D DATADIR``), not their per-connection children."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # not a process, or it just ended
            continue
        if argv[0].endswith(b"/postgres") and b"-D" in argv:
            found.add(int(entry.name))
    return found


def test_server_is_sized_as_asked(postgres_server: PostgresTestServer) -> None:
    # the session server has PostgreSQL's default cache and the larger index-build memory
    assert _setting(postgres_server.admin_url, "shared_buffers") == "128MB"
    assert _setting(postgres_server.admin_url, "maintenance_work_mem") == "512MB"
    with PostgresTestServer(shared_buffers="200MB", maintenance_work_mem="300MB") as server:
        url = server.create_database("sized")
        assert _setting(url, "shared_buffers") == "200MB"  # took effect: the server restarted
        assert _setting(url, "maintenance_work_mem") == "300MB"
        assert _setting(url, "fsync") == "off"


def test_a_bad_size_names_the_setting_and_leaves_nothing_behind(
    postgres_server: PostgresTestServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the server's data directory goes to this test's own temp folder, where no other
    # process's servers appear
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    running = _postgres_pids()
    with pytest.raises(PostgresUnavailable, match="shared_buffers"):
        PostgresTestServer(shared_buffers="lots")
    assert list(tmp_path.iterdir()) == [], "a data directory is left"
    assert _postgres_pids() <= running, "the server that failed to start is still running"
