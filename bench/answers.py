"""Benchmark: the answers a user reads, offline, on A Christmas Carol.

    .venv/bin/python bench/answers.py                  # writes bench/results/answers.json
    .venv/bin/python bench/answers.py --label before   # results/answers_before.json (e.g. on an older checkout)
    .venv/bin/python bench/answers.py --work /tmp/carol --reuse   # ask the kept index again

Indexes ``../shared/corpus/christmas_carol/book.txt`` alone with ``graphrag-index --corpus
christmas_carol`` (fresh DAGSTER_HOME, offline, default settings: no ``GRAPHRAG_*``
variable of the caller reaches it), then asks the 27 questions of
``../shared/corpus/christmas_carol-questions.jsonl`` through ``graphrag_query.search`` with
``use_llm=False``, in every mode and through the router (``auto``). Per mode and question
kind (local, multihop, global):

- contains: the answer holds one of the expected answers or their aliases as whole words
  (``graphrag_assets.core.evaluation.contains_answer``, what ``graphrag-eval`` measures);
  for global questions, the share of the words a good answer uses;
- refusals: the answer is the no-data answer;
- context tokens and seconds per question (median).

Also: the 20 best-connected entities, and whether any text unit holds Project Gutenberg's
wrapping (what the graph and every context are built from). Gold evidence on 2Wiki-101 at
2k/4k/8k tokens is ``bench/retrieval.py``'s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from common import machine, write_json  # noqa: E402
from retrieval import build_index, git_state  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
BOOK = SHARED / "corpus" / "christmas_carol" / "book.txt"
QUESTIONS = SHARED / "corpus" / "christmas_carol-questions.jsonl"
CORPUS = "christmas_carol"
MODES = ("auto", "local", "global", "drift", "basic")
KINDS = ("local", "multihop", "global")


def ask_all(reader, questions) -> dict:
    """Every mode on every question, measured by the product's evaluation
    (``graphrag_query.evaluation``: whole-word containment of an expected answer or alias,
    the no-data answer as a refusal); per mode, the figures by question kind."""
    from graphrag_assets.core.evaluation import contains_answer
    from graphrag_query.evaluation import evaluate

    measured = evaluate(reader, questions, MODES)
    figures = {}
    for mode in MODES:
        rows = []
        for question, row in zip(questions, measured.filter(measured["mode"] == mode).iter_rows(named=True)):
            words = [word for word in question.answers if contains_answer(row["answer"], [word])]
            rows.append(
                {
                    "id": question.id,
                    "kind": question.kind,
                    "method": row["method"],
                    "contains": row["answer_contains"],
                    "global_words": len(words) / len(question.answers),
                    "refused": row["refused"],
                    "context_tokens": row["context_tokens"],
                    "seconds": row["seconds"],
                }
            )
        by_kind = {}
        for kind in KINDS:
            mine = [row for row in rows if row["kind"] == kind]
            by_kind[kind] = {
                "questions": len(mine),
                "contains": sum(row["contains"] for row in mine),
                "global_words": round(statistics.mean(row["global_words"] for row in mine), 3) if mine else None,
                "refusals": sum(row["refused"] for row in mine),
            }
        figures[mode] = {
            "by_kind": by_kind,
            "refusals": sum(row["refused"] for row in rows),
            "median_context_tokens": statistics.median(row["context_tokens"] for row in rows),
            "median_seconds": round(statistics.median(row["seconds"] for row in rows), 3),
            "questions": rows,
        }
    return figures


def graph_figures(reader) -> dict:
    units = reader.table("text_units")["text"]
    return {
        "top_entities": reader.table("entities").sort("degree", descending=True).head(20)["title"].to_list(),
        "text_units_with_gutenberg_text": int(units.str.contains("(?i)project gutenberg").sum()),
        "entities": reader.table("entities").height,
    }


def table(figures: dict) -> str:
    lines = [
        "| mode | local: answer contains | multihop: contains | global: expected words | refusals | "
        "context tokens (median) | seconds (median) |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode, data in figures.items():
        kinds = data["by_kind"]
        lines.append(
            f"| {mode} | {kinds['local']['contains']}/{kinds['local']['questions']} | "
            f"{kinds['multihop']['contains']}/{kinds['multihop']['questions']} | "
            f"{kinds['global']['global_words']:.0%} | {data['refusals']}/27 | {data['median_context_tokens']:.0f} | "
            f"{data['median_seconds']:.2f} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", help="folder for the index (default: a temp folder)")
    parser.add_argument("--reuse", action="store_true", help="ask the index already in --work")
    parser.add_argument("--label", help="results/answers_<label>.json")
    options = parser.parse_args()
    work = Path(options.work or tempfile.mkdtemp(prefix="graphrag-answers-"))
    work.mkdir(parents=True, exist_ok=True)
    index = None if options.reuse else build_index(work, BOOK, {}, corpus=CORPUS)

    from graphrag_query import IndexReader

    reader = IndexReader(str(work / "index.duckdb"), CORPUS).load()
    from graphrag_assets.core.evaluation import read_questions

    questions = read_questions(QUESTIONS)
    figures = ask_all(reader, questions)
    result = {
        "command": " ".join([".venv/bin/python", "bench/answers.py", *sys.argv[1:]]),
        "machine": machine(),
        "code": git_state(),
        "index": index,
        "graph": graph_figures(reader),
        "modes": figures,
    }
    name = f"answers_{options.label}.json" if options.label else "answers.json"
    write_json(REPO / "bench" / "results" / name, result)
    print(table(figures))
    print("top entities:", ", ".join(result["graph"]["top_entities"]))
    print("text units with Project Gutenberg text:", result["graph"]["text_units_with_gutenberg_text"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
