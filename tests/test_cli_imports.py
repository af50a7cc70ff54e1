"""graphrag-index imports what a pass needs and no more (docs: bench/README.md, "Fixed
costs"): the LLM client's HTTP library only with a model configured, LanceDB never (the
mirror process, storage/lance_mirror.py, writes the mirror), the job definitions only to
launch runs. Each pass runs in a subprocess, which reports the modules it ended with."""

import json
import os
import subprocess
import sys

from graphrag_assets.storage.vector_store import VectorStore

from .conftest import REPO

HEAVY = ("httpx2", "lancedb", "graphrag_assets.defs.build")
REPORT = (
    "import json, sys; from graphrag_evaluation.cli import main; code = main(); "
    f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules])); sys.exit(code)"
)


def _imported(input_dir, dagster_home, tmp_path) -> tuple[set[str], str]:
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "DAGSTER_HOME": str(dagster_home),
        "GRAPHRAG_DB": str(tmp_path / "out" / "index.duckdb"),
        "GRAPHRAG_VECTORS": str(tmp_path / "out" / "lancedb"),
    }
    result = subprocess.run(
        [sys.executable, "-c", REPORT, "--input", str(input_dir)],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return set(json.loads(result.stdout.strip().splitlines()[-1])), result.stdout


def test_an_offline_pass_never_imports_the_llm_client_and_a_no_change_pass_imports_no_mirror(
    input_dir, dagster_home, tmp_path
):
    first, _ = _imported(input_dir, dagster_home, tmp_path)
    assert first == {"graphrag_assets.defs.build"}  # runs launched
    assert VectorStore(tmp_path / "out" / "lancedb").table_versions()  # the mirror was written, by its process

    again, out = _imported(input_dir, dagster_home, tmp_path)
    assert "no work: index is up to date" in out
    assert again == set()
