"""The ``costeer-lab`` command line: a thin layer over the library, one function per subcommand.

Examples::

    costeer-lab run data/specs/demo.yaml --out runs/demo
    costeer-lab report runs/demo
    costeer-lab kb stats runs/demo/kb/transfer/rag_v2-seed0.db
    costeer-lab kb query runs/demo/kb/transfer/rag_v2-seed0.db "rolling mean of close" -k 3
    costeer-lab docs ingest docs/ --db lab-docs.db
    costeer-lab docs query "how are filters applied" --db lab-docs.db --mode hybrid
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from costeer_lab.errors import InvalidInputError, NotFoundError, UnknownNameError, did_you_mean

__all__ = ["build_parser", "main"]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def _out_dir(text: str) -> Path:
    """``--out``: a non-empty folder path (an empty one would write into the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "expected a folder path, got an empty string (it would write into the current folder)"
        )
    return Path(text)


def _check_environment(command: str) -> None:
    """Every command refuses unknown ``COSTEER_LAB_*`` variables and bad setting values; ``run``
    also checks the directories it writes into (``costeer_lab.settings.check_environment``)."""
    from costeer_lab.embed import check_embedder_name
    from costeer_lab.settings import check_environment
    from costeer_lab.store import check_store_target

    check_environment(
        directories=command == "run", embedder=check_embedder_name, store=check_store_target
    )


