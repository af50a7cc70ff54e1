"""Benchmark: index a corpus offline with ``graphrag-index`` from scratch, then re-run with
nothing changed. Records wall time, CPU, peak memory, rows per table and where the time
went (per Dagster step), on the default backend (``bench/common.index_corpus``).

    .venv/bin/python bench/index_podcasts.py                       # ../shared/corpus/podcasts
    .venv/bin/python bench/index_podcasts.py --input DIR --corpus NAME --out results/x.json
    .venv/bin/python bench/index_podcasts.py --keep /tmp/podcasts-index   # keep it for query_podcasts.py
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from common import REPO, git, index_corpus, machine, write_json  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", type=Path, default=REPO.parent / "shared" / "corpus" / "podcasts")
    parser.add_argument("--corpus", default="podcasts")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "index_podcasts.json"))
    parser.add_argument("--keep", help="build the index in this folder and keep it (e.g. for query_podcasts.py)")
    options = parser.parse_args()

    work = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="graphrag-bench-"))
    if options.keep:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    result = {
        "input": str(options.input),
        "files": sum(1 for p in options.input.rglob("*") if p.is_file()),
    } | index_corpus(work, options.input, options.corpus, {})
    result |= {"machine": machine(), "commit": git("rev-parse", "HEAD")}
    write_json(options.out, result)
    print(json.dumps(result, indent=2))
    if not options.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
