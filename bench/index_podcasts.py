"""Benchmark: index a corpus offline with ``graphrag-index`` as a single run, from scratch,
then re-run with nothing changed. Records wall time, peak RSS, rows per table and where
the time went (per Dagster step, and the per-partition bookkeeping between steps).

    .venv/bin/python bench/index_podcasts.py                       # ../shared/corpus/podcasts
    .venv/bin/python bench/index_podcasts.py --input DIR --corpus NAME --out results/x.json
    .venv/bin/python bench/index_podcasts.py --keep /tmp/podcasts-index   # keep it for query_podcasts.py
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from common import machine, write_json  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TABLES = ["documents", "text_units", "entities", "relationships", "communities", "community_reports", "embeddings"]


def _index(args: list[str], env: dict) -> tuple[float, int, str]:
    started = time.perf_counter()
    command = [sys.executable, "-c", "import sys; from graphrag_assets.cli import main; sys.exit(main())", *args]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"graphrag-index failed ({result.returncode}):\n{result.stderr[-4000:]}")
    # ru_maxrss of children: the largest resident set of any finished child (KiB on Linux).
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, result.stdout


def _step_times(dagster_home: Path) -> dict:
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    from dagster import DagsterInstance
    from dagster._core.events import DagsterEventType

    steps, runs = {}, {}
    with DagsterInstance.get() as instance:
        for run in instance.get_runs():
            records = instance.all_logs(run.run_id)
            started = {}
            for record in records:
                event = record.dagster_event
                if event is None:
                    continue
                if event.event_type == DagsterEventType.STEP_START:
                    started[record.step_key] = record.timestamp
                elif event.event_type == DagsterEventType.STEP_SUCCESS:
                    steps[record.step_key] = round(record.timestamp - started[record.step_key], 1)
            runs[run.job_name] = {
                "seconds": round(records[-1].timestamp - records[0].timestamp, 1),
                "events": len(records),
            }
    return {"steps_seconds": steps, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", default=str(REPO.parent / "shared" / "corpus" / "podcasts"))
    parser.add_argument("--corpus", default="podcasts")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "index_podcasts.json"))
    parser.add_argument("--keep", help="build the index in this folder and keep it (e.g. for query_podcasts.py)")
    options = parser.parse_args()

    work = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="graphrag-bench-"))
    if options.keep:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    home = work / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    env = os.environ | {
        "DAGSTER_HOME": str(home),
        "GRAPHRAG_DB": str(work / "index.duckdb"),
        "GRAPHRAG_VECTORS": str(work / "lancedb"),
    }
    args = ["--input", options.input, "--corpus", options.corpus]

    first_wall, peak_kib, first_out = _index(args, env)
    second_wall, _, second_out = _index(args, env)
    with duckdb.connect(str(work / "index.duckdb"), read_only=True) as connection:
        rows = {
            t: connection.execute(f"SELECT count(*) FROM {t} WHERE corpus = ?", [options.corpus]).fetchone()[0]
            for t in TABLES
        }
        tokens = connection.execute(
            "SELECT sum(n_tokens) FROM text_units WHERE corpus = ?", [options.corpus]
        ).fetchone()[0]
        levels = connection.execute(
            "SELECT count(DISTINCT level) FROM communities WHERE corpus = ?", [options.corpus]
        ).fetchone()[0]
    result = {
        "input": options.input,
        "files": sum(1 for p in Path(options.input).rglob("*") if p.is_file()),
        "tokens_in_text_units": int(tokens or 0),
        "first_index": {
            "wall_seconds": round(first_wall, 1),
            "peak_rss_mib": round(peak_kib / 1024),
            "summary": first_out.strip().splitlines()[-1],
        },
        "rerun_nothing_changed": {
            "wall_seconds": round(second_wall, 1),
            "summary": second_out.strip().splitlines()[-1],
        },
        "rows": rows,
        "community_levels": levels,
        "dagster": _step_times(home),
        "machine": machine(),
    }
    write_json(options.out, result)
    print(json.dumps(result, indent=2))
    if not options.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