def _cmd_run(args: argparse.Namespace) -> int:
    from costeer_lab.errors import ConfigurationError
    from costeer_lab.experiment import run_experiment

    if args.spec.is_dir():
        raise ConfigurationError(
            f"spec {str(args.spec)!r} is a directory; expected a YAML/JSON file"
        )

    out = run_experiment(args.spec, args.out, progress=not args.quiet, resume=not args.fresh)
    print(f"results written to {out}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from costeer_lab.errors import ConfigurationError, NotFoundError
    from costeer_lab.viz import report_experiment

    if not args.dir.is_dir():
        what = "does not exist" if not args.dir.exists() else "is a file"
        raise NotFoundError(
            f"results directory {str(args.dir)!r} {what}; expected the --out of `costeer-lab run`"
        )
    if args.output is not None and args.output.is_dir():
        raise ConfigurationError(
            f"--output {str(args.output)!r} is a directory; expected an HTML file path "
            f"such as {str(args.output / 'report.html')!r}"
        )

    path = report_experiment(args.dir, out_path=args.output, force=args.force)
    print(f"report written to {path}")
    return 0


def _cmd_kb_stats(args: argparse.Namespace) -> int:
    from costeer_lab.knowledge import kb_stats
    from costeer_lab.store import open_existing_store

    store = open_existing_store(args.store)
    try:
        stats = kb_stats(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps(stats, indent=2, sort_keys=True))
    else:
        width = max(len(k) for k in stats) if stats else 0
        for key, value in stats.items():
            print(f"{key:<{width}}  {value}")
    return 0


def _cmd_kb_query(args: argparse.Namespace) -> int:
    from costeer_lab.knowledge import kb_search
    from costeer_lab.store import open_existing_store

    if not args.text.strip():
        raise InvalidInputError("query text is empty; give a task description or an error")
    store = open_existing_store(args.store)
    try:
        _check_kind(store, args.kind, str(args.store))
        hits = kb_search(store, args.text, k=args.k, kind=args.kind, embedder=args.embedder)
    finally:
        store.close()
    if args.json:
        print(json.dumps(hits, indent=2))
        return 0
    if not hits:
        print("no matching knowledge")
    for h in hits:
        snippet = " ".join(str(h["content"]).split())[:80]
        print(f"{h['score']:.3f}  {h['kind']:<24} {h['id'][:40]:<40}  {snippet}")
    return 0


def _docs_kb(args: argparse.Namespace, *, create: bool = False) -> Any:
    from costeer_lab.docs import DocumentKB

    if not create:  # querying a store that does not exist would create an empty one
        from costeer_lab.errors import NotFoundError
        from costeer_lab.settings import default_data_dir, get_settings

        db = args.db or get_settings().db_path or str(default_data_dir() / "knowledge.db")
        if "://" not in db and db != ":memory:" and not Path(db).expanduser().is_file():
            raise NotFoundError(
                f"no document store at {db!r}; run `costeer-lab docs ingest PATH --db {db}` first"
            )
    return DocumentKB(args.collection, args.db, embedder=args.embedder)


def _cmd_docs_ingest(args: argparse.Namespace) -> int:
    with _docs_kb(args, create=True) as kb:
        report = kb.ingest(args.paths, source=args.source, version=args.version, prune=args.prune)
        if args.json:
            print(json.dumps(report.to_dict(), indent=2))
        else:
            print(
                f"{report.files} file(s): {report.added} added, {report.updated} updated, "
                f"{report.unchanged} unchanged, {report.removed} removed; "
                f"{report.chunks_added} chunk(s) written in {report.seconds:.2f} s "
                f"into {kb.collection!r} ({kb.store.url})"
            )
    return 0


def _cmd_docs_query(args: argparse.Namespace) -> int:
    try:
        where = None if args.where is None else json.loads(args.where)
    except json.JSONDecodeError as exc:
        from costeer_lab.errors import InvalidInputError

        raise InvalidInputError(
            f"--where must be a JSON object, got {args.where!r}: {exc}"
        ) from None
    import warnings

    from costeer_lab.docs import EmptyCollectionWarning

    with _docs_kb(args) as kb, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", EmptyCollectionWarning)
        hits = kb.retrieve(
            args.text,
            n_results=args.n,
            where=where,
            version_filter=args.version,
            mode=args.mode,
            mmr=args.mmr,
            min_score=args.min_score,
        )
        floor = kb.min_score if args.min_score is None else args.min_score
    empty = [w for w in caught if issubclass(w.category, EmptyCollectionWarning)]
    for w in caught:  # other warnings are not ours to hide
        if w not in empty:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if args.json:
        print(json.dumps(hits, indent=2))
        return 0
    if not hits:
        why = str(empty[0].message).split(";")[0] if empty else f"none scored {floor} or more"
        print(f"no matching documents ({why})")
    for h in hits:
        meta = h["metadata"]
        snippet = " ".join(str(h["content"]).split())[:70]
        title = f"{meta.get('file_name')} > {meta.get('section_title')}"
        print(f"{h['relevance_score']:.3f}  {title[:50]:<50}  {snippet}")
    return 0


def _cmd_docs_stats(args: argparse.Namespace) -> int:
    with _docs_kb(args) as kb:
        print(json.dumps(kb.stats(), indent=2, sort_keys=True))
    return 0


def _add_docs_parser(sub: Any) -> None:
    docs = sub.add_parser("docs", help="document knowledge base: ingest and query documents")
    docsub = docs.add_subparsers(dest="docs_command", required=True, metavar="DOCS_COMMAND")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--db", default=None, help="store file or URL (default COSTEER_LAB_DB_PATH)"
        )
        p.add_argument("--collection", default=None, help="default COSTEER_LAB_COLLECTION")
        p.add_argument("--embedder", default=None, help="hashing, minilm, openai:<model>")
        p.add_argument("--json", action="store_true", help="print JSON")

    p = docsub.add_parser("ingest", help="ingest files or folders (md, rst, txt, py docstrings)")
    p.add_argument("paths", nargs="+", type=Path, help="files or folders")
    p.add_argument("--source", default=None, help="source label (default: the path)")
    p.add_argument("--version", default=None, help="force this version on every chunk")
    p.add_argument("--prune", action="store_true", help="remove documents whose files are gone")
    common(p)
    p.set_defaults(func=_cmd_docs_ingest)
    p = docsub.add_parser("query", help="retrieve the chunks most relevant to a query")
    p.add_argument("text", help="query text")
    p.add_argument("-n", type=int, default=5, help="number of results (default 5)")
    p.add_argument("--version", default=None, help="only this version ('latest': the highest)")
    p.add_argument("--where", default=None, help='metadata filter as JSON, e.g. {"source": "x"}')
    p.add_argument("--mode", choices=("vector", "keyword", "hybrid"), default=None)
    p.add_argument("--mmr", action="store_true", help="diversify results (MMR)")
    p.add_argument(
        "--min-score",
        type=float,
        default=None,
        help="drop results scoring below this (default: settings docs.min_score)",
    )
    common(p)
    p.set_defaults(func=_cmd_docs_query)
    p = docsub.add_parser("stats", help="counts of a document collection")
    common(p)
    p.set_defaults(func=_cmd_docs_stats)


