"""Benchmark: the offline first index of 1M, 3M and 10M tokens on both backends.

The corpora are the podcast transcripts (1.02M tokens) repeated with their proper names
perturbed per copy (``bench/scaled_corpus.py``), so N copies hold N times the tokens and
entities. Backends: ``duckdb``, the single DuckDB file (the default); ``ducklake``, a
DuckLake with a PostgreSQL catalog (a throwaway server in a temporary folder, as the tests
start one) and its parquet files in a folder, chunking and extraction in
``GRAPHRAG_SHARDS`` processes. Each index is built from scratch, then run again with
nothing changed; wall time, CPU, the peak of the process tree's summed resident sets,
rows and the steps of the runs go to the JSON.

    .venv/bin/python bench/scale.py                                   # 1, 3, 10 copies; both backends
    .venv/bin/python bench/scale.py --copies 1 3 --backends duckdb --out bench/results/scale_small.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, git, index_corpus, machine, write_json  # noqa: E402

sys.path.insert(0, str(REPO))
from tests.postgres import PostgresServer  # noqa: E402  (the tests' throwaway server)


def corpus_of(copies: int, folder: Path) -> Path:
    target = folder / f"podcasts-x{copies}"
    if not target.exists():
        subprocess.run(
            [sys.executable, str(REPO / "bench" / "scaled_corpus.py"), "--copies", str(copies), "--out", str(target)],
            check=True,
        )
    return target


def backend_settings(backend: str, work: Path, postgres: PostgresServer | None, shards: int) -> dict[str, str]:
    if backend == "duckdb":
        return {}
    database = postgres.create_database(f"lake_{work.name}")
    conninfo = " ".join(f"{key}={value}" for key, value in postgres.connection(database).items())
    return {
        "GRAPHRAG_DUCKLAKE_CATALOG": f"postgres:{conninfo}",
        "GRAPHRAG_DUCKLAKE_DATA_PATH": str(work / "lake"),
        "GRAPHRAG_SHARDS": str(shards),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 3, 10])
    parser.add_argument("--backends", nargs="+", default=["duckdb", "ducklake"], choices=["duckdb", "ducklake"])
    parser.add_argument("--shards", type=int, default=2, help="GRAPHRAG_SHARDS on the DuckLake backend")
    parser.add_argument("--corpora", type=Path, help="where the generated corpora are kept (default: a temp dir)")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "scale.json"))
    options = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="graphrag-scale-"))
    corpora = options.corpora or scratch / "corpora"
    postgres = PostgresServer().start() if "ducklake" in options.backends else None
    results = []
    try:
        for copies in options.copies:
            folder = corpus_of(copies, corpora)
            for backend in options.backends:
                work = scratch / f"{backend}-x{copies}"
                work.mkdir()
                started = time.strftime("%Y-%m-%dT%H:%M:%S")
                print(f"{copies} copies on {backend} ...", flush=True)
                run = index_corpus(work, folder, "podcasts", backend_settings(backend, work, postgres, options.shards))
                results.append(
                    {"copies": copies, "backend": backend, "started": started, "load_average": os.getloadavg()} | run
                )
                print(json.dumps(results[-1]["first_index"]), flush=True)
                shutil.rmtree(work)
                write_json(options.out, {"runs": results, "machine": machine(), "commit": git("rev-parse", "HEAD")})
    finally:
        if postgres:
            postgres.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
