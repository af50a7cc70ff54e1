"""Benchmark: the fixed cost of a query, in fresh processes, on the sample index.

    .venv/bin/python bench/cold_query.py                  # builds the sample index first (~30 s)
    .venv/bin/python bench/cold_query.py --db /tmp/sample/graphrag.duckdb --repeats 9

Without ``--db`` the sample corpus (``sample_corpus/``, what ``scripts/quickstart`` indexes)
is indexed offline with default settings into a temporary folder with a fresh
DAGSTER_HOME. Then, each in a new process and ``--repeats`` times (medians reported):

- ``python -c "import graphrag_query"``, and ``python -c pass`` for the interpreter's own start;
- ``graphrag-query --method M "question"`` for each mode, offline: the wall time a user waits;
- in one process per mode: the import, opening the reader, the first query and a second
  query (another question), each timed apart: what a service pays once, and per query after.

Every process runs offline (no GRAPHRAG_* or OPENAI_* variable of the caller reaches it), with
the package's byte code compiled first (as an install leaves it). One
``python -X importtime`` run of the import and of a local query says which packages the
import time goes to (self time summed per top-level package).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from common import git, machine, write_json  # noqa: E402

MODES = ("local", "global", "drift", "basic")
QUESTION = "What did Clara Okafor do for the Verrin River?"
SECOND_QUESTION = "How is Port Calder connected to Xiamen?"
# Run in a fresh process per mode: argv = database, mode, first question, second question.
IN_PROCESS_PROBE = """
import json, sys, time
marks = [(time.perf_counter(), time.process_time())]
import graphrag_query
marks.append((time.perf_counter(), time.process_time()))
reader = graphrag_query.IndexReader(sys.argv[1])
marks.append((time.perf_counter(), time.process_time()))
graphrag_query.search(sys.argv[3], method=sys.argv[2], reader=reader)
marks.append((time.perf_counter(), time.process_time()))
graphrag_query.search(sys.argv[4], method=sys.argv[2], reader=reader)
marks.append((time.perf_counter(), time.process_time()))
parts = ["import", "open", "first_query", "second_query"]
spans = {
    kind: {part: marks[i + 1][k] - marks[i][k] for i, part in enumerate(parts)}
    for k, kind in enumerate(["wall", "cpu"])
}
print(json.dumps(spans))
"""


def _offline_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAG_", "OPENAI_"))}


def _build_sample_index(work: Path) -> Path:
    """Index ``sample_corpus/`` offline, default settings, into ``work``; the database path."""
    home = work / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    database = work / "graphrag.duckdb"
    command = [
        sys.executable,
        "-m",
        "graphrag_evaluation.cli",
        "--input",
        str(REPO / "sample_corpus"),
        "--db",
        str(database),
        "--vectors",
        str(work / "lancedb"),
    ]
    print(f"indexing sample_corpus into {work} ...", flush=True)
    result = subprocess.run(
        command, env=_offline_environment() | {"DAGSTER_HOME": str(home)}, cwd=REPO, capture_output=True, text=True
    )
    if result.returncode != 0:
        raise SystemExit(
            f"graphrag-index failed ({result.returncode}):\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
        )
    return database


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of a command. CPU time (user + system) is what the process
    itself costs: on a shared machine the wall time also holds the waits for a core."""
    started, cpu_before = time.perf_counter(), _cpu_of_children()
    subprocess.run(command, env=_offline_environment(), cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started, _cpu_of_children() - cpu_before


def _summary(samples: list[float]) -> dict:
    return {
        "median_s": round(statistics.median(samples), 3),
        "min_s": round(min(samples), 3),
        "samples_s": [round(s, 3) for s in samples],
    }


def _import_time_by_package(command: list[str], top: int = 12) -> dict[str, float]:
    """Seconds of import per top-level package (self times summed), the largest first."""
    stderr = subprocess.run(
        command, env=_offline_environment(), cwd=REPO, check=True, capture_output=True, text=True
    ).stderr
    seconds: Counter[str] = Counter()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "self [us]" not in line:
            own, _, module = line.removeprefix("import time:").split("|")
            seconds[module.strip().split(".")[0]] += int(own) / 1e6
    return {package: round(value, 3) for package, value in seconds.most_common(top)}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", help="an existing index of the sample corpus; without it the index is built first")
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per measurement (default 5)")
    parser.add_argument(
        "--out",
        default=str(REPO / "bench" / "results" / "cold_query.json"),
        help="JSON output (default: bench/results/cold_query.json)",
    )
    return parser.parse_args()


def measured_rounds(database: Path, repeats: int) -> tuple[dict, dict, dict]:
    """Each command's wall and CPU seconds in fresh processes, and each mode's in-process
    parts: (walls, cpus, in_process)."""
    python = sys.executable
    cli = str(Path(python).parent / "graphrag-query")
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "import graphrag_query": [python, "-c", "import graphrag_query"],
    } | {f"graphrag-query --method {mode}": [cli, "--db", str(database), "--method", mode, QUESTION] for mode in MODES}
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    in_process: dict[str, list[dict]] = {mode: [] for mode in MODES}
    # Rounds rather than one measurement after another: load that comes and goes spreads
    # over every measurement instead of skewing one.
    for round_number in range(1, repeats + 1):
        print(f"round {round_number}/{repeats}", flush=True)
        for name, command in commands.items():
            wall, cpu = _run(command)
            walls[name].append(wall)
            cpus[name].append(cpu)
        for mode in MODES:
            probe = subprocess.run(
                [python, "-c", IN_PROCESS_PROBE, str(database), mode, QUESTION, SECOND_QUESTION],
                env=_offline_environment(),
                cwd=REPO,
                check=True,
                capture_output=True,
                text=True,
            )
            in_process[mode].append(json.loads(probe.stdout))
    return walls, cpus, in_process