def _check_kind(store: Any, kind: str, where: str) -> None:
    """``--kind`` must be a node kind (or ``kb1``) that this store holds vectors of."""
    from costeer_lab.graph import NODE_KINDS, collection_name
    from costeer_lab.knowledge._kb_v1 import KB1_COLLECTION

    known = [*NODE_KINDS, "kb1"]
    if kind not in known:
        raise UnknownNameError(
            f"--kind {kind!r} is not a knowledge kind; {did_you_mean(kind, known)}"
        )
    held = [
        k
        for k in known
        if store.collection_info(KB1_COLLECTION if k == "kb1" else collection_name(k)) is not None
    ]
    name = KB1_COLLECTION if kind == "kb1" else collection_name(kind)
    if store.collection_info(name) is None:
        if held == ["kb1"]:
            hint = "it is a V1 knowledge base: use --kind kb1"
        elif held:
            hint = "kinds with vectors: " + ", ".join(held)
        else:
            hint = "it holds no embedded knowledge (a run with rag: none?)"
        raise NotFoundError(f"store {where!r} has no {kind!r} knowledge; {hint}")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and documentation)."""
    parser = argparse.ArgumentParser(
        prog="costeer-lab", description="Knowledge-driven code evolution experiments (CoSTEER)."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("run", help="run an experiment spec (arms × seeds) and write results")
    p.add_argument("spec", type=Path, help="experiment spec (YAML or JSON)")
    p.add_argument("--out", type=_out_dir, required=True, help="output directory")
    p.add_argument(
        "--fresh",
        action="store_true",
        help="replace an earlier run in --out (refused if it holds files a run did not write)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("report", help="write a self-contained HTML report of a results directory")
    p.add_argument("dir", type=Path, help="directory written by `costeer-lab run`")
    p.add_argument("--output", type=Path, default=None, help="HTML path (default DIR/report.html)")
    p.add_argument(
        "--force", action="store_true", help="replace --output even when it is not a report"
    )
    p.set_defaults(func=_cmd_report)

    kb = sub.add_parser("kb", help="inspect a knowledge base store")
    kbsub = kb.add_subparsers(dest="kb_command", required=True, metavar="KB_COMMAND")
    p = kbsub.add_parser("stats", help="counts of nodes, edges, vectors, queries")
    p.add_argument("store", help="store URL or SQLite file")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_kb_stats)
    p = kbsub.add_parser("query", help="similarity search over stored knowledge")
    p.add_argument("store", help="store URL or SQLite file")
    p.add_argument("text", help="query text")
    p.add_argument("-k", type=_positive_int, default=5, help="number of results (default 5)")
    p.add_argument("--kind", default="task_description", help="node kind to search")
    p.add_argument("--embedder", default=None, help="embedder (default: the store's)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_kb_query)
    _add_docs_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``costeer-lab``; returns the exit code."""
    from costeer_lab.errors import CosteerLabError

    args = build_parser().parse_args(argv)
    try:
        _check_environment(args.command)
        return int(args.func(args))
    except CosteerLabError as exc:
        print(f"costeer-lab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        again = " (rerun the same command to resume)" if args.command == "run" else ""
        print(f"costeer-lab: interrupted{again}", file=sys.stderr)
        return 130
    except OSError as exc:  # a file the command needed, named by the OS error
        where = f" {str(exc.filename)!r}" if exc.filename else ""
        print(f"costeer-lab: error:{where}: {exc.strerror or exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
