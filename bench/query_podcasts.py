"""Benchmark: query-time context building on the podcast index, over the 125 questions of
``../shared/corpus/podcasts-questions.csv``: median and p95 per mode, and the share of
community reports dynamic community selection reads compared with the full global map.

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

from graphrag_query import IndexReader  # noqa: E402
from graphrag_query.basic_mode import BasicSettings, build_basic_context  # noqa: E402
from graphrag_query.global_mode import GlobalSettings, map_batches, reports_at_level, select_dynamically  # noqa: E402
from graphrag_query.local_mode import LocalSettings, build_local_context  # noqa: E402
from graphrag_query.relevance import RelevanceScorer  # noqa: E402


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
    build_basic_context(questions[0], reader, BasicSettings())  # warm-up: LanceDB import and table open
    reports = reader.table("community_reports")
    timings: dict[str, list[float]] = {"local": [], "basic": [], "global": [], "global_dynamic": []}
    read_full, read_dynamic = [], []
    settings = GlobalSettings()
    for question in questions:
        started = time.perf_counter()
        build_local_context(question, reader, LocalSettings())
        timings["local"].append(time.perf_counter() - started)

        started = time.perf_counter()
        build_basic_context(question, reader, BasicSettings())
        timings["basic"].append(time.perf_counter() - started)

        started = time.perf_counter()
        full = reports_at_level(reports, settings.community_level)
        map_batches(full, settings)
        timings["global"].append(time.perf_counter() - started)

        started = time.perf_counter()
        scorer = RelevanceScorer(question, reports["full_content"].to_list())
        selected, ratings = select_dynamically(reports, scorer, settings)
        map_batches(selected, settings)
        timings["global_dynamic"].append(time.perf_counter() - started)
        read_full.append(full.height)
        read_dynamic.append(ratings.height)

    result = {
        "database": str(database),
        "questions": len(questions),
        "reports_total": reports.height,
        "context_building": {mode: _percentiles(samples) for mode, samples in timings.items()},
        "global_reports_read": {
            "full_map_at_level_2": statistics.mean(read_full),
            "dynamic_rated_mean": round(statistics.mean(read_dynamic), 1),
            "dynamic_share_of_full_map": round(statistics.mean(read_dynamic) / statistics.mean(read_full), 3),
        },
    }
    Path(options.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
