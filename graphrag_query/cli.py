"""``graphrag-query "question" --method auto|global|local|drift|basic [--json]``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="graphrag-query", description="Ask the GraphRAG index a question.")
    parser.add_argument("question")
    # Checked by ``search`` against its registry of modes (importing it here would slow
    # every call's start-up).
    parser.add_argument("--method", default="auto", help="auto, global, local, drift or basic")
    parser.add_argument("--budget", type=int, help="context tokens of the chosen mode (default: the mode's own)")
    parser.add_argument("--db", help="DuckDB index (env GRAPHRAG_DB, default data/graphrag.duckdb)")
    parser.add_argument("--corpus", default="default")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    args = parser.parse_args(argv)

    from . import IndexNotFound, search, search_stream

    options = dict(method=args.method, database=args.db, corpus=args.corpus, budget=args.budget)
    try:
        if args.json:
            print(search(args.question, **options).to_json())
            return 0
        # The answer is printed as it is written; sources and usage follow it.
        stream = search_stream(args.question, **options)
        for piece in stream:
            print(piece, end="", flush=True)
    except (IndexNotFound, ValueError) as error:
        print(f"graphrag-query: {error}", file=sys.stderr)
        return 2
    result = stream.result
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