def print_medians(result: dict) -> None:
    for name, figures in result["wall"].items():
        print(f"{name:40} wall {figures['median_s']:.3f} s, CPU {result['cpu'][name]['median_s']:.3f} s")
    for mode, kinds in result["in_process"].items():
        for kind, parts in kinds.items():
            print(
                f"in process, {mode:6} {kind:4} "
                + "  ".join(f"{part} {figures['median_s']:.3f} s" for part, figures in parts.items())
            )


def main() -> None:
    options = arguments()
    load_start = os.getloadavg()
    work = None
    if options.db:
        database = Path(options.db)
    else:
        work = Path(tempfile.mkdtemp(prefix="graphrag-cold-query-"))
        database = _build_sample_index(work)
    # Byte code as an installed package has it: under PYTHONDONTWRITEBYTECODE, or after an
    # edit, every process would compile the edited modules from source again (up to ~50 ms).
    for package in ("graphrag_common", "graphrag_assets", "graphrag_query"):
        compileall.compile_dir(REPO / package, quiet=1)

    walls, cpus, in_process = measured_rounds(database, options.repeats)
    python = sys.executable
    cli = str(Path(python).parent / "graphrag-query")
    result = {
        "command": shlex.join([Path(python).name, *sys.argv]),
        "date": time.strftime("%Y-%m-%d"),
        "commit": git("rev-parse", "--short", "HEAD"),
        "machine": machine(),
        "load_average_1_5_15_min": {
            "start": [round(x, 2) for x in load_start],
            "end": [round(x, 2) for x in os.getloadavg()],
        },
        "database": str(database) if options.db else "sample_corpus, built offline into a temporary folder",
        "questions": [QUESTION, SECOND_QUESTION],
        "repeats": options.repeats,
        "wall": {name: _summary(samples) for name, samples in walls.items()},
        "cpu": {name: _summary(samples) for name, samples in cpus.items()},
        "in_process": {
            mode: {
                kind: {part: _summary([run[kind][part] for run in runs]) for part in runs[0][kind]}
                for kind in ("wall", "cpu")
            }
            for mode, runs in in_process.items()
        },
        "import_seconds_by_package": {
            "import graphrag_query": _import_time_by_package(
                [python, "-X", "importtime", "-c", "import graphrag_query"]
            ),
            "graphrag-query --method local": _import_time_by_package(
                [python, "-X", "importtime", cli, "--db", str(database), "--method", "local", QUESTION]
            ),
        },
    }
    if work is not None:
        shutil.rmtree(work, ignore_errors=True)
    write_json(options.out, result)
    print(f"wrote {options.out}")
    print_medians(result)


if __name__ == "__main__":
    main()
