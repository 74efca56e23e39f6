"""The secret scan on document ingestion: a credential in a document is redacted (default) or
the document is refused, so the KB never hands a credential back to an agent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from costeer_lab.docs import DocumentKB
from costeer_lab.errors import InvalidInputError
from costeer_lab.settings import get_settings

# Built from parts so this file itself holds no literal token a scanner would flag.
AWS_KEY = "AKIA" + "Q3EGRWXYZ7PLMN4K"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PRIVATE_KEY = (
    "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"
)
PASSWORD = "hunter2-prod-db"

SECRETS = [
    ("AWS access key id", AWS_KEY, f"Set `AWS_ACCESS_KEY_ID={AWS_KEY}` before the upload."),
    ("GitHub token", GITHUB, f"The CI uses the token {GITHUB} to push tags."),
    ("private key block", "-----BEGIN RSA", f"Deploy key:\n\n```\n{PRIVATE_KEY}\n```"),
    ("password assignment", PASSWORD, f'```python\ndb_password = "{PASSWORD}"\n```'),
    ("password in a URL", "s3cr3tpw", "Connect to postgresql://lab:s3cr3tpw@db:5432/lab."),
]


def _doc(body: str) -> str:
    return f"# Deployment\n\nUploads go to the research bucket nightly.\n\n{body}\n\nDone.\n"


def _stored_text(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT CAST(data AS TEXT) FROM records").fetchall()
    finally:
        conn.close()
    return "\n".join(str(r[0]) for r in rows)


@pytest.mark.parametrize(("kind", "secret", "body"), SECRETS)
def test_a_secret_is_redacted_by_default(
    tmp_path: Path, kind: str, secret: str, body: str
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "deploy.md").write_text(_doc(body))
    db = tmp_path / "kb.db"
    kb = DocumentKB("ops", db_path=db)
    report = kb.ingest(tmp_path / "docs")
    assert (report.added, report.secrets_redacted) == (1, 1)
    hits = kb.retrieve("deployment upload bucket token key password", n_results=5)
    shown = "\n".join(h["content"] for h in hits)
    assert secret not in shown and f"[REDACTED {kind}]" in shown
    assert "research bucket" in shown  # the rest of the document is still there
    kb.close()
    assert secret not in _stored_text(db)  # not in any record of the store either


@pytest.mark.parametrize(("kind", "secret", "body"), SECRETS)
def test_refuse_mode_refuses_the_document(
    tmp_path: Path, kind: str, secret: str, body: str
) -> None:
    db = tmp_path / "kb.db"
    kb = DocumentKB("ops", db_path=db)
    kb.secrets = "refuse"
    with pytest.raises(InvalidInputError, match=f"refusing to ingest 'deploy.md'.*{kind}") as info:
        kb.add_text(_doc(body), path="deploy.md")
    assert secret not in str(info.value)
    kb.close()
    stored = _stored_text(db)
    assert "research bucket" not in stored and secret not in stored  # nothing was written


def test_refuse_mode_from_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTEER_LAB_DOCS__SECRETS", "refuse")
    get_settings.cache_clear()
    try:
        kb = DocumentKB("ops", db_path=tmp_path / "kb.db")
        with pytest.raises(InvalidInputError, match="AWS access key id on line 5"):
            kb.add_text(_doc(SECRETS[0][2]), path="deploy.md")
        assert kb.add_text(_doc("No secrets."), path="clean.md").added == 1
        kb.close()
    finally:
        monkeypatch.delenv("COSTEER_LAB_DOCS__SECRETS")
        get_settings.cache_clear()


def test_a_clean_document_is_ingested_unchanged(tmp_path: Path) -> None:
    kb = DocumentKB("ops", db_path=tmp_path / "kb.db")
    report = kb.add_text(_doc("Use `os.environ['AWS_ACCESS_KEY_ID']`."), path="ok.md")
    assert report.secrets_redacted == 0
    [hit] = kb.retrieve("research bucket", n_results=1)
    assert "os.environ['AWS_ACCESS_KEY_ID']" in hit["content"]
    kb.close()


def test_documents_ingested_in_redact_mode_are_rescanned_when_refusing(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text(_doc(SECRETS[0][2]))
    kb = DocumentKB("ops", db_path=tmp_path / "kb.db")
    assert kb.ingest(docs).secrets_redacted == 1
    kb.secrets = "refuse"  # the mode is part of a file's fingerprint: it is checked again
    with pytest.raises(InvalidInputError, match="AWS access key id"):
        kb.ingest(docs)
    kb.close()
