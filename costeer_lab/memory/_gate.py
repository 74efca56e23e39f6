"""The static half of the pattern memory's write gate: common security problems, found in the AST.

A rule set in the spirit of Bandit (no third-party dependency). Each finding names its rule,
the 1-based line and what is wrong; :meth:`PatternMemory.store_pattern` refuses a pattern
whose code or tests have any finding (``MemoryRefusedError``, ``kind="security:<rule>"``).

===========================  ==================================================================
rule                         what is refused
===========================  ==================================================================
eval-exec                    ``eval``/``exec``/``compile`` of anything but a string literal
shell-command                ``subprocess.*(…, shell=True)``, ``os.system``, ``os.popen``,
                             ``os.exec*``/``os.spawn*``, ``subprocess.getoutput``, ``pty.spawn``
unsafe-deserialization       ``pickle``/``cPickle``/``dill``/``cloudpickle``/``marshal``
                             ``load``/``loads``/``Unpickler``, ``shelve.open``,
                             ``pandas.read_pickle``, ``torch.load`` without ``weights_only=True``
yaml-load                    ``yaml.load``/``load_all`` without a safe ``Loader``,
                             ``yaml.unsafe_load``
tls-verify-disabled          any call with ``verify=False`` (``requests``, ``httpx``, …)
unverified-ssl               ``ssl._create_unverified_context``, ``ssl.CERT_NONE``
insecure-tempfile            ``tempfile.mktemp``, ``os.tempnam``/``os.tmpnam``
hardcoded-credential         a credential in the text (the memory's scanner,
                             :func:`~costeer_lab._credentials.scan_credentials`)
===========================  ==================================================================

Names are resolved through the code's imports: ``import subprocess as sp; sp.run(c,
shell=True)`` and ``from pickle import loads; loads(b)`` are found like their plain forms.
Weak hashes (``hashlib.md5``) are not refused: patterns use them for cache keys, not security.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from costeer_lab._credentials import scan_credentials

__all__ = ["SecurityFinding", "check_code_security"]


@dataclass(frozen=True)
class SecurityFinding:
    """One security problem: the rule, the 1-based line and what is wrong.

    Example:
        >>> SecurityFinding("shell-command", 2, "os.system runs a shell").describe()
        'shell-command on line 2: os.system runs a shell'
    """

    rule: str
    line: int
    message: str

    def describe(self) -> str:
        return f"{self.rule} on line {self.line}: {self.message}"


_SHELL_ALWAYS = frozenset(
    {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput", "pty.spawn"}
    | {"commands.getoutput", "popen2.popen2"}
)
_SHELL_PREFIXES = ("os.exec", "os.spawn", "os.posix_spawn")
_SUBPROCESS = frozenset(
    {"subprocess.call", "subprocess.run", "subprocess.Popen", "subprocess.check_call"}
    | {"subprocess.check_output", "asyncio.create_subprocess_exec"}
)
_PICKLERS = ("pickle", "cPickle", "_pickle", "dill", "cloudpickle", "marshal", "jsonpickle")
_DESERIALIZERS = frozenset(
    {f"{mod}.{fn}" for mod in _PICKLERS for fn in ("load", "loads", "Unpickler", "decode")}
    | {"shelve.open", "pandas.read_pickle", "joblib.load", "numpy.load"}
)
_SAFE_LOADERS = frozenset({"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"})
_TEMPFILE = frozenset({"tempfile.mktemp", "os.tempnam", "os.tmpnam"})
_UNVERIFIED_SSL = frozenset({"ssl._create_unverified_context", "ssl._create_stdlib_context"})


def _imports(tree: ast.AST) -> dict[str, str]:
    """Local name → the qualified name it stands for, from every import in the code."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    names[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _qualname(node: ast.AST, names: dict[str, str]) -> str:
    """``pd.read_pickle`` → ``pandas.read_pickle`` (``""`` for what is not a dotted name)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(names.get(node.id, node.id))
    return ".".join(reversed(parts))


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_const(node: ast.expr | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


def _loader_is_safe(call: ast.Call, names: dict[str, str]) -> bool:
    loader = _kw(call, "Loader")
    if loader is None and len(call.args) > 1:
        loader = call.args[1]
    return loader is not None and _qualname(loader, names).rsplit(".", 1)[-1] in _SAFE_LOADERS


def _check_call(call: ast.Call, names: dict[str, str]) -> tuple[str, str] | None:
    """``(rule, message)`` when this call is a security problem."""
    name = _qualname(call.func, names)
    short = name.removeprefix("builtins.")
    if short in {"eval", "exec", "compile"}:
        arg = call.args[0] if call.args else _kw(call, "source")
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            return "eval-exec", f"{short}() of a value that is not a string literal runs any code"
    if name in _SHELL_ALWAYS or name.startswith(_SHELL_PREFIXES):
        return "shell-command", f"{name} runs a shell command"
    if name in _SUBPROCESS and _is_const(_kw(call, "shell"), True):
        return "shell-command", f"{name}(..., shell=True) lets the command string inject commands"
    if name in _DESERIALIZERS:
        if name == "numpy.load" and not _is_const(_kw(call, "allow_pickle"), True):
            return None
        return "unsafe-deserialization", f"{name} can run arbitrary code from the data it reads"
    if name == "torch.load" and not _is_const(_kw(call, "weights_only"), True):
        return "unsafe-deserialization", "torch.load without weights_only=True unpickles"
    if name in {"yaml.unsafe_load", "yaml.unsafe_load_all"} or (
        name in {"yaml.load", "yaml.load_all"} and not _loader_is_safe(call, names)
    ):
        return "yaml-load", f"{name} without Loader=yaml.SafeLoader can build arbitrary objects"
    if _is_const(_kw(call, "verify"), False):
        return (
            "tls-verify-disabled",
            f"{name or 'a call'}(verify=False) skips TLS checks",
        )
    if name in _UNVERIFIED_SSL:
        return "unverified-ssl", f"{name} makes TLS connections without certificate checks"
    if name in _TEMPFILE:
        return "insecure-tempfile", f"{name} returns a name another process can take first"
    return None


def check_code_security(code: str) -> list[SecurityFinding]:
    """The security problems of ``code`` (module docstring), in line order.

    Args:
        code: Python source. Code that does not parse is checked for credentials only (the
            memory refuses it as a syntax error before this check).

    Returns:
        The findings; empty when none of the rules matches.

    Example:
        >>> [f.describe() for f in check_code_security("import os\\nos.system('ls ' + d)")]
        ['shell-command on line 2: os.system runs a shell command']
        >>> check_code_security("import yaml\\nyaml.load(text, Loader=yaml.SafeLoader)")
        []
    """
    if not isinstance(code, str):
        raise TypeError(f"check_code_security expects a str, got {type(code).__name__}")
    found = [
        SecurityFinding(
            "hardcoded-credential",
            f.line,
            f"a {f.kind} is hard-coded (read it from the environment)",
        )
        for f in scan_credentials(code)
    ]
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return found
    names = _imports(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            hit = _check_call(node, names)
            if hit:
                found.append(SecurityFinding(hit[0], node.lineno, hit[1]))
        elif isinstance(node, ast.Attribute) and _qualname(node, names) == "ssl.CERT_NONE":
            found.append(
                SecurityFinding("unverified-ssl", node.lineno, "ssl.CERT_NONE disables checks")
            )
    return sorted(set(found), key=lambda f: (f.line, f.rule))
