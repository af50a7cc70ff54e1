"""The steps' DuckDB connection comes from dagster-duckdb's DuckDBResource, configured once
with the index's path, and is closed when a step ends, also when it fails."""

import subprocess
import sys

import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from graphrag_assets.defs.resources import IndexDatabase
from graphrag_assets.settings import IndexSettings
from graphrag_evaluation.build import build_definitions


def test_the_definitions_open_the_index_through_a_duckdb_resource_on_its_path(tmp_path):
    settings = IndexSettings(db=str(tmp_path / "index.duckdb"), vectors=str(tmp_path / "lancedb"))
    resources = build_definitions(settings).resources
    database = resources["database"]
    assert isinstance(database, DuckDBResource)
    assert database.database == settings.db


def test_a_failing_step_leaves_the_file_free_and_its_writes_rolled_back(tmp_path):
    path = tmp_path / "index.duckdb"
    database = IndexDatabase(database=str(path))
    with database.store() as store:
        store.ensure_schema()
    with pytest.raises(RuntimeError, match="step failed"), database.store() as store:
        with store.transaction() as transaction:
            transaction.execute("CREATE TABLE half_done (x INTEGER)")
            raise RuntimeError("step failed")
    held = store.open_connection
    with pytest.raises(duckdb.ConnectionException):
        held.execute("SELECT 1")  # closed by the resource, not left to the garbage collector
    # Another process may open the file for writing at once (DuckDB admits one writer process).
    script = (
        "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
        'print(c.execute("SELECT count(*) FROM information_schema.tables '
        "WHERE table_name = 'half_done'\").fetchone()[0])"
    )
    result = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"
