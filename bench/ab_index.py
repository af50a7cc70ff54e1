"""Benchmark: graphrag-index from two checkouts of this repository, alternated command by
command, on A Christmas Carol against the shared fake endpoint (instant) and offline, and on
the sample corpus offline: what a change of the code does to the whole command.

    git worktree add /tmp/before <commit>
    .venv/bin/python bench/ab_index.py /tmp/before . --repeat 4     # writes results/ab_index.json

Each checkout runs with this interpreter and its own code first on PYTHONPATH (byte code
compiled first, as an install leaves it), a fresh DuckDB file, LanceDB folder and Dagster
home each time. Wall and CPU time (the command and every process it waited for, from
``os.wait4``) are medians over the rounds; the start-up before the first request is from
the endpoint's call log (vs_graphrag.py measures the same way).
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import sys
import tempfile
from datetime import date
from pathlib import Path

import vs_graphrag as vs
from common import git, machine, write_json

RESULTS = vs.REPO / "bench" / "results" / "ab_index.json"
SCENARIOS = {
    "christmas_carol_llm_instant": (vs.BOOK.parent, True),
    "christmas_carol_offline": (vs.BOOK.parent, False),
    "sample_corpus_offline": (vs.REPO / "sample_corpus", False),
}
COMMAND = "import sys; sys.argv[0] = 'graphrag-index'; from graphrag_evaluation.cli import main; sys.exit(main())"


def run(tree: Path, source: Path, llm: bool, server: vs.MockServer, folder: Path) -> dict:
    home = folder / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(tree / "dagster_home" / "dagster.yaml", home)
    env = vs.clean_env() | {"PYTHONPATH": str(tree), "DAGSTER_HOME": str(home)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if llm:
        env |= vs.our_endpoint_settings(server)
    offset = server.reset()
    command = [sys.executable, "-c", COMMAND, "--input", str(source), "--corpus", "ab"]
    command += ["--db", str(folder / "index.duckdb"), "--vectors", str(folder / "lancedb")]
    figures = vs.measured(command, env, tree, folder)
    if llm:
        figures |= vs.llm_figures(server.stats(), server.calls_since(offset), figures)
    return {key: figures[key] for key in ("wall_s", "cpu_s", "first_request_after_s") if key in figures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="checkout of the code before the change")
    parser.add_argument("after", type=Path, help="checkout of the code after it")
    parser.add_argument("--repeat", type=int, default=4)
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    for tree in trees.values():
        for package in ("graphrag_assets", "graphrag_common", "graphrag_query"):
            compileall.compile_dir(tree / package, quiet=1)
    work = Path(tempfile.mkdtemp(prefix="ab-index-"))
    server = vs.MockServer(work, "instant")
    runs: dict[str, dict[str, list[dict]]] = {name: {side: [] for side in trees} for name in SCENARIOS}
    try:
        for round_ in range(args.repeat):
            for name, (source, llm) in SCENARIOS.items():
                for side, tree in trees.items():
                    folder = work / f"{name}-{side}-{round_}"
                    runs[name][side].append(run(tree, source, llm, server, folder))
                    shutil.rmtree(folder)
                    print(f"round {round_ + 1} {name} {side}: {runs[name][side][-1]}", file=sys.stderr)
    finally:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)
    summary = {
        name: {
            side: {key: round(statistics.median(r[key] for r in rows), 2) for key in rows[0]}
            for side, rows in sides.items()
        }
        for name, sides in runs.items()
    }
    write_json(
        RESULTS,
        {
            "date": date.today().isoformat(),
            "command": " ".join(["bench/ab_index.py", *sys.argv[1:]]),
            "machine": machine(),
            "commits": {side: git("-C", str(tree), "rev-parse", "--short", "HEAD") for side, tree in trees.items()},
            "medians": summary,
            "runs": runs,
        },
    )
    print("| | before: wall / CPU (s) | after: wall / CPU (s) |\n|---|---|---|")
    for name, sides in summary.items():
        before, after = sides["before"], sides["after"]
        print(f"| {name} | {before['wall_s']} / {before['cpu_s']} | {after['wall_s']} / {after['cpu_s']} |")


if __name__ == "__main__":
    main()
