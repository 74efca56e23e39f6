"""The write gate's static check, pinned exactly: every rule's full finding (rule, line and
message), the forms each rule must accept as safe, and how imports resolve names."""

from __future__ import annotations

import pytest

from costeer_lab.memory import SecurityFinding, check_code_security

EXACT: list[tuple[str, list[str]]] = [
    (
        "compile(source=text, filename='f', mode='exec')",
        ["eval-exec on line 1: compile() of a value that is not a string literal runs any code"],
    ),
    (
        "import builtins\nbuiltins.eval(text)",
        ["eval-exec on line 2: eval() of a value that is not a string literal runs any code"],
    ),
    ("import os\nos.execv(p, args)", ["shell-command on line 2: os.execv runs a shell command"]),
    (
        "import os\nos.posix_spawn(p, a, e)",
        ["shell-command on line 2: os.posix_spawn runs a shell command"],
    ),
    (
        "import subprocess\nsubprocess.getoutput(c)",
        ["shell-command on line 2: subprocess.getoutput runs a shell command"],
    ),
    (
        "import subprocess\nsubprocess.check_output(c, shell=True)",
        [
            "shell-command on line 2: subprocess.check_output(..., shell=True) lets the command "
            "string inject commands"
        ],
    ),
    (
        "import numpy\nnumpy.load(f, allow_pickle=True)",
        [
            "unsafe-deserialization on line 2: numpy.load can run arbitrary code from the data "
            "it reads"
        ],
    ),
    (
        "import pickle\npickle.Unpickler(fh).load()",
        [
            "unsafe-deserialization on line 2: pickle.Unpickler can run arbitrary code from the "
            "data it reads"
        ],
    ),
    (
        "import torch\nm = torch.load(p)",
        ["unsafe-deserialization on line 2: torch.load without weights_only=True unpickles"],
    ),
    (
        "import torch\nm = torch.load(p, weights_only=False)",
        ["unsafe-deserialization on line 2: torch.load without weights_only=True unpickles"],
    ),
    (
        "import yaml\nfor d in yaml.load_all(s):\n    pass",
        [
            "yaml-load on line 2: yaml.load_all without Loader=yaml.SafeLoader can build "
            "arbitrary objects"
        ],
    ),
    (
        "import yaml\nyaml.unsafe_load_all(s)",
        [
            "yaml-load on line 2: yaml.unsafe_load_all without Loader=yaml.SafeLoader can build "
            "arbitrary objects"
        ],
    ),
    (
        "import yaml\nyaml.unsafe_load(s)",
        [
            "yaml-load on line 2: yaml.unsafe_load without Loader=yaml.SafeLoader can build "
            "arbitrary objects"
        ],
    ),
    (
        "import yaml\nyaml.load(s, yaml.FullLoader)",
        [
            "yaml-load on line 2: yaml.load without Loader=yaml.SafeLoader can build "
            "arbitrary objects"
        ],
    ),
    (
        "import requests\nrequests.post(u, verify=False)",
        ["tls-verify-disabled on line 2: requests.post(verify=False) skips TLS checks"],
    ),
    # a call through something that is not a dotted name is still named (as "a call")
    (
        "make_client()(u, verify=False)",
        ["tls-verify-disabled on line 1: a call(verify=False) skips TLS checks"],
    ),
    (
        "import ssl\nctx = ssl._create_stdlib_context()",
        [
            "unverified-ssl on line 2: ssl._create_stdlib_context makes TLS connections "
            "without certificate checks"
        ],
    ),
    (
        "import ssl\nmode = ssl.CERT_NONE",
        ["unverified-ssl on line 2: ssl.CERT_NONE disables checks"],
    ),
    (
        "import os\nname = os.tempnam()",
        ["insecure-tempfile on line 2: os.tempnam returns a name another process can take first"],
    ),
    (
        "key = 'AKIA" + "ABCDEFGHIJKLMNOP'\n",
        [
            "hardcoded-credential on line 1: a AWS access key id is hard-coded (read it from "
            "the environment)"
        ],
    ),
    # findings come in line order, then rule order; one per call
    (
        "import os, pickle\nx = pickle.loads(os.popen(c).read())\nos.system(c)",
        [
            "shell-command on line 2: os.popen runs a shell command",
            "unsafe-deserialization on line 2: pickle.loads can run arbitrary code from the "
            "data it reads",
            "shell-command on line 3: os.system runs a shell command",
        ],
    ),
    # names resolve through the imports, the last import of a name winning (as in Python)
    (
        "import numpy as os\nimport os.path\nos.system(c)",
        ["shell-command on line 3: os.system runs a shell command"],
    ),
    (
        "from subprocess import run as go\ngo(c, shell=True)",
        [
            "shell-command on line 2: subprocess.run(..., shell=True) lets the command string "
            "inject commands"
        ],
    ),
]

SAFE = [
    "compile(source='x = 1', filename='f', mode='exec')",
    "import numpy\nnumpy.load(f, allow_pickle=False)",
    "import torch\nm = torch.load(p, weights_only=True)",
    "import yaml\nyaml.load(s, yaml.SafeLoader)",
    "import yaml\nyaml.load(s, Loader=yaml.CSafeLoader)",
    "from yaml import load, BaseLoader\nload(s, Loader=BaseLoader)",
    "import yaml\nyaml.load(s, Loader=yaml.loader.SafeLoader)",  # the last name counts
    "import yaml\nyaml.load(s, Loader=SafeLoader)",  # a loader by its bare name
    "import subprocess\nsubprocess.run(c, shell=False)",
    "import requests\nrequests.get(u, verify=True)",
    "from .pickle import loads\nloads(b)",  # a relative import: the project's own module
    "def f(:\n    pass",  # does not parse: checked for credentials only
]


@pytest.mark.parametrize(("code", "expected"), EXACT)
def test_each_finding_exactly(code: str, expected: list[str]) -> None:
    assert [f.describe() for f in check_code_security(code)] == expected


@pytest.mark.parametrize("code", SAFE)
def test_safe_forms_pass(code: str) -> None:
    assert check_code_security(code) == []


def test_the_same_finding_is_listed_once() -> None:
    found = check_code_security("import ssl\nf(ssl.CERT_NONE, ssl.CERT_NONE)")
    assert found == [SecurityFinding("unverified-ssl", 2, "ssl.CERT_NONE disables checks")]


def test_a_non_string_is_a_type_error_naming_its_type() -> None:
    with pytest.raises(TypeError, match=r"^check_code_security expects a str, got bytes$"):
        check_code_security(b"import os")  # type: ignore[arg-type]
