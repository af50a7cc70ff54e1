"""Benchmark: one document of names alone, offline (fault 23 of docs/reliability.md).

    .venv/bin/python bench/big_document.py                  # 1 MB and 4.6 MB, this checkout
    .venv/bin/python bench/big_document.py --sizes 1000000 --source /tmp/old --timeout 1200

Writes a text file of capitalised made-up words separated by commas (the generator of
``tests/test_document_limit.py``, seed 7) into a temporary input folder, and indexes it with
``graphrag-index`` as a user runs it, a subprocess with a fresh DAGSTER_HOME, under
``/usr/bin/time -v``: wall time, peak RSS, exit status, the counts line and the "left out of
the graph" line. ``--source`` runs another checkout's code (``git archive REV | tar -x -C
DIR``, put first on PYTHONPATH) with this checkout's virtualenv: the figures before a change.
Writes bench/results/big_document.json.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from common import git, machine, write_json  # noqa: E402

from tests.test_document_limit import name_list  # noqa: E402


def measure(size: int, source: str | None, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "input" / "default").mkdir(parents=True)
        (work / "input" / "default" / "names.txt").write_text(name_list(size), encoding="utf-8")
        (work / "home").mkdir()
        shutil.copy(REPO / "dagster_home" / "dagster.yaml", work / "home")
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAG_", "OPENAI_"))}
        environment |= {"DAGSTER_HOME": str(work / "home")} | ({"PYTHONPATH": source} if source else {})
        command = ["/usr/bin/time", "-v", str(REPO / ".venv" / "bin" / "graphrag-index")]
        command += ["--input", str(work / "input"), "--db", str(work / "index.duckdb"), "--vectors", str(work / "v")]
        try:
            done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"characters": size, "exit": f"not done after {timeout:.0f} s (killed)"}
    err = done.stderr
    return {
        "characters": size,
        "exit": done.returncode,
        "wall": re.search(r"Elapsed \(wall clock\) time.*: (\S+)", err)[1],
        "peak_rss_mib": round(int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)[1]) / 1024),
        "rows": next((line for line in done.stdout.splitlines() if line.startswith("corpus default: documents")), ""),
        "left_out": [line for line in err.splitlines() if line.startswith("left out of the graph")],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 4_600_000])
    parser.add_argument("--source", help="another checkout's code, first on PYTHONPATH")
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    runs = [measure(size, args.source, args.timeout) for size in args.sizes]
    for run in runs:
        print(run)
    write_json(
        REPO / "bench" / "results" / "big_document.json",
        {"git": git("rev-parse", "HEAD"), "machine": machine(), "source": args.source, "runs": runs},
    )


if __name__ == "__main__":
    main()
