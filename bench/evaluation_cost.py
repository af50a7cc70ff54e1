"""Benchmark: what evaluating every build costs, offline.

    .venv/bin/python bench/evaluation_cost.py        # A Christmas Carol and its 27 questions
    .venv/bin/python bench/evaluation_cost.py --input ../shared/corpus/2wiki-101 --corpus 2wiki \\
        --questions ../shared/corpus/2wiki-101/questions.jsonl --env GRAPHRAG_TEXT_COLUMN=text --label 2wiki

Indexes the corpus from scratch with ``graphrag-index`` (fresh DAGSTER_HOME, default
settings, no GRAPHRAG_* variable of the caller but ``--env``) with ``GRAPHRAG_EVAL_QUESTIONS``
naming the questions file, and records the build's steps, the ``evaluations`` step among
them; then runs ``graphrag-eval`` on the published corpus. Writes
``bench/results/evaluation_cost[_<label>].json``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

from common import index_corpus, machine, run_measured, write_json  # noqa: E402
from retrieval import git_state  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "corpus"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", default=str(SHARED / "christmas_carol"), help="folder indexed as one corpus")
    parser.add_argument("--corpus", default="christmas_carol")
    parser.add_argument("--questions", default=str(SHARED / "christmas_carol-questions.jsonl"))
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="an index setting")
    parser.add_argument("--label", help="results/evaluation_cost_<label>.json")
    options = parser.parse_args()
    settings = dict(pair.split("=", 1) for pair in options.env)
    questions = str(Path(options.questions).resolve())
    settings["GRAPHRAG_EVAL_QUESTIONS"] = f"{options.corpus}={questions}"
    work = Path(tempfile.mkdtemp(prefix="graphrag-evaluation-cost-"))
    index = index_corpus(work, Path(options.input).resolve(), options.corpus, settings, rerun=False)
    (graph_run,) = [run for name, run in index["runs"].items() if name.startswith("build_graph")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHRAG_")} | settings
    env["GRAPHRAG_DB"] = str(work / "index.duckdb")
    command = [sys.executable, "-c", "import sys; from graphrag_query.eval_cli import main; sys.exit(main())"]
    evaluation = run_measured([*command, "--corpus", options.corpus], env)
    result = {
        "command": shlex.join([".venv/bin/python", "bench/evaluation_cost.py", *sys.argv[1:]]),
        "machine": machine(),
        "load_average_1_5_15_min": [round(x, 2) for x in os.getloadavg()],
        "code": git_state(),
        "questions": questions,
        "index": index["first_index"],
        "graph_run_seconds": graph_run["seconds"],
        "evaluations_step_seconds": graph_run["steps"]["evaluations"]["seconds"],
        "graphrag_eval": evaluation | {"table": evaluation.pop("stdout").strip().splitlines()},
    }
    name = f"evaluation_cost_{options.label}.json" if options.label else "evaluation_cost.json"
    write_json(REPO / "bench" / "results" / name, result)
    print(
        f"graph run {result['graph_run_seconds']} s, of which evaluations {result['evaluations_step_seconds']} s; "
        f"graphrag-eval {evaluation['wall_seconds']} s wall, {evaluation['cpu_seconds']} s CPU"
    )
    print("\n".join(result["graphrag_eval"]["table"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
