"""The secret scan of document ingestion: the KB never hands a credential back to an agent.

Every document is scanned before it is chunked, with the memory's credential rules
(:func:`costeer_lab._credentials.credential_spans`: AWS keys, private key blocks, GitHub /
GitLab / Slack / OpenAI-style tokens, passwords in URLs and assignments, …). What happens to a
document holding one is the ``docs.secrets`` setting (or :attr:`DocumentKB.secrets`):

* ``"redact"`` (default): each secret is replaced by ``[REDACTED <kind>]`` and the rest of the
  document is ingested as it was; :class:`~costeer_lab.docs.IngestReport` counts the
  replacements (``secrets_redacted``).
* ``"refuse"``: the document is not ingested — ``InvalidInputError`` naming the file, the kind
  of secret and its line (never the secret); nothing of its batch is written.
"""

from __future__ import annotations

from typing import Literal

from costeer_lab._credentials import redact_credentials
from costeer_lab.errors import InvalidInputError

__all__ = ["SecretsMode", "screen_secrets"]

SecretsMode = Literal["redact", "refuse"]


def screen_secrets(text: str, path: str, mode: SecretsMode) -> tuple[str, int]:
    """``text`` as the KB may store it under ``mode``, and the number of secrets redacted.

    Example:
        >>> screen_secrets('token = "ghp_' + 36 * "a" + '"', "notes.md", "redact")
        ('token = "[REDACTED GitHub token]"', 1)
        >>> screen_secrets("no secrets here", "notes.md", "refuse")
        ('no secrets here', 0)
    """
    if mode not in ("redact", "refuse"):
        raise InvalidInputError(f"docs secrets mode must be 'redact' or 'refuse', got {mode!r}")
    clean, found = redact_credentials(text)
    if not found:
        return text, 0
    if mode == "refuse":
        listed = ", ".join(f.describe() for f in found[:5])
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        raise InvalidInputError(
            f"refusing to ingest {path!r}: it contains {listed}{more}; the document KB never "
            "stores credentials (remove them, or set docs.secrets to 'redact' to store the "
            "document with each secret replaced)"
        )
    return clean, len(found)
