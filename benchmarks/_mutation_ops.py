"""The edits of :mod:`benchmarks._mutants`: one function per cause, over a parsed solution.

Each operator picks one site at random (seeded) among the nodes it may edit, edits the tree in
place and returns whether it found a site.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Sequence

__all__ = ["OPERATORS", "Scope", "factor_lines", "syntax_typo"]

_ARITY_BUILTINS = frozenset(
    {"len", "abs", "ord", "chr", "sorted", "reversed", "list", "set", "tuple", "float", "bool"}
)
_ARITY_METHODS = frozenset(
    {"append", "lower", "upper", "strip", "isdigit", "isalpha", "keys", "values", "items"}
    | {"add", "count", "index", "isupper", "islower", "isspace", "reverse", "copy"}
)
_MODULE_CALLS = {
    "abs": [("np", "abs"), ("math", "fabs")],
    "sum": [("np", "sum"), ("math", "fsum")],
    "max": [("np", "max")],
    "min": [("np", "min")],
    "sorted": [("np", "sort")],
    "round": [("np", "round")],
    "len": [("np", "size")],
}
_UNAVAILABLE = {
    "humaneval": ["numpy", "pandas", "scipy", "sympy", "more_itertools", "regex"],
    "alpha158": ["scipy.stats", "talib", "statsmodels.api", "polars", "numba", "sklearn"],
}
_CMP_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
}


def _typo(word: str, rng: random.Random) -> str:
    """A misspelling of ``word``: two neighbouring letters swapped, or one letter doubled."""
    if len(word) >= 4 and rng.random() < 0.5:
        i = rng.randrange(1, len(word) - 2)
        swapped = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        if swapped != word:
            return swapped
    i = rng.randrange(len(word))
    return word[: i + 1] + word[i:]


class Scope:
    """The nodes an operator may edit: all of a HumanEval solution; only the factor's own
    functions (not the shared ``main``) of an Alpha158 script."""

    def __init__(self, tree: ast.Module, suite: str) -> None:
        self.tree = tree
        roots: list[ast.AST] = [tree]
        if suite == "alpha158":
            roots = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != "main"]
        self.nodes = [n for root in roots for n in ast.walk(root)]
        self.defined = {
            n.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } | {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in n.args}
        self.functions = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        self.imported = {
            (a.asname or a.name).split(".")[0]
            for n in tree.body
            if isinstance(n, ast.Import)
            for a in n.names
        }

    def of(self, kind: type[ast.AST] | tuple[type[ast.AST], ...]) -> list[ast.AST]:
        return [n for n in self.nodes if isinstance(n, kind)]


Operator = Callable[[Scope, str, random.Random], bool]


def _pick(nodes: Sequence[ast.AST], rng: random.Random) -> ast.AST | None:
    return rng.choice(nodes) if nodes else None


def _undefined_name(s: Scope, suite: str, rng: random.Random) -> bool:
    uses = [
        n
        for n in s.of(ast.Name)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in s.defined
    ]
    node = _pick(uses, rng)
    if not isinstance(node, ast.Name):
        return False
    new = _typo(node.id, rng)
    if new in s.defined or new in s.functions:
        return False
    node.id = new
    return True


def _missing_import(s: Scope, suite: str, rng: random.Random) -> bool:
    used = {n.id for n in s.of(ast.Name) if isinstance(n, ast.Name)}
    imports = [
        n
        for n in s.tree.body
        if isinstance(n, ast.Import) and any((a.asname or a.name) in used for a in n.names)
    ]
    if imports:
        s.tree.body.remove(rng.choice(imports))
        return True
    calls = [
        n
        for n in s.of(ast.Call)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _MODULE_CALLS
    ]
    node = _pick(calls, rng)
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return False
    module, attr = rng.choice(_MODULE_CALLS[node.func.id])
    if module in s.imported:
        return False
    node.func = ast.Attribute(ast.Name(module, ast.Load()), attr, ast.Load())
    return True


def _missing_module(s: Scope, suite: str, rng: random.Random) -> bool:
    name = rng.choice(_UNAVAILABLE[suite])
    alias = name.split(".")[-1] if "." in name else None
    stmt = ast.Import([ast.alias(name, alias if alias and rng.random() < 0.5 else None)])
    s.tree.body.insert(rng.randrange(0, len(s.tree.body) + 1) if suite == "alpha158" else 0, stmt)
    return True


def _attribute_typo(s: Scope, suite: str, rng: random.Random) -> bool:
    attrs = [
        n
        for n in s.of(ast.Attribute)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and len(n.attr) >= 3
    ]
    node = _pick(attrs, rng)
    if not isinstance(node, ast.Attribute):
        return False
    node.attr = _typo(node.attr, rng)
    return True


def _wrong_arity(s: Scope, suite: str, rng: random.Random) -> bool:
    def fixed(n: ast.AST) -> bool:
        if not isinstance(n, ast.Call) or any(isinstance(a, ast.Starred) for a in n.args):
            return False
        f = n.func
        if isinstance(f, ast.Name):
            return f.id in _ARITY_BUILTINS or f.id in s.functions
        return isinstance(f, ast.Attribute) and f.attr in _ARITY_METHODS

    node = _pick([n for n in s.nodes if fixed(n)], rng)
    if not isinstance(node, ast.Call):
        return False
    own = isinstance(node.func, ast.Name) and node.func.id in s.functions
    if own and node.args and rng.random() < 0.5:
        node.args.pop()
    else:
        node.args.append(node.args[0] if node.args else ast.Constant(0))
    return True


def _type_mix(s: Scope, suite: str, rng: random.Random) -> bool:
    ops = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Mod, ast.FloorDiv)
    sites: list[ast.AST] = [
        n for n in s.of(ast.BinOp) if isinstance(n, ast.BinOp) and isinstance(n.op, ops)
    ]
    sites += [n for n in s.of(ast.Compare) if isinstance(n, ast.Compare)]
    node = _pick(sites, rng)
    if isinstance(node, ast.BinOp):
        if isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            return False
        side = "left" if rng.random() < 0.5 else "right"
        setattr(node, side, ast.Call(ast.Name("str", ast.Load()), [getattr(node, side)], []))
        return True
    if isinstance(node, ast.Compare):
        node.left = ast.Call(ast.Name("str", ast.Load()), [node.left], [])
        return True
    return False


def _index_past_end(s: Scope, suite: str, rng: random.Random) -> bool:
    subs = [
        n
        for n in s.of(ast.Subscript)
        if isinstance(n, ast.Subscript)
        and isinstance(n.value, ast.Name)
        and not isinstance(n.slice, (ast.Slice, ast.Tuple))
        and not (isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str))
        and n.value.id in s.defined
    ]
    node = _pick(subs, rng)
    if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name):
        return False
    node.slice = ast.Call(ast.Name("len", ast.Load()), [ast.Name(node.value.id, ast.Load())], [])
    return True


def _zero_division(s: Scope, suite: str, rng: random.Random) -> bool:
    divs = [
        n
        for n in s.of(ast.BinOp)
        if isinstance(n, ast.BinOp)
        and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod))
        and not (isinstance(n.left, ast.Constant) and isinstance(n.left.value, str))
    ]
    node = _pick(divs, rng)
    if not isinstance(node, ast.BinOp):
        return False
    node.right = ast.Constant(0)
    return True


def _wrong_key(s: Scope, suite: str, rng: random.Random) -> bool:
    keys: list[ast.AST] = [
        n.slice
        for n in s.of(ast.Subscript)
        if isinstance(n, ast.Subscript)
        and isinstance(n.slice, ast.Constant)
        and isinstance(n.slice.value, str)
        and n.slice.value
    ]
    keys += [
        k.value
        for n in s.of(ast.Call)
        if isinstance(n, ast.Call)
        for k in n.keywords
        if k.arg == "level" and isinstance(k.value, ast.Constant)
    ]
    node = _pick(keys, rng)
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
        return False
    word = node.value
    node.value = word.capitalize() if word.islower() and rng.random() < 0.5 else _typo(word, rng)
    return True


def _unpack_mismatch(s: Scope, suite: str, rng: random.Random) -> bool:
    targets = [
        t
        for n in s.of((ast.Assign, ast.For, ast.comprehension))
        for t in ([n.target] if isinstance(n, (ast.For, ast.comprehension)) else n.targets)  # type: ignore[attr-defined]
        if isinstance(t, ast.Tuple) and all(isinstance(e, ast.Name) for e in t.elts)
    ]
    node = _pick(targets, rng)
    if not isinstance(node, ast.Tuple):
        return False
    if len(node.elts) >= 3 and rng.random() < 0.5:
        node.elts.pop()
    else:
        node.elts.append(ast.Name("extra", ast.Store()))
    return True


def _none_value(s: Scope, suite: str, rng: random.Random) -> bool:
    assigns = [
        n
        for n in s.of(ast.Assign)
        if isinstance(n, ast.Assign)
        and isinstance(n.value, ast.Call)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
    ]
    node = _pick(assigns, rng)
    if not isinstance(node, ast.Assign):
        return False
    node.value = ast.Constant(None)
    return True


def _logic_error(s: Scope, suite: str, rng: random.Random) -> bool:
    sites: list[ast.AST] = [
        n for n in s.of(ast.Compare) if isinstance(n, ast.Compare) and type(n.ops[0]) in _CMP_FLIP
    ]
    sites += [
        n
        for n in s.of(ast.Constant)
        if isinstance(n, ast.Constant) and type(n.value) is int and 0 <= n.value < 1000
    ]
    node = _pick(sites, rng)
    if isinstance(node, ast.Compare):
        node.ops[0] = _CMP_FLIP[type(node.ops[0])]()
        return True
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        node.value += 1
        return True
    return False


OPERATORS: dict[str, Operator] = {
    "undefined_name": _undefined_name,
    "missing_import": _missing_import,
    "missing_module": _missing_module,
    "attribute_typo": _attribute_typo,
    "wrong_arity": _wrong_arity,
    "type_mix": _type_mix,
    "index_past_end": _index_past_end,
    "zero_division": _zero_division,
    "wrong_key": _wrong_key,
    "unpack_mismatch": _unpack_mismatch,
    "none_value": _none_value,
    "logic_error": _logic_error,
}
#: Every cause, in a fixed order (``syntax_typo`` edits the text, not the tree).


def syntax_typo(code: str, allowed: set[int] | None, rng: random.Random) -> str | None:
    """Delete the ``:`` ending a block header, or a closing bracket, on an allowed line."""
    lines = code.splitlines()
    ok = [i for i in range(len(lines)) if allowed is None or i in allowed]
    sites = [
        (i, len(lines[i].rstrip()) - 1)
        for i in ok
        if lines[i].rstrip().endswith(":")
        and lines[i].lstrip().split(" ", 1)[0] in {"def", "for", "if", "elif", "else", "while"}
    ]
    sites += [
        (i, j)
        for i in ok
        if not lines[i].lstrip().startswith("#")
        for j, c in enumerate(lines[i])
        if c in ")]"
    ]
    if not sites:
        return None
    i, j = rng.choice(sites)
    lines[i] = lines[i][:j] + lines[i][j + 1 :]
    return "\n".join(lines) + "\n"


def factor_lines(tree: ast.Module, suite: str) -> set[int] | None:
    """Lines (0-based) an Alpha158 syntax typo may touch: the factor's own functions."""
    if suite != "alpha158":
        return None
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != "main"]
    return {i for n in defs for i in range(n.lineno - 1, (n.end_lineno or n.lineno))}
