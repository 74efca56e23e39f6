"""Mutation score per module, from the results mutmut left in ``mutants/`` (``make mutation``).

Usage:
    ``python tools/mutation_score.py MODULE...``: print the score of each module from the last
    results (e.g. ``costeer_lab._fingerprint costeer_lab.store._codec``) and every survivor.
    ``... --run MODULE...``: first run mutmut on each module in turn (``--max-children 2``),
    timing each.
    ``... --run --doc docs/testing.md MODULE...``: and rewrite the score table of that file
    between ``<!-- mutation-table:start -->`` and ``<!-- mutation-table:end -->`` (mutmut
    version, date, run time, counts per module): what ``make mutation`` does. Only the rows of
    the modules named are rewritten; the table's other rows are kept (and counted in ``all``).
    ``--doc`` without ``--run`` takes the last results (``--took MODULE=SECONDS`` gives a run
    time); ``--max-children N`` runs mutmut with N parallel tests (run times marked in the
    table when N is not 2).
    ``... --sample K MODULE...``: a quick, deterministic sample: generate the mutants, run
    about one in ``K`` of each module's (chosen by a seeded hash of the name, so the same code
    gives the same sample), print the sampled score (``make mutation-quick``); with ``--doc``,
    write the modules' rows marked "sampled: 1 in K of N" (for modules too slow to run whole
    on 2 cores).

A mutant counts as detected when a test failed (``killed``), hung past mutmut's limit
(``timeout``) or crashed; as undetected when every test passed (``survived``) or no test ran
the mutated function (``no tests``). Mutants not run (``not checked``, ``skipped``) are left out.
Exits 1 when a module scores below ``--min`` (default 80 %).
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import hashlib
import importlib.metadata
import json
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

DETECTED = {"killed", "timeout", "segfault", "caught by type check", "suspicious"}
UNDETECTED = {"survived", "no tests"}
START = "<!-- mutation-table:start -->"
END = "<!-- mutation-table:end -->"
#: What each module is, for the table (modules not listed show their name only).
DESCRIPTIONS = {
    "costeer_lab._fingerprint": "error fingerprints",
    "costeer_lab.knowledge._error_query": "error query",
    "costeer_lab.knowledge._retrieve": "similar / component search",
    "costeer_lab.knowledge._sampler": "knowledge sampler",
    "costeer_lab.store._codec": "store encoding and checks",
    "costeer_lab.store._factory": "store URLs",
    "costeer_lab.experiment._metrics": "metrics",
    "costeer_lab.evaluate._factor_compare": "verdict: factor comparison",
    "costeer_lab.evaluate._factor_checks": "verdict: factor checks",
    "costeer_lab.evaluate._factor_mismatch": "verdict: factor mismatch classes",
    "costeer_lab.evaluate._factor_parquet": "verdict: bounded Parquet reader",
    "costeer_lab.evaluate._plaindata": "verdict: plain-data codec",
    "costeer_lab.evaluate._pyfunc_answers": "verdict: function answers",
    "costeer_lab.evaluate._pyfunc_feedback": "verdict: function feedback",
    "costeer_lab.sandbox._status": "verdict: sandbox run status",
    "costeer_lab.memory._gate": "memory write gate: security rules",
    "costeer_lab.memory._calibrate": "memory threshold calibration",
    "costeer_lab.memory._pattern": "pattern memory",
    "costeer_lab.docs._filter": "document metadata filters",
    "costeer_lab.docs._search": "document ranking",
    "costeer_lab.docs._secrets": "document secret screen",
    "costeer_lab.context._completion": "task completion rules",
    "costeer_lab.context._runs": "task run / evaluation requirement",
    "costeer_lab.context._loops": "task loop prevention",
    "costeer_lab.memory._failure": "failure memory",
    "costeer_lab.memory._template": "pattern templates",
    "costeer_lab.docs._fusion": "rank fusion and MMR",
    "costeer_lab.docs._keyword": "BM25 keyword index",
    "costeer_lab.context._planner": "rule-based planner",
    "costeer_lab.context._priority": "task priority and complexity",
    "costeer_lab.context._simulate": "planner look-ahead",
    "costeer_lab.context._append": "action recording",
    "costeer_lab.context._detect": "task type detection",
    "costeer_lab.context._examples": "docstring examples",
    "costeer_lab.context._queries": "context query records",
    "costeer_lab.context._coverage": "test references",
    "costeer_lab.docs._evaluate": "retrieval quality (recall, MRR)",
    "costeer_lab.memory._base": "memory store, embedder and input checks",
    "costeer_lab.docs._rerank": "second-stage reranker",
    "costeer_lab.memory._strategy": "memory arm of the loop",
    "costeer_lab.docs._chunk": "document chunking",
    "costeer_lab.context._evidence": "task evidence",
    "costeer_lab.memory._verify": "memory write gate: sandbox re-run",
    "costeer_lab.memory._stats": "memory usage counts and success rates",
    "costeer_lab.memory._vectors": "memory vector search",
    "costeer_lab.memory._memory": "memory façade",
    "costeer_lab.memory._calibration_set": "memory labelled calibration set",
    "costeer_lab.docs._agent": "document retrieval for agents",
    "costeer_lab.docs._ingest": "document ingestion",
    "costeer_lab.docs._kb": "document knowledge base",
    "costeer_lab.docs._packages": "documentation of installed packages",
    "costeer_lab.docs._reading": "document read side and retrieval",
    "costeer_lab.docs._source": "document files and metadata",
    "costeer_lab.docs._stored": "document collection in a store",
    "costeer_lab.context._codedoc": "code documentation",
    "costeer_lab.context._records": "task context records",
    "costeer_lab.context._manager": "task context manager",
    "costeer_lab.context._persist": "task context persistence",
    "costeer_lab.context._task": "task metadata",
    "costeer_lab.context._tools": "agent tools",
    "costeer_lab.context._agent": "task context agent",
    "costeer_lab.context._llm_planner": "LLM planner",
}
#: Packages given a summary row (every module of theirs in the table, summed); the row names
#: the package's modules that have no row yet (issue 26: >= 80 % per package).
PACKAGES = ("costeer_lab.memory", "costeer_lab.docs", "costeer_lab.context")
_STATUS_RE = re.compile(r"^\s*(?P<name>\S+): (?P<status>.+?)\s*$")


@dataclass
class Score:
    counts: Counter[str] = field(default_factory=Counter)
    survivors: list[str] = field(default_factory=list)

    @property
    def detected(self) -> int:
        return sum(self.counts[s] for s in DETECTED)

    @property
    def undetected(self) -> int:
        return sum(self.counts[s] for s in UNDETECTED)

    @property
    def total(self) -> int:
        return self.detected + self.undetected

    @property
    def score(self) -> float:
        return 100.0 * self.detected / self.total if self.total else float("nan")


def module_of(name: str, modules: list[str]) -> str | None:
    """The configured module a mutant belongs to (a package's submodules count for it)."""
    module = name.split(".x", 1)[0]  # functions are x_NAME, methods xǁCLASSǁNAME
    if module in modules:
        return module
    return next((m for m in modules if module.startswith(m + ".")), None)


def _mutmut() -> str:
    return str(Path(sys.executable).with_name("mutmut"))


def results(modules: list[str], only: set[str] | None = None) -> dict[str, Score]:
    """The score of each module from ``mutmut results --all true`` (``only``: these names)."""
    out = subprocess.run(
        [_mutmut(), "results", "--all", "true"], capture_output=True, text=True, check=True
    ).stdout
    scores = {m: Score() for m in modules}
    for line in out.splitlines():
        match = _STATUS_RE.match(line)
        if not match or (only is not None and match["name"] not in only):
            continue
        module = module_of(match["name"], modules)
        if module is not None:
            status = match["status"]
            scores[module].counts[status] += 1
            if status in UNDETECTED:
                scores[module].survivors.append(f"{match['name']} ({status})")
    return scores


def run_mutmut(patterns: list[str], children: int = 2, *, check: bool = True) -> float:
    """Run mutmut on ``patterns`` (its output to stderr); the seconds it took."""
    start = time.monotonic()
    subprocess.run(
        [_mutmut(), "run", "--max-children", str(children), *patterns],
        check=check,
        stdout=sys.stderr,
        stderr=sys.stderr,
    )
    return time.monotonic() - start


def all_mutant_names(modules: list[str]) -> dict[str, list[str]]:
    """Every mutant name of each module, from the ``.meta`` files mutmut generated."""
    names: dict[str, list[str]] = {m: [] for m in modules}
    for meta in sorted(Path("mutants").rglob("*.py.meta")):
        for name in json.loads(meta.read_text())["exit_code_by_key"]:
            module = module_of(name, modules)
            if module is not None:
                names[module].append(name)
    return {m: sorted(n) for m, n in names.items()}


def sample(names: list[str], k: int, seed: str) -> list[str]:
    """About one name in ``k``: those whose seeded hash falls in the first ``1/k`` of the range
    (independent of the order and of the other names; at least one name when any exist)."""
    picked = [
        n for n in names if int(hashlib.sha256(f"{seed}:{n}".encode()).hexdigest(), 16) % k == 0
    ]
    return picked or names[:1]


def print_scores(scores: dict[str, Score], *, survivors: bool = True) -> None:
    print(f"{'module':45} {'mutants':>8} {'killed':>7} {'survived':>9} {'score':>7}")
    total = Score(counts=sum((s.counts for s in scores.values()), Counter()))
    for module, s in [*scores.items(), ("all", total)]:
        print(f"{module:45} {s.total:8d} {s.detected:7d} {s.undetected:9d} {s.score:6.1f}%")
    if survivors:
        for s in scores.values():
            for name in s.survivors:
                print(f"  surviving: {name}")


@dataclass(frozen=True)
class Row:
    """One module's line of the table: its counts and its formatted cells."""

    module: str
    total: int
    detected: int
    undetected: int
    line: str
    seconds: float | None


_ROW_RE = re.compile(
    r"^\| `(?P<module>[^`]+)`[^|]*\| (?P<total>[\d,]+) \| (?P<detected>[\d,]+) "
    r"\| (?P<undetected>[\d,]+) \| [^|]* \| (?P<took>[^|]*) \|$"
)
_TOOK_RE = re.compile(r"^(?P<minutes>\d+(?:\.\d+)?) min")


def parse_rows(text: str) -> dict[str, Row]:
    """The module rows of a table written by :func:`table` (the ``all`` row is left out)."""
    rows = {}
    for line in text.splitlines():
        match = _ROW_RE.match(line)
        if match:
            took = _TOOK_RE.match(match["took"].strip())
            total, detected, undetected = (
                int(match[k].replace(",", "")) for k in ("total", "detected", "undetected")
            )
            seconds = float(took["minutes"]) * 60 if took else None
            rows[match["module"]] = Row(
                match["module"], total, detected, undetected, line, seconds
            )
    return rows


def _row(
    module: str,
    s: Score,
    seconds: float | None,
    children: int,
    sampled: tuple[int, int] | None = None,
) -> Row:
    """One module's row; ``sampled``: ``(K, all mutants)`` when only ~1 in K ran."""
    what = DESCRIPTIONS.get(module)
    label = f"`{module}` ({what})" if what else f"`{module}`"
    took = "—" if seconds is None else f"{seconds / 60:.1f} min"
    if seconds is not None and children != 2:
        took += f" ({children} core{'s' if children > 1 else ''})"
    score = f"{s.score:.1f} %" if s.total else "not run"
    if s.total and s.counts["not checked"]:
        score += f" (partial: {s.counts['not checked']:,} not run)"
    if s.total and sampled:
        score += f" (sampled: 1 in {sampled[0]} of {sampled[1]:,})"
    line = f"| {label} | {s.total:,} | {s.detected:,} | {s.undetected:,} | {score} | {took} |"
    return Row(module, s.total, s.detected, s.undetected, line, seconds)


def _has_code(path: Path) -> bool:
    """Whether a module defines a function or method (a re-export only has nothing to mutate)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for n in ast.walk(tree))


def package_rows(rows: dict[str, Row], root: Path = Path(".")) -> list[str]:
    """The summary line of each of :data:`PACKAGES` with rows in ``rows``: the counts of its
    modules' rows summed, and the modules of its directory under ``root`` without a row."""
    lines = []
    for pkg in PACKAGES:
        mine = [r for m, r in rows.items() if m.startswith(pkg + ".")]
        if not mine:
            continue
        total, detected = sum(r.total for r in mine), sum(r.detected for r in mine)
        pct = f"{100.0 * detected / total:.1f} %" if total else "not run"
        folder = root.joinpath(*pkg.split("."))
        modules = sorted(
            f"{pkg}.{f.stem}"
            for f in folder.glob("*.py")
            if f.name != "__init__.py" and _has_code(f)
        )
        missing = [m.rsplit(".", 1)[1] for m in modules if m not in rows]
        what = f"{len(mine)} modules" + (
            f"; no row yet: {', '.join(f'`{m}`' for m in missing)}" if missing else ""
        )
        lines.append(
            f"| **package `{pkg}`** ({what}) | **{total:,}** | **{detected:,}** "
            f"| **{total - detected:,}** | **{pct}** | — |"
        )
    return lines


def table(
    scores: dict[str, Score],
    seconds: dict[str, float],
    when: dt.date,
    *,
    keep: dict[str, Row] | None = None,
    children: int = 2,
    sampled: dict[str, tuple[int, int]] | None = None,
    earlier: str = "",
) -> str:
    """The Markdown score table (with its header line) written between the markers.

    ``keep``: rows of an earlier table (:func:`parse_rows`); those of modules not in
    ``scores`` stay as they were (in their place), so that a run of a few modules updates
    their rows only. The ``all`` row sums every row. ``sampled``: ``(K, all mutants)`` of the
    modules whose run was a sample (their counts are the sample's). ``earlier``: the earlier
    table's text; the modules its header lists as updated on the same day stay listed.
    """
    sampled = sampled or {}
    fresh = {m: _row(m, s, seconds.get(m), children, sampled.get(m)) for m, s in scores.items()}
    rows = {m: fresh.get(m, r) for m, r in (keep or {}).items()} | fresh
    total, detected = sum(r.total for r in rows.values()), sum(r.detected for r in rows.values())
    undetected = sum(r.undetected for r in rows.values())
    pct = f"{100.0 * detected / total:.1f} %" if total else "not run"
    known = [r.seconds for r in rows.values() if r.seconds is not None]
    minutes = sum(known) / 60
    took_all = (
        f"{minutes:.0f} min on 2 cores (`--max-children 2`) unless a row says otherwise"
        if known
        else "run time unknown"
    )
    today = [m for m in updated_on(earlier, when) if m in rows and m not in fresh] + list(fresh)
    kept = [m for m in rows if m not in today]
    updated = (
        f" Rows updated on {when.isoformat()}: {', '.join(f'`{m}`' for m in today)}; the other "
        "rows are kept from earlier runs."
        if kept
        else ""
    )
    counts = f"| **all** | **{total:,}** | **{detected:,}** | **{undetected:,}** | **{pct}** |"
    lines = [
        f"Generated by `make mutation` ({Path(__file__).name}) on {when.isoformat()}: "
        f"mutmut {importlib.metadata.version('mutmut')}, {total:,} mutants, {took_all}." + updated,
        "",
        "| module | mutants | detected | undetected | score | run time |",
        "|---|---:|---:|---:|---:|---:|",
        *(r.line for r in rows.values()),
        *package_rows(rows),
        f"{counts} **{minutes:.0f} min** |" if known else f"{counts} — |",
    ]
    return "\n".join(lines)


def updated_on(text: str, when: dt.date) -> list[str]:
    """The modules a table's header (``text``) lists as updated on ``when`` (none when its
    header names another day or no update)."""
    found = re.search(r"Rows updated on (\d{4}-\d{2}-\d{2}): (.*?); the other rows", text)
    if found is None or found.group(1) != when.isoformat():
        return []
    return re.findall(r"`([^`]+)`", found.group(2))


def read_table(doc: Path) -> str:
    """What lies between the markers of ``doc`` (empty when it has none)."""
    _, start, rest = doc.read_text().partition(START)
    inside, end, _ = rest.partition(END)
    return inside if start and end else ""


def write_table(doc: Path, text: str) -> None:
    """Replace what lies between the markers of ``doc`` with ``text``."""
    content = doc.read_text()
    head, start, rest = content.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"{doc}: no {START} ... {END} markers")
    doc.write_text(f"{head}{START}\n{text}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="+", help="dotted module names, e.g. costeer_lab.x")
    parser.add_argument("--min", type=float, default=80.0, help="lowest passing score (%%)")
    parser.add_argument("--run", action="store_true", help="run mutmut on each module first")
    parser.add_argument("--doc", type=Path, help="rewrite the table between the markers here")
    parser.add_argument("--sample", type=int, metavar="K", help="run ~1 in K mutants only")
    parser.add_argument("--seed", default="costeer", help="seed of the sample")
    parser.add_argument(
        "--max-children",
        type=int,
        default=2,
        metavar="N",
        help="mutmut's parallel test runs (default 2; other run times are marked in the table)",
    )
    parser.add_argument(
        "--took",
        action="append",
        default=[],
        metavar="MODULE=SECONDS",
        help="run time of a module run separately (for --doc without --run)",
    )
    args = parser.parse_args(argv)
    modules: list[str] = args.modules
    if args.sample:
        start = time.monotonic()
        # generate the mutants: a name no mutant has (mutmut 3.8 generates them, then stops
        # with an error that nothing matches, which is expected here)
        run_mutmut(["costeer_lab.__generate_only__"], args.max_children, check=False)
        every = all_mutant_names(modules)
        picked = [n for names in every.values() for n in sample(names, args.sample, args.seed)]
        if not picked:
            raise SystemExit("no mutants generated (see mutmut's output above)")
        run_mutmut(picked, args.max_children)
        scores = results(modules, only=set(picked))
        if args.doc:  # rows marked "sampled: 1 in K of N"; one module's run time when alone
            took = {modules[0]: time.monotonic() - start} if len(modules) == 1 else {}
            sampled = {m: (args.sample, len(every[m])) for m in modules}
            before = read_table(args.doc)
            text = table(scores, took, dt.date.today(), keep=parse_rows(before),
                         children=args.max_children, sampled=sampled, earlier=before)  # fmt: skip
            write_table(args.doc, text)
        print(
            f"SAMPLED score (1 in {args.sample}, seed {args.seed!r}, {len(picked)} mutants, "
            f"{(time.monotonic() - start) / 60:.1f} min): not the full score of `make mutation`"
        )
    else:
        seconds = {m: float(t) for m, _, t in (x.partition("=") for x in args.took)}
        if args.run:
            for module in modules:
                seconds[module] = run_mutmut([f"{module}.*"], args.max_children)
        scores = results(modules)
        if args.doc:
            before = read_table(args.doc)
            text = table(scores, seconds, dt.date.today(), keep=parse_rows(before),
                         children=args.max_children, earlier=before)  # fmt: skip
            write_table(args.doc, text)
    print_scores(scores)
    return 1 if any(not s.total or s.score < args.min for s in scores.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
