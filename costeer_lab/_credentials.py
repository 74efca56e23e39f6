"""A scanner for credentials in text: what the memories must never store or hand to an agent.

Used by the pattern and failure memory (which refuse what it finds) and by the document KB
(which redacts or refuses credentials in ingested files, :func:`redact_credentials`).

Each rule names a *kind* of secret (``"AWS access key id"``, ``"GitHub token"``, …). Findings
carry the kind and the line number only; the matched text is never kept, so no message, log or
exception can echo a secret.

Rules (a match anywhere in the text):

===============================  ==========================================================
kind                             what matches
===============================  ==========================================================
AWS access key id                ``AKIA``/``ASIA``/… followed by 16 upper-case letters/digits
AWS secret access key            ``aws_secret_access_key = "<40 base64 chars>"``
GitHub token                     ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36 chars,
                                 ``github_pat_…``
GitLab token                     ``glpat-`` + 20 chars (also ``gldt-``, ``glrt-``)
OpenAI-style API key             ``sk-`` (``sk-proj-``, ``sk-ant-``…) + 20 or more chars
Slack token                      ``xoxb-``/``xoxp-``/``xoxa-``/``xoxr-``/``xoxs-``…, Slack
                                 webhook URLs
Google API key                   ``AIza`` + 35 chars
Stripe live key                  ``sk_live_``/``rk_live_`` + 24 or more chars
private key block                ``-----BEGIN … PRIVATE KEY-----``
JSON web token                   three base64url parts, the first two starting ``eyJ``
password in a URL                ``scheme://user:password@host``
password assignment              ``password``/``passwd``/``secret``/``api_key``/``*_token``/…
                                 assigned a string literal of 4+ characters that is not an
                                 obvious placeholder (``<…>``, ``{…}``, ``***``, ``xxxx``,
                                 ``changeme`` is *not* a placeholder)
===============================  ==========================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "REDACTED",
    "SecretFinding",
    "credential_spans",
    "redact_credentials",
    "scan_credentials",
]

#: What :func:`redact_credentials` puts in place of a secret (``{kind}``: its kind).
REDACTED = "[REDACTED {kind}]"


@dataclass(frozen=True)
class SecretFinding:
    """One credential found: its kind and the 1-based line it is on (never the secret itself).

    Example:
        >>> SecretFinding("GitHub token", 3).describe()
        'a GitHub token on line 3'
    """

    kind: str
    line: int

    def describe(self) -> str:
        article = "an" if self.kind[0].lower() in "aeiou" else "a"
        return f"{article} {self.kind} on line {self.line}"


_B64 = r"[A-Za-z0-9/+=]"
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    (
        "AWS access key id",
        re.compile(
            r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Z0-9])"
        ),
    ),
    (
        "AWS secret access key",
        re.compile(
            rf"(?i)aws_?secret(?:_?access)?_?key\W{{0,4}}[:=]\s*['\"]?{_B64}{{40}}(?!{_B64})"
        ),
    ),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{22,})")),
    ("GitLab token", re.compile(r"\b(?:glpat|gldt|glrt|glptt)-[A-Za-z0-9_\-]{20,}")),
    ("Slack token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    (
        "Slack webhook URL",
        re.compile(r"https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/\w+"),
    ),
    ("Stripe live key", re.compile(r"\b(?:sk|rk)_live_[A-Za-z0-9]{24,}")),
    ("OpenAI-style API key", re.compile(r"(?<![\w-])sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{20,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    (
        "JSON web token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    (
        "password in a URL",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@'\"]+:([^/\s@'\"]{3,})@[^\s/'\"]+"),
    ),
)
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9])[\w.\[\]'\"-]*?"
    r"(?:password|passwd|pwd|passphrase|secret|api_?key|access_?key|auth_?token|access_?token"
    r"|private_?key|client_?secret|(?:api|bearer|refresh|session)_?token)['\"]?\s*(?::|=|:=)\s*[rbuRBU]?(['\"])(?P<value>.*?)\1"
)
_PLACEHOLDER = re.compile(
    r"^(?:<[^>]*>|\{[^}]*\}|\$\{?\w+\}?|%\(?\w*\)?s|\*+|x+|X+|\.+|-+|none|null|dummy"
    r"|example|placeholder|your[_ -].*|redacted|\[REDACTED [^\]]*\]|test)$",
    re.IGNORECASE,
)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def scan_credentials(text: str) -> list[SecretFinding]:
    """Credentials found in ``text``, in order of position (one finding per kind and line).

    Args:
        text: code or any other text.

    Returns:
        The findings; empty when the text looks clean. Matched secrets are not kept.

    Example:
        >>> scan_credentials('KEY = "AKIA' + 'ABCDEFGHIJKLMNOP"')
        [SecretFinding(kind='AWS access key id', line=1)]
        >>> scan_credentials("df['close'].rolling(5).mean()")
        []
    """
    if not isinstance(text, str):
        raise TypeError(f"scan_credentials expects a str, got {type(text).__name__}")
    hits: dict[tuple[int, str], int] = {}
    for kind, pattern in _RULES:
        for m in pattern.finditer(text):
            if kind == "password in a URL" and _PLACEHOLDER.match(m.group(1)):
                continue
            key = (_line_of(text, m.start()), kind)
            hits.setdefault(key, m.start())
    for m in _ASSIGNMENT.finditer(text):
        value = m.group("value")
        if len(value) < 4 or _PLACEHOLDER.match(value.strip()):
            continue
        line = _line_of(text, m.start("value"))
        if not any(found_line == line for found_line, _ in hits):
            hits.setdefault((line, "password assignment"), m.start())
    ordered = sorted(hits.items(), key=lambda item: item[1])
    return [SecretFinding(kind, line) for (line, kind), _ in ordered]


def credential_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every secret in ``text``, sorted and without overlaps.

    The span covers the secret itself: the whole token of a key or token rule, the password of
    a URL, the string value of a password assignment (not the name it is assigned to).

    Example:
        >>> text = 'password = "hunter22"'
        >>> [(text[a:b], kind) for a, b, kind in credential_spans(text)]
        [('hunter22', 'password assignment')]
    """
    if not isinstance(text, str):
        raise TypeError(f"credential_spans expects a str, got {type(text).__name__}")
    spans: list[tuple[int, int, str]] = []
    for kind, pattern in _RULES:
        for m in pattern.finditer(text):
            if kind == "password in a URL":
                if _PLACEHOLDER.match(m.group(1)):
                    continue
                spans.append((m.start(1), m.end(1), kind))
            else:
                spans.append((m.start(), m.end(), kind))
    for m in _ASSIGNMENT.finditer(text):
        value = m.group("value")
        if len(value) < 4 or _PLACEHOLDER.match(value.strip()):
            continue
        spans.append((m.start("value"), m.end("value"), "password assignment"))
    spans.sort(key=lambda s: (s[0], -s[1]))
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in spans:
        if merged and start < merged[-1][1]:  # overlaps the previous secret: widen it
            prev = merged[-1]
            merged[-1] = (prev[0], max(prev[1], end), prev[2])
        else:
            merged.append((start, end, kind))
    return merged


def redact_credentials(text: str) -> tuple[str, list[SecretFinding]]:
    """``text`` with every secret replaced by ``[REDACTED <kind>]``, and what was replaced.

    Everything else (the name a password was assigned to, the rest of a URL, the line
    structure) stays, so the text still reads as it did, without the secret.

    Example:
        >>> redact_credentials('aws_key = "AKIA' + 'ABCDEFGHIJKLMNOP"  # prod')[0]
        'aws_key = "[REDACTED AWS access key id]"  # prod'
        >>> redact_credentials("nothing here")
        ('nothing here', [])
    """
    spans = credential_spans(text)
    if not spans:
        return text, []
    parts: list[str] = []
    findings: list[SecretFinding] = []
    pos = 0
    for start, end, kind in spans:
        parts.append(text[pos:start])
        parts.append(REDACTED.format(kind=kind))
        findings.append(SecretFinding(kind, _line_of(text, start)))
        pos = end
    parts.append(text[pos:])
    return "".join(parts), findings
