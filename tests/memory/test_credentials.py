"""The credential refusal: common key and token formats are found, named, and never echoed."""

from __future__ import annotations

import pytest

from costeer_lab.errors import MemoryRefusedError
from costeer_lab.memory import FailureMemory, PatternMemory, scan_credentials

# Built from parts so this file itself holds no literal token a scanner would flag.
_A36 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SECRETS: list[tuple[str, str]] = [
    ("AWS access key id", "key_id = '" + "AKIA" + "Q3EGRWXYZ7PLMN4K" + "'"),
    (
        "AWS secret access key",
        "aws_secret_access_key = '" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY'",
    ),
    ("GitHub token", "headers = {'Authorization': 'token " + "ghp_" + _A36 + "'}"),
    ("GitHub token", "TOKEN = '" + "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnop" + "'"),
    (
        "GitLab token",
        "gl = Gitlab(url, private_token='" + "glpat-" + "x1Y2z3A4b5C6d7E8f9G0" + "')",
    ),
    ("OpenAI-style API key", "client = OpenAI(api_key='" + "sk-" + "proj-" + _A36 + "')"),
    ("OpenAI-style API key", "KEY = '" + "sk-" + "ant-api03-" + _A36 + "'"),
    ("Slack token", "slack = WebClient(token='" + "xoxb-" + "123456789012-abcdefABCDEF" + "')"),
    (
        "Slack webhook URL",
        "requests.post('"
        + "https://hooks.slack.com/services/"
        + "T0123ABCD/B0456EFGH/"
        + _A36
        + "')",
    ),
    ("private key block", "PEM = '''" + "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEow...\n'''"),
    ("private key block", "k = '" + "-----BEGIN OPENSSH " + "PRIVATE KEY-----'"),
    ("Google API key", "url = f'...?key=" + "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q" + "'"),
    ("Stripe live key", "stripe.api_key = '" + "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc" + "'"),
    (
        "JSON web token",
        "jwt = '"
        + "eyJhbGciOiJIUzI1NiJ9"
        + "."
        + "eyJzdWIiOiIxMjM0NTY3ODkwIn0"
        + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'",
    ),
    (
        "password in a URL",
        "engine = create_engine('postgresql://admin:" + "S3cr3tPa55" + "@db:5432/x')",
    ),
    ("password assignment", "password = '" + "hunter2hunter2" + "'"),
    ("password assignment", "config = {'db_password': '" + "Tr0ub4dor&3" + "'}"),
    ("password assignment", 'CLIENT_SECRET = "' + "9f8e7d6c5b4a" + '"'),
]
CLEAN = [
    "def factor(df):\n    return df['close'].rolling(20).mean()\n",
    "password = os.environ['DB_PASSWORD']\n",
    "password = getpass.getpass('Password: ')\n",
    "api_key = '<your key here>'\n",
    "token = tokenizer.encode('hello world')\n",
    "secret = ''\n",
    "url = 'postgresql://localhost:5432/db'\n",
    "skip = 'sk-learn'\n",
    "mask = df['ask_price'] > 0\n",
]


@pytest.mark.parametrize(("kind", "code"), SECRETS)
def test_each_format_is_found_and_named(kind: str, code: str) -> None:
    found = scan_credentials("import os\n" + code + "\nprint(1)\n")
    assert [f.kind for f in found][:1] == [kind]
    assert found[0].line == 2


@pytest.mark.parametrize("code", CLEAN)
def test_ordinary_code_is_clean(code: str) -> None:
    assert scan_credentials(code) == []


@pytest.mark.parametrize(("kind", "code"), SECRETS)
def test_refusal_names_the_kind_and_never_echoes_the_secret(
    kind: str, code: str, sqlite_url: str
) -> None:
    pm = PatternMemory(sqlite_url, embedder="hashing")
    with pytest.raises(MemoryRefusedError) as info:
        pm.store_pattern("client", "import os\n" + code + "\n")
    message = str(info.value)
    assert info.value.kind == f"credential:{kind}"
    assert kind in message and "line 2" in message and "code" in message
    for quote in ("'", '"'):
        for part in code.split(quote)[1::2]:
            if len(part) >= 8:
                assert part not in message
    assert "postgresql://admin" not in message and "hunter2" not in message
    assert len(pm) == 0
    pm.close()


def test_failures_and_solutions_are_scanned_too(sqlite_url: str) -> None:
    fm = FailureMemory(sqlite_url, embedder="hashing")
    secret = "sk-" + _A36
    with pytest.raises(MemoryRefusedError, match="error message contains an OpenAI-style API key"):
        fm.store_failure("AuthenticationError", f"Incorrect API key provided: {secret}")
    fid = fm.store_failure("KeyError", "'close'", "df['close']", task_id="t")
    assert fid is not None
    with pytest.raises(MemoryRefusedError, match="solution contains a GitHub token") as info:
        fm.update_solution(fid, "gh = Github('ghp_" + _A36 + "')")
    assert _A36 not in str(info.value)
    assert fm.get_failure(fid)["solved"] is False and len(fm) == 1
    fm.close()
