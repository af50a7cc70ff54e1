"""Benchmark: many small files. Generates N short text files (a few sentences each, with
names for offline extraction to find), indexes them with ``graphrag-index`` from scratch
(fresh DAGSTER_HOME with the project's dagster.yaml, fresh DuckDB file), then again with
nothing changed. Records wall time, peak RSS and the Dagster events each pass wrote.

    .venv/bin/python bench/many_files.py                    # 20,000 files
    .venv/bin/python bench/many_files.py --files 2000 --out /tmp/many_2000.json
    .venv/bin/python bench/many_files.py --keep /tmp/many-files   # keep files and index
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import git, machine, write_json  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CORPUS = "many"
FILES_PER_FOLDER = 500  # keeps directory listings short, as real collections are

FIRST_NAMES = [
    "Ada",
    "Grace",
    "Alan",
    "Edsger",
    "Barbara",
    "Donald",
    "Margaret",
    "Ken",
    "Dennis",
    "Frances",
    "John",
    "Radia",
]
LAST_NAMES = [
    "Lovelace",
    "Hopper",
    "Turing",
    "Dijkstra",
    "Liskov",
    "Knuth",
    "Hamilton",
    "Thompson",
    "Ritchie",
    "Allen",
    "Backus",
    "Perlman",
]
PLACES = ["London", "Cambridge", "Princeton", "Austin", "Boston", "Zurich", "Paris", "Berlin", "Toronto", "Kyoto"]
ORGANISATIONS = [
    "Bell Labs",
    "the Royal Society",
    "Xerox PARC",
    "the Computer History Museum",
    "the Institute for Advanced Study",
]
VERBS = ["met", "wrote to", "worked with", "argued with", "visited", "taught"]
TOPICS = [
    "compilers",
    "sorting networks",
    "type systems",
    "garbage collection",
    "routing protocols",
    "proof assistants",
]


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def small_text(rng: random.Random) -> str:
    """Three to five sentences naming people, places and organisations."""
    sentences = [
        f"{person(rng)} {rng.choice(VERBS)} {person(rng)} in {rng.choice(PLACES)}.",
        f"They spoke about {rng.choice(TOPICS)} at {rng.choice(ORGANISATIONS)}.",
        f"Later {person(rng)} published notes on {rng.choice(TOPICS)}.",
        f"{person(rng)} moved to {rng.choice(PLACES)} to join {rng.choice(ORGANISATIONS)}.",
        f"The letters of {person(rng)} are kept in {rng.choice(PLACES)}.",
    ]
    return " ".join(sentences[: rng.randint(3, 5)]) + "\n"


def write_files(folder: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    for number in range(count):
        path = folder / f"part-{number // FILES_PER_FOLDER:03d}" / f"note-{number:06d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(small_text(rng), encoding="utf-8")


def run_index(args: list[str], env: dict) -> dict:
    """One ``graphrag-index`` pass: wall time, and its peak RSS from ``os.wait4`` (this
    process's, not the largest of every child so far)."""
    started = time.perf_counter()
    command = [sys.executable, "-c", "import sys; from graphrag_evaluation.cli import main; sys.exit(main())", *args]
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=stdout, stderr=stderr, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        wall = time.perf_counter() - started
        stdout.seek(0)
        stderr.seek(0)
        if process.returncode != 0:
            raise SystemExit(f"graphrag-index failed ({process.returncode}):\n{stderr.read()[-4000:]}")
        summary = stdout.read().strip().splitlines()[-1]
    return {
        "wall_seconds": round(wall, 1),
        "peak_rss_mib": round(usage.ru_maxrss / 1024),  # KiB on Linux
        "summary": summary,
    }


def dagster_events(home: Path) -> dict[str, int]:
    """Events by type over every run of the instance, read from its SQLite files (the
    index shard holds asset events, each run's own file all of that run's events)."""
    counts: dict[str, int] = {}
    for database in sorted((home / "history" / "runs").glob("*.db")):
        if database.name == "index.db":
            continue
        with sqlite3.connect(database) as connection:
            for event_type, n in connection.execute("SELECT dagster_event_type, count(*) FROM event_logs GROUP BY 1"):
                counts[event_type or "log message"] = counts.get(event_type or "log message", 0) + n
    return dict(sorted(counts.items()))


def events_added(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {kind: n - before.get(kind, 0) for kind, n in after.items() if n != before.get(kind, 0)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "many_files.json"))
    parser.add_argument("--keep", help="generate files and build the index in this folder, and keep them")
    options = parser.parse_args()

    work = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="graphrag-many-"))
    if options.keep:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    inputs, home = work / "input", work / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    write_files(inputs, options.files, options.seed)
    env = os.environ | {
        "DAGSTER_HOME": str(home),
        "GRAPHRAG_DB": str(work / "index.duckdb"),
        "GRAPHRAG_VECTORS": str(work / "lancedb"),
    }
    args = ["--input", str(inputs), "--corpus", CORPUS]

    load_before = os.getloadavg()
    first = run_index(args, env)
    first["dagster_events"] = dagster_events(home)
    rerun = run_index(args, env)
    rerun["dagster_events"] = events_added(first["dagster_events"], dagster_events(home))
    result = {
        "files": options.files,
        "bytes": sum(p.stat().st_size for p in inputs.rglob("*.txt")),
        "first_index": first,
        "rerun_nothing_changed": rerun,
        "load_average_before": [round(load, 2) for load in load_before],
        "load_average_after": [round(load, 2) for load in os.getloadavg()],
        "machine": machine(),
        "commit": git("rev-parse", "--short", "HEAD"),
    }
    write_json(options.out, result)
    print(json.dumps(result, indent=2))
    if not options.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
