"""``graphrag-query "question" --method auto|global|local|drift|basic [--json]``: the
options of ``graphrag_query.search`` on the command line."""

from __future__ import annotations

import argparse
import os
import sys

from .modes import MODES


def main(argv: list[str] | None = None) -> int:
    """Answer the question of ``argv`` (None: the command line's). Run as the program
    (``argv`` None), the process ends here once the output is written: see ``_exit``."""
    status = _answer(argv)
    if argv is None:
        _exit(status)
    return status


def _exit(status: int) -> None:
    """End the process as Python's own exit would, without its teardown: freeing every
    module and object (polars, numpy, DuckDB, the token encoder) is a sizeable part of a
    cold query, spent on memory the process returns anyway. The exit handlers run and the
    output is flushed first; while another thread is alive (the LLM path's event loop or
    cache writer), or when the output cannot be flushed (a closed pipe), the ordinary exit
    is left to wait for it and report it."""
    import atexit
    import threading

    if threading.active_count() > 1:
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(status)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphrag-query", description="Ask the GraphRAG index a question.")
    parser.add_argument("question")
    parser.add_argument(
        "--method",
        default="auto",
        choices=["auto", *MODES],
        help="auto: the mode the question calls for (its reason is printed); "
        + "; ".join(f"{name}: {mode.summary}" for name, mode in MODES.items()),
    )
    parser.add_argument("--budget", type=int, help="context tokens of the chosen mode (default: the mode's own)")
    parser.add_argument(
        "--community-level",
        type=int,
        help="global search: the level of the community hierarchy whose reports are mapped, with the leaf "
        "communities above it (default: global search's own)",
    )
    parser.add_argument(
        "--response-type",
        help="the form of the answer, e.g. 'a single sentence', 'a list of 3-7 points' (default: multiple paragraphs)",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="answer without the LLM even when one is configured (extractive answers, labelled as such)",
    )
    parser.add_argument("--db", help="DuckDB index (env GRAPHRAG_DB, default data/graphrag.duckdb)")
    parser.add_argument("--corpus", default="default", help="the corpus to ask (default: default)")
    parser.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="print the answer as it is written (default), or all at once with --no-stream",
    )
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON (implies --no-stream)")
    return parser


def _search_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of ``search`` the command line gives; an option not given
    keeps the default ``search`` declares."""
    given = dict(
        method=args.method,
        database=args.db,
        corpus=args.corpus,
        budget=args.budget,
        community_level=args.community_level,
        response_type=args.response_type,
        use_llm=False if args.offline else None,
    )
    return {name: value for name, value in given.items() if value is not None}


def _answer(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)

    from . import IndexNotFound, search, search_stream

    options = _search_options(args)
    printed = False  # some of the answer is on the screen
    try:
        if args.json:
            print(search(args.question, **options).to_json())
            return 0
        if args.stream:
            # The answer is printed as it is written; sources and usage follow it.
            stream = search_stream(args.question, **options)
            for piece in stream:
                print(piece, end="", flush=True)
                printed = True
            result = stream.result
        else:
            result = search(args.question, **options)
            print(result.answer, end="")
    except (IndexNotFound, ValueError) as error:
        print(f"graphrag-query: {error}", file=sys.stderr)
        return 2
    except Exception as error:
        if not _llm_failure(error):
            raise
        if printed:  # a reader must not take the part shown for the whole answer
            print(f"\n\n[answer cut off: {error}]", flush=True)
        print(f"graphrag-query: {error}{_hint(error)}", file=sys.stderr)
        return 1
    _print_how_answered(result)
    return 0


def _print_how_answered(result) -> None:
    """What follows the answer: the mode and why, who wrote it, its sources and its cost."""
    print()
    print()
    print(
        f"[{result.method} search"
        + (f"; {result.route_reason}" if result.route_reason else "")
        + f"; {result.generated_by}]"
    )
    if result.citations:
        print("Sources:")
        for citation in result.citations[:10]:
            print(f"  [{citation.text_unit_human_readable_id}] {citation.document_title}")
    usage = result.usage
    print(f"({usage.llm_calls} LLM calls, {usage.context_tokens} context tokens, {usage.seconds:.2f} s)")


def _llm_failure(error: Exception) -> bool:
    """Whether the model call failed (after its retries) or the endpoint refused it. The
    classes are imported only here: a query that reaches the model has loaded them."""
    from graphrag_assets.llm.errors import EndpointRefused, LLMError

    return isinstance(error, LLMError | EndpointRefused)


def _hint(error: Exception) -> str:
    """What to check, for a failure whose message does not name a setting already."""
    if "GRAPHRAG_" in str(error):
        return ""
    return " (check GRAPHRAG_LLM_BASE_URL and GRAPHRAG_LLM_MODEL, or answer without the model with --offline)"


if __name__ == "__main__":
    sys.exit(main())
