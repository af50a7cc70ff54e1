"""Benchmark: query-time context building on the podcast index, over the 125 questions of
``../shared/corpus/podcasts-questions.csv``: median and p95 per mode; for global search
(offline, with and without dynamic community selection) the reports read and selected,
how often it answers "no data", and how much source text its reduce context holds.

    .venv/bin/python bench/query_podcasts.py --db /path/to/podcasts.duckdb
    .venv/bin/python bench/query_podcasts.py          # builds the index first (about 5 min)
    .venv/bin/python bench/query_podcasts.py --keep /tmp/podcasts-query   # ... and keeps it
    .venv/bin/python bench/query_podcasts.py --files 400 --questions 20  # a quick look

Without ``--db`` the index is built offline with default settings (no GRAPHRAG_* variable
of the caller reaches the indexer); ``--files N`` indexes the first N files (sorted by name)
only, for machines where the whole corpus takes too long.

Context building is everything before the answer is written: embedding the question,
vector search, ranking and packing into the token budget. Tables are loaded once first.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from common import git, machine, write_json  # noqa: E402

from graphrag_query import IndexReader, global_search  # noqa: E402
from graphrag_query.basic_mode import BasicSettings, build_basic_context  # noqa: E402
from graphrag_query.local_mode import LocalSettings, build_local_context  # noqa: E402
from graphrag_query.result import NO_DATA_ANSWER  # noqa: E402


def _build_index(work: Path, corpus: str, files: int | None = None) -> dict:
    """Index the podcast transcripts (or the first ``files`` of them, by name) offline with
    default settings into ``work``: the database path, wall time and the CLI's summary."""
    source = REPO.parent / "shared" / "corpus" / "podcasts"
    for name in ["input", "dagster_home", "lancedb"]:
        shutil.rmtree(work / name, ignore_errors=True)
    for stale in work.glob("podcasts*.duckdb*"):  # the file, its WAL and published snapshots
        shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    if files:
        # A subset: copies of the first N files (names contain spaces, kept as they are;
        # copies, not symlinks: the indexer reads nothing that resolves outside its input folder).
        source_files = sorted(p for p in source.iterdir() if p.is_file())[:files]
        (work / "input").mkdir(parents=True)
        for path in source_files:
            shutil.copyfile(path, work / "input" / path.name)
        source = work / "input"
    home = work / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    database = work / "podcasts.duckdb"
    command = [
        sys.executable,
        "-m",
        "graphrag_evaluation.cli",
        "--input",
        str(source),
        "--corpus",
        corpus,
        "--db",
        str(database),
        "--vectors",
        str(work / "lancedb"),
    ]
    # Offline, default settings: none of the caller's GRAPHRAG_* settings reach the indexer.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHRAG_")} | {"DAGSTER_HOME": str(home)}
    print(f"indexing {source} into {work} ...", flush=True)
    started = time.perf_counter()
    result = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(
            f"graphrag-index failed ({result.returncode}):\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
        )
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    print(f"  {wall:.0f} s: {summary}", flush=True)
    index = {
        "database": str(database),
        "command": shlex.join(["graphrag-index", *command[3:]]),
        "files": len(list(Path(source).iterdir())),
        "wall_seconds": round(wall, 1),
        "summary": summary,
        "date": time.strftime("%Y-%m-%d"),
    }
    # Kept beside the database, so that a later --db run reports how the index was built.
    (work / "index_run.json").write_text(json.dumps(index, indent=2) + "\n")
    return index


def _percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000, 1),
    }


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--db",
        help=(
            "an existing podcasts index (built by graphrag-index --corpus podcasts); without it the index is built "
            "first"
        ),
    )
    parser.add_argument("--corpus", default="podcasts", help="corpus name in the index (default: podcasts)")
    parser.add_argument(
        "--keep", help="without --db: build the index in this folder and keep it (default: a temporary folder, removed)"
    )
    parser.add_argument("--files", type=int, help="without --db: index the first N transcript files (by name) only")
    parser.add_argument(
        "--questions",
        default=str(REPO.parent / "shared" / "corpus" / "podcasts-questions.csv"),
        help="CSV with a question_text column",
    )
    parser.add_argument("--limit", type=int, help="the first N questions only")
    parser.add_argument(
        "--out",
        default=str(REPO / "bench" / "results" / "query_podcasts.json"),
        help="JSON output (default: bench/results/query_podcasts.json)",
    )
    options = parser.parse_args()
    if options.db and (options.keep or options.files):
        parser.error("--keep and --files build an index; they do not go with --db")
    return options


