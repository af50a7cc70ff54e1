"""Benchmark: offline chunking and extraction of the podcast corpus in 2 parallel shards on
the DuckLake backend, against 1 shard.

Both index ``../shared/corpus/podcasts`` from scratch into a DuckLake with a PostgreSQL
catalog (a throwaway server in a temporary folder); one with ``GRAPHRAG_SHARDS=1`` (the
plan step chunks and extracts everything itself, steps in one process), one with
``GRAPHRAG_SHARDS=2`` (two shard steps side by side, a process per step forked from a
server that imported the code location once), interleaved ``--repeat`` times. The
figures come from the runs' event logs: the chunking-and-extraction phase from the start
of the plan step to the start of the step recording both assets, the shard steps
themselves, and the whole command.

    .venv/bin/python bench/shards.py --repeat 2        # writes results/shards.json
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from common import REPO, git, index_corpus, machine, write_json  # noqa: E402

sys.path.insert(0, str(REPO))
from tests.postgres import PostgresServer  # noqa: E402  (the tests' throwaway server)

PODCASTS = REPO.parent / "shared" / "corpus" / "podcasts"
PLAN, RECORD, SHARD = "plan_chunking_and_extraction", "record_text_units_and_extractions", "chunk_and_extract_shard"


def phases(runs: dict) -> dict:
    """The chunking-and-extraction phase of the graph run, from its steps."""
    (steps,) = [run["steps"] for name, run in runs.items() if name.startswith("build_graph")]
    plan = next(step for key, step in steps.items() if key.endswith(PLAN))
    record = next(step for key, step in steps.items() if key.endswith(RECORD))
    shards = [step for key, step in steps.items() if SHARD in key]
    work = (
        max(s["start"] + s["seconds"] for s in shards) - min(s["start"] for s in shards) if shards else plan["seconds"]
    )
    return {
        "phase_seconds": round(record["start"] - plan["start"], 1),
        "chunk_and_extract_seconds": round(work, 1),
        "shard_steps_seconds": [s["seconds"] for s in shards],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--input", type=Path, default=PODCASTS)
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "shards.json"))
    options = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="graphrag-shards-"))
    postgres = PostgresServer().start()
    runs = []
    try:
        for round_ in range(options.repeat):
            for shards in (1, 2):
                work = scratch / f"shards{shards}-{round_}"
                work.mkdir()
                database = postgres.create_database(f"lake_{shards}_{round_}")
                conninfo = " ".join(f"{key}={value}" for key, value in postgres.connection(database).items())
                settings = {
                    "GRAPHRAG_DUCKLAKE_CATALOG": f"postgres:{conninfo}",
                    "GRAPHRAG_DUCKLAKE_DATA_PATH": str(work / "lake"),
                    "GRAPHRAG_SHARDS": str(shards),
                }
                load = os.getloadavg()
                result = index_corpus(work, options.input, "podcasts", settings, rerun=False)
                runs.append({"shards": shards, "round": round_, "load_average": load} | result | phases(result["runs"]))
                print(shards, runs[-1]["first_index"]["wall_seconds"], phases(result["runs"]), flush=True)
                shutil.rmtree(work)
    finally:
        postgres.stop()
        shutil.rmtree(scratch, ignore_errors=True)

    def median(shards: int, key: str) -> float:
        return statistics.median(
            run[key] if key in run else run["first_index"][key] for run in runs if run["shards"] == shards
        )

    summary = {
        key: {
            "1 shard": median(1, key),
            "2 shards": median(2, key),
            "speed-up": round(median(1, key) / median(2, key), 2),
        }
        for key in ("chunk_and_extract_seconds", "phase_seconds", "wall_seconds")
    }
    result = {"summary": summary, "runs": runs, "machine": machine(), "commit": git("rev-parse", "HEAD")}
    write_json(options.out, result)
    print(summary)


if __name__ == "__main__":
    main()
