"""A cold ``graphrag-query``: offline it loads none of what only indexing or an LLM needs,
and it ends its process without Python's teardown, its output and exit status intact; with
an LLM it exits as Python does. The time itself is measured by bench/cold_query.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphrag_assets.storage.snapshot import query_calls_path

from .conftest import REPO

QUESTION = "What did Clara Okafor do for the Verrin River?"
# Packages a cold offline query must not import: the indexer's (Dagster, graph algorithms,
# the Chinese segmenter), the LanceDB mirror (the vectors are read from DuckDB), the LLM
# clients and their models, and the embedders of other models.
NOT_OFFLINE = [
    "dagster",
    "lancedb",
    "httpx2",
    "pydantic",
    "networkx",
    "scipy",
    "jieba",
    "rapidfuzz",
    "torch",
    "sentence_transformers",
]
# graphrag-query as its console script runs it (``main()`` on the command line), plus an
# exit handler that reports the top-level packages imported, and an object whose finalizer
# says whether Python's teardown ran.
PROBE = """
import atexit, json, sys
class Teardown:
    def __del__(self):
        sys.stderr.write("teardown ran\\n")
kept = Teardown()
def report():
    sys.stderr.write("imported " + json.dumps(sorted({m.split(".")[0] for m in sys.modules})) + "\\n")
atexit.register(report)
from graphrag_query.cli import main
sys.argv[0] = "graphrag-query"
sys.exit(main())
"""


def _graphrag_query(*args: str, llm: bool = False) -> tuple[subprocess.CompletedProcess, set[str]]:
    environment = dict(os.environ)
    if not llm:
        environment = {k: v for k, v in environment.items() if not k.startswith(("GRAPHRAG_", "OPENAI_"))}
    run = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=REPO, env=environment, timeout=120
    )
    reported = [line for line in run.stderr.splitlines() if line.startswith("imported ")]
    assert len(reported) == 1, run.stderr  # the exit handlers ran, once
    return run, set(json.loads(reported[0].removeprefix("imported ")))


@pytest.mark.parametrize("method", ["auto", "local", "global", "drift", "basic"])
def test_offline_query_imports_no_indexing_or_llm_package_and_skips_the_teardown(sample_index, method):
    run, imported = _graphrag_query("--db", sample_index.db, "--method", method, QUESTION)
    assert run.returncode == 0, run.stderr
    assert not imported & set(NOT_OFFLINE)
    # All of the output arrives (stdout is a pipe here, so it was buffered until flushed).
    assert run.stdout.rstrip().endswith("s)") and "(0 LLM calls, " in run.stdout.splitlines()[-1]
    assert "teardown ran" not in run.stderr


def test_offline_query_json_and_errors_keep_their_output_and_exit_status(sample_index):
    run, _ = _graphrag_query("--db", sample_index.db, "--json", QUESTION)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["usage"]["llm_calls"] == 0
    missing, _ = _graphrag_query("--db", str(Path(sample_index.db).with_name("absent.duckdb")), QUESTION)
    assert missing.returncode == 2 and "absent.duckdb" in missing.stderr and "teardown ran" not in missing.stderr


def test_with_an_llm_the_query_exits_as_python_does_and_its_calls_are_recorded(sample_index, fake_llm):
    log = query_calls_path(sample_index.db)
    before = log.read_bytes().count(b"\n") if log.exists() else 0
    run, imported = _graphrag_query("--db", sample_index.db, "--method", "local", QUESTION, llm=True)
    assert run.returncode == 0, run.stderr
    assert "Scripted answer." in run.stdout and "(1 LLM calls, " in run.stdout
    assert "httpx2" in imported
    # Its threads (the event loop of the calls) are waited for by Python's own exit.
    assert "teardown ran" in run.stderr
    assert log.read_bytes().count(b"\n") == before + 1
