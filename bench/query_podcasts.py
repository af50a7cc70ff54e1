"""Benchmark: query-time context building on the podcast index, over the 125 questions of
``../shared/corpus/podcasts-questions.csv``: median and p95 per mode; for global search
(offline, with and without dynamic community selection) the reports read and selected,
how often it answers "no data", and how much source text its reduce context holds.

    .venv/bin/python bench/query_podcasts.py --db /path/to/podcasts.duckdb
    .venv/bin/python bench/query_podcasts.py          # builds the index first (about 5 min)

Context building is everything before the answer is written: embedding the question,
vector search, ranking and packing into the token budget. Tables are loaded once first.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from graphrag_query import IndexReader, global_search  # noqa: E402
from graphrag_query.basic_mode import BasicSettings, build_basic_context  # noqa: E402
from graphrag_query.local_mode import LocalSettings, build_local_context  # noqa: E402
from graphrag_query.result import NO_DATA_ANSWER  # noqa: E402


def _build_index(work: Path) -> Path:
    home = work / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    database = work / "podcasts.duckdb"
    command = [sys.executable, "-m", "graphrag_assets.cli", "--input", str(REPO.parent / "shared" / "corpus" / "podcasts"), "--corpus", "podcasts", "--db", str(database), "--vectors", str(work / "lancedb")]
    subprocess.run(command, check=True, env=os.environ | {"DAGSTER_HOME": str(home)}, cwd=REPO, capture_output=True)
    return database


def _percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", help="an existing podcasts index (built by graphrag-index --corpus podcasts)")
    parser.add_argument("--corpus", default="podcasts")
    parser.add_argument("--questions", default=str(REPO.parent / "shared" / "corpus" / "podcasts-questions.csv"))
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "query_podcasts.json"))
    options = parser.parse_args()
    database = Path(options.db) if options.db else _build_index(Path(tempfile.mkdtemp(prefix="graphrag-bench-")))
    with open(options.questions, encoding="utf-8-sig") as handle:
        questions = [row["question_text"] for row in csv.DictReader(handle)]

    reader = IndexReader(str(database), corpus=options.corpus).load()
    build_basic_context(questions[0], reader, BasicSettings())  # warm-up
    reports = reader.table("community_reports")
    timings: dict[str, list[float]] = {"local": [], "basic": [], "global": [], "global_dynamic": []}
    answers: dict[str, list] = {"global": [], "global_dynamic": []}
    for question in questions:
        started = time.perf_counter()
        build_local_context(question, reader, LocalSettings())
        timings["local"].append(time.perf_counter() - started)

        started = time.perf_counter()
        build_basic_context(question, reader, BasicSettings())
        timings["basic"].append(time.perf_counter() - started)

        for mode, dynamic in (("global", False), ("global_dynamic", True)):
            started = time.perf_counter()
            result = global_search(question, reader=reader, use_llm=False, dynamic=dynamic)
            timings[mode].append(time.perf_counter() - started)
            answers[mode].append(result)

    def global_figures(results: list) -> dict:
        details = [r.details for r in results]
        figures = {
            "reports_read_mean": round(statistics.mean(d["reports_read"] for d in details), 1),
            "no_data_answers": sum(r.answer == NO_DATA_ANSWER for r in results),
            "sources_in_reduce_context_mean": round(statistics.mean(r.context["sources"].height for r in results), 1),
            "reduce_tokens_mean": round(statistics.mean(d["reduce_tokens"] for d in details)),
        }
        if "reports_selected" in details[0]:
            selected = [d["reports_selected"] for d in details]
            figures |= {"reports_selected_mean": round(statistics.mean(selected), 1), "reports_selected_min": min(selected), "questions_with_under_4_selected": sum(n < 4 for n in selected)}
        return figures

    result = {
        "database": str(database),
        "questions": len(questions),
        "reports_total": reports.height,
        "context_building": {mode: _percentiles(samples) for mode, samples in timings.items()},
        "global": {mode: global_figures(results) for mode, results in answers.items()},
    }
    Path(options.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