def the_index(options: argparse.Namespace) -> tuple[Path, dict, Path | None]:
    """The index asked (--db) or built now: its file, its build's record, the folder built in."""
    if options.db:
        database = Path(options.db)
        saved = database.parent / "index_run.json"  # written when this script built it
        index = (json.loads(saved.read_text()) if saved.exists() else {}) | {"database": options.db, "built": False}
        return database, index, None
    work = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="graphrag-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    index = _build_index(work, options.corpus, options.files) | {"built": True}
    return Path(index["database"]), index, work


def timed_modes(reader: IndexReader, questions: list[str]) -> tuple[dict[str, list[float]], dict[str, list]]:
    """Each question's local and basic context building and global search (static and
    dynamic), timed: (seconds per mode, global's results per mode)."""
    # Warm-up, not timed: the first call of each mode builds the reader's memos (BM25 over
    # reports, report sentences, the mention graph's walk structures).
    build_basic_context(questions[0], reader, BasicSettings())
    build_local_context(questions[0], reader, LocalSettings())
    for dynamic in (False, True):
        global_search(questions[0], reader=reader, use_llm=False, dynamic=dynamic)
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
    return timings, answers


def global_figures(results: list) -> dict:
    details = [r.details for r in results]
    figures = {
        "reports_read_mean": round(statistics.mean(d["reports_read"] for d in details), 1),
        "no_data_answers": sum(r.answer == NO_DATA_ANSWER for r in results),
        "sources_in_reduce_context_mean": round(statistics.mean(r.context["sources"].height for r in results), 1),
        "reduce_tokens_mean": round(statistics.mean(d["reduce_tokens"] for d in details)),
        "context_tokens_mean": round(statistics.mean(r.usage.context_tokens for r in results)),
        "reports_at_level": details[0]["reports_at_level"],
        "no_data_questions": [i for i, r in enumerate(results, 1) if r.answer == NO_DATA_ANSWER],
    }
    if "reports_selected" in details[0]:
        selected = [d["reports_selected"] for d in details]
        figures |= {
            "reports_selected_mean": round(statistics.mean(selected), 1),
            "reports_selected_median": statistics.median(selected),
            "reports_selected_min": min(selected),
            "reports_selected_max": max(selected),
            "questions_with_under_4_selected": sum(n < 4 for n in selected),
        }
    return figures


def main() -> None:
    options = arguments()
    with open(options.questions, encoding="utf-8-sig") as handle:
        questions = [row["question_text"] for row in csv.DictReader(handle)]
    if options.limit:
        questions = questions[: options.limit]
    load_start = os.getloadavg()
    database, index, work = the_index(options)
    reader = IndexReader(str(database), corpus=options.corpus).load()
    timings, answers = timed_modes(reader, questions)
    result = {
        "command": shlex.join([Path(sys.executable).name, *sys.argv]),
        "date": time.strftime("%Y-%m-%d"),
        "commit": git("rev-parse", "--short", "HEAD"),
        "machine": machine(),
        "load_average_1_5_15_min": {
            "start": [round(x, 2) for x in load_start],
            "end": [round(x, 2) for x in os.getloadavg()],
        },
        "index": index,
        "database": str(database),
        "questions": len(questions),
        "reports_total": reader.table("community_reports").height,
        "context_building": {mode: _percentiles(samples) for mode, samples in timings.items()},
        "global": {mode: global_figures(results) for mode, results in answers.items()},
    }
    write_json(options.out, result)
    print(json.dumps(result, indent=2))
    if work is not None and not options.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
