"""``graphrag-eval [QUESTIONS] --corpus NAME [--modes ...] [--llm] [--json]``: the evaluation
the indexer runs after each build (``graphrag_query.evaluation.evaluate``), on any
published corpus, imported ones included."""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    from graphrag_assets.configuration import value_of

    parser = argparse.ArgumentParser(
        prog="graphrag-eval", description="Measure the answers of a published corpus on a questions file."
    )
    parser.add_argument(
        "questions",
        nargs="?",
        help="JSONL questions file (default: the corpus's file in GRAPHRAG_EVAL_QUESTIONS)",
    )
    parser.add_argument("--db", help="DuckDB index (env GRAPHRAG_DB, default data/graphrag.duckdb)")
    parser.add_argument("--corpus", default="default", help="the corpus to evaluate (default: default)")
    parser.add_argument(
        "--modes",
        default=value_of("GRAPHRAG_EVAL_MODES"),
        help="query modes, comma-separated (default: GRAPHRAG_EVAL_MODES, basic,local,global,drift)",
    )
    parser.add_argument(
        "--llm",
        action=argparse.BooleanOptionalAction,
        default=value_of("GRAPHRAG_EVAL_LLM"),
        help="answers written by the configured model (default: GRAPHRAG_EVAL_LLM, off: extractive, no calls)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per mode and question")
    args = parser.parse_args(argv)

    from graphrag_assets.core.evaluation import (
        QuestionsError,
        questions_file_for,
        read_questions,
        summary,
        summary_markdown,
        with_build,
    )

    from . import IndexNotFound, IndexReader
    from .evaluation import evaluate, parse_modes

    path = args.questions or questions_file_for(args.corpus, value_of("GRAPHRAG_EVAL_QUESTIONS"))
    if path is None:
        print(
            f"graphrag-eval: no questions file: give one, or name one for corpus {args.corpus!r} in "
            "GRAPHRAG_EVAL_QUESTIONS",
            file=sys.stderr,
        )
        return 2
    try:
        modes = parse_modes(args.modes)
        questions = read_questions(path)
        reader = IndexReader(args.db, args.corpus).load()
        builds = reader.table("corpus_builds")
        if builds.is_empty():
            raise IndexNotFound(f"corpus {args.corpus!r} has no complete build in {reader.source}")
        measures = evaluate(
            reader, questions, modes, use_llm=args.llm, progress=lambda line: print(line, file=sys.stderr)
        )
    except (IndexNotFound, QuestionsError, ValueError) as error:
        print(f"graphrag-eval: {error}", file=sys.stderr)
        return 2
    rows = with_build(measures, args.corpus, builds["built_at"][0])
    if args.json:
        for row in rows.iter_rows(named=True):
            print(json.dumps(row, ensure_ascii=False, default=str))
        return 0
    print(f"{len(questions)} questions of {path} on corpus {args.corpus!r} ({reader.source})")
    print(summary_markdown(summary(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
