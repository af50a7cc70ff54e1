"""Benchmark: the answers a user reads, offline, on A Christmas Carol and on 2Wiki-101.

    .venv/bin/python bench/answers.py                  # writes bench/results/answers.json
    .venv/bin/python bench/answers.py --label before   # results/answers_before.json (e.g. on an older checkout)
    .venv/bin/python bench/answers.py --work /tmp/carol --reuse   # ask the kept index again
    .venv/bin/python bench/answers.py --2wiki-work /tmp/bench2wiki --reuse   # 2Wiki: reuse bench/retrieval.py's index

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
wrapping (what the graph and every context are built from).

2Wiki-101 (``../shared/corpus/2wiki-101``, indexed as ``bench/retrieval.py`` does): every
mode at 2k/4k/8k tokens, with the expected answers of ``bench/data/2wiki-101-answers.jsonl``
(read from each question's gold passages; the questions those passages do not answer are
left out): answer contains an expected answer, the stated "Answer:" phrase does, refusals,
and gold evidence present in the context.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from common import machine, write_json  # noqa: E402
from retrieval import build_index, git_state, load_jsonl, run_modes  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
BOOK = SHARED / "corpus" / "christmas_carol" / "book.txt"
QUESTIONS = SHARED / "corpus" / "christmas_carol-questions.jsonl"
CORPUS = "christmas_carol"
WIKI = SHARED / "corpus" / "2wiki-101"
WIKI_ANSWERS = REPO / "bench" / "data" / "2wiki-101-answers.jsonl"
WIKI_MODES = ("auto", "local", "global", "drift", "basic")
BUDGETS = (2000, 4000, 8000)
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
                    "characters": len(row["answer"]),  # a longer answer holds more
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
            "median_answer_characters": statistics.median(row["characters"] for row in rows),
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
        "context tokens (median) | seconds (median) | answer characters (median) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode, data in figures.items():
        kinds = data["by_kind"]
        lines.append(
            f"| {mode} | {kinds['local']['contains']}/{kinds['local']['questions']} | "
            f"{kinds['multihop']['contains']}/{kinds['multihop']['questions']} | "
            f"{kinds['global']['global_words']:.0%} | {data['refusals']}/27 | {data['median_context_tokens']:.0f} | "
            f"{data['median_seconds']:.2f} | {data['median_answer_characters']:.0f} |"
        )
    return "\n".join(lines)


def ask_2wiki(work: Path, reuse: bool) -> dict:
    """Every mode at every budget on the 2Wiki-101 questions that have an expected answer."""
    index = None if reuse else build_index(work, WIKI / "passages.jsonl", {}, corpus="wiki")
    from graphrag_query import IndexReader

    answers = {row["id"]: row["answers"] for row in load_jsonl(WIKI_ANSWERS)}
    questions = [q | {"answers": answers.get(q["id"], [])} for q in load_jsonl(WIKI / "questions.jsonl")]
    questions = [q for q in questions if q["answers"]]
    reader = IndexReader(str(work / "index.duckdb"), "wiki").load()
    measured = run_modes(reader, questions, budgets=BUDGETS, modes=WIKI_MODES, progress=None)
    return {"index": index, "questions": len(questions), "figures": measured["figures"]}


def wiki_table(wiki: dict) -> str:
    lines = [
        "| mode | budget | answer contains | stated answer | refusals | gold present | tokens (median) "
        "| answer characters (mean) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode, data in wiki["figures"].items():
        for budget, figures in data["budgets"].items():
            lines.append(
                f"| {mode} | {int(budget) // 1000}k | {figures['contains']:.0%} | {figures['stated']:.0%} | "
                f"{figures['refused']:.0%} | {figures['gold_present']:.1%} | {figures['context_tokens_median']:.0f} "
                f"| {figures['characters']:.0f} |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", help="folder for the index (default: a temp folder)")
    parser.add_argument("--reuse", action="store_true", help="ask the index already in --work")
    parser.add_argument("--label", help="results/answers_<label>.json")
    parser.add_argument(
        "--2wiki-work", dest="wiki_work", help="folder for the 2Wiki-101 index (default: a temp folder)"
    )
    parser.add_argument("--no-2wiki", dest="wiki", action="store_false", help="Christmas Carol only")
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
    if options.wiki:
        wiki_work = Path(options.wiki_work or tempfile.mkdtemp(prefix="graphrag-answers-2wiki-"))
        wiki_work.mkdir(parents=True, exist_ok=True)
        result["2wiki"] = ask_2wiki(wiki_work, options.reuse and (wiki_work / "index.duckdb").exists())
    name = f"answers_{options.label}.json" if options.label else "answers.json"
    write_json(REPO / "bench" / "results" / name, result)
    print(table(figures))
    print("top entities:", ", ".join(result["graph"]["top_entities"]))
    print("text units with Project Gutenberg text:", result["graph"]["text_units_with_gutenberg_text"])
    if options.wiki:
        print(f"2Wiki-101, {result['2wiki']['questions']} questions with an expected answer:")
        print(wiki_table(result["2wiki"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
