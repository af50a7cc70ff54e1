"""``graphrag-sql`` as a user runs it: SQL over the published snapshot, never the live file."""

import subprocess
import sys

import duckdb

from graphrag_assets.storage.snapshot import read_pointer

from .conftest import REPO


def _sql(*args: str, stdin: str | None = None, database: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "graphrag_query.sql", "--db", database, *args]
    return subprocess.run(command, cwd=REPO, input=stdin, capture_output=True, text=True, timeout=60)


def test_sql_runs_on_the_published_snapshot_while_the_live_file_is_held_for_writing(sample_index):
    database = sample_index.db
    snapshot = read_pointer(database)["snapshot"]
    # An indexer holding the live file: the snapshot stays readable.
    with duckdb.connect(database):
        result = _sql("SELECT count(*) AS entity_count FROM entities; SELECT 'second' AS statement", database=database)
        path = _sql("--path", database=database)
        piped = _sql(stdin="SELECT title FROM entities ORDER BY degree DESC LIMIT 1;", database=database)
    assert result.returncode == 0, result.stderr
    with duckdb.connect(snapshot, read_only=True) as connection:
        entities = connection.execute("SELECT count(*) FROM entities").fetchone()[0]
        top = connection.execute("SELECT title FROM entities ORDER BY degree DESC LIMIT 1").fetchone()[0]
    assert "entity_count" in result.stdout and str(entities) in result.stdout and "second" in result.stdout
    assert path.stdout.strip() == snapshot
    assert piped.returncode == 0 and top in piped.stdout


def test_sql_errors_and_a_missing_index_are_named(sample_index, tmp_path):
    wrong = _sql("SELECT * FROM no_such_table", database=sample_index.db)
    assert wrong.returncode == 1 and "no_such_table" in wrong.stderr
    missing = _sql("SELECT 1", database=str(tmp_path / "nothing.duckdb"))
    assert missing.returncode == 2 and "run graphrag-index first" in missing.stderr


def test_a_semicolon_inside_a_string_stays_in_the_statement(sample_index):
    result = _sql("SELECT 'a;b' AS quoted; SELECT count(*) AS entity_count FROM entities", database=sample_index.db)
    assert result.returncode == 0, result.stderr
    assert "a;b" in result.stdout and "entity_count" in result.stdout


def test_statements_cannot_write_or_read_other_files_unless_asked(sample_index, tmp_path):
    database = sample_index.db
    written = tmp_path / "entities.csv"
    secret = tmp_path / "secret.csv"
    secret.write_text("word\nprivate\n")
    copy = _sql(f"COPY entities TO '{written}'", database=database)
    read = _sql(f"SELECT * FROM read_csv('{secret}')", database=database)
    assert copy.returncode == 1 and "disabled by configuration" in copy.stderr and not written.exists()
    assert read.returncode == 1 and "private" not in read.stdout
    # The index itself stays readable, and a user who asks gets files back.
    assert _sql("SELECT count(*) FROM entities", database=database).returncode == 0
    allowed = _sql("--allow-file-access", f"COPY (SELECT title FROM entities) TO '{written}'", database=database)
    assert allowed.returncode == 0, allowed.stderr
    assert written.read_text().startswith("title")
