"""Odd inputs and faults a run must survive without losing what is indexed: a file name
that is not UTF-8, a file deeper than PATH_MAX, a CSV cell over 128 KB, a model that fails
or cuts its answer off under ``graphrag-query``. The commands run as a user runs them
(subprocesses, a real Dagster instance and DuckDB file, the test HTTP server); each odd
file is made by the test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import duckdb

from .conftest import FAKE_LLM_KEY, REPO
from .fake_openai import FakeOpenAI, Fault
from .test_reliability import Indexer

INDEXED = "SELECT count(*) AS n FROM documents"


def _deep_file(folder: str, levels: int = 45) -> str:
    """A text file below ``levels`` folders of 100 bytes each: its path is past PATH_MAX
    (4096), so it is made one folder at a time, relative to the folder above."""
    above = os.open(folder, os.O_RDONLY)
    for level in range(levels):
        name = f"level_{level:02d}_" + "x" * 90
        os.mkdir(name, dir_fd=above)
        below = os.open(name, os.O_RDONLY, dir_fd=above)
        os.close(above)
        above = below
    file = os.open("deep.txt", os.O_WRONLY | os.O_CREAT, dir_fd=above)
    os.write(file, b"Maren Holt kept the deep archive of the Verrin River.\n")
    os.close(file)
    os.close(above)
    return os.path.join(folder, "level_00_" + "x" * 90)


def test_a_file_name_that_is_not_utf8_is_an_error_row_and_the_rest_is_indexed(tmp_path):
    indexer = Indexer(tmp_path)
    assert indexer.run().returncode == 0
    documents = indexer.query(INDEXED)["n"][0]
    bad_name = os.path.join(os.fsencode(indexer.input / "default"), b"bad_\xff.txt")
    with open(bad_name, "wb") as file:
        file.write(b"Maren Holt walked the Verrin River.\n")
    new_file = indexer.input / "default" / "new_notes.txt"
    new_file.write_text("Quillon Barrowmere surveyed the Harbor Institute docks.\n")

    odd = indexer.run()
    assert odd.returncode == 2, odd.stderr[-3000:]
    assert "default/bad_\\xff.txt: file name is not valid UTF-8" in odd.stderr and "Traceback" not in odd.stderr
    errors = indexer.query("SELECT source_partition, error FROM source_errors")
    assert errors["source_partition"].to_list() == ["default/bad_\\xff.txt"]
    assert "rename the file" in errors["error"][0]
    # Nothing indexed is lost, and the other new file of the pass is indexed and published.
    assert indexer.query(INDEXED)["n"][0] == documents + 1
    published = "SELECT count(*) AS n FROM documents WHERE source_path LIKE '%new_notes.txt'"
    assert indexer.query(published, snapshot=True)["n"][0] == 1

    again = indexer.run()
    assert again.returncode == 2 and "file name is not valid UTF-8" in again.stderr
    assert indexer.query(INDEXED)["n"][0] == documents + 1
    os.rename(bad_name, os.fsencode(indexer.input / "default" / "bad_renamed.txt"))
    renamed = indexer.run()
    assert renamed.returncode == 0, renamed.stderr[-3000:]
    assert indexer.query("SELECT count(*) AS n FROM source_errors")["n"][0] == 0
    assert indexer.query(INDEXED, snapshot=True)["n"][0] == documents + 2


def test_a_file_deeper_than_path_max_is_an_error_row_naming_its_folder(tmp_path):
    indexer = Indexer(tmp_path)
    assert indexer.run().returncode == 0
    documents = indexer.query(INDEXED)["n"][0]
    deep = _deep_file(str(indexer.input / "default"))

    odd = indexer.run()
    assert odd.returncode == 2, odd.stderr[-3000:]
    assert "path too long for the system" in odd.stderr and "PATH_MAX" in odd.stderr
    assert "Traceback" not in odd.stderr
    errors = indexer.query("SELECT source_partition, error FROM source_errors")
    assert errors.height == 1
    key = errors["source_partition"][0]
    assert key.startswith("default/level_00_") and "/level_40_" in key and "move it higher up" in errors["error"][0]
    assert indexer.query(INDEXED)["n"][0] == documents

    shutil.rmtree(deep)
    rerun = indexer.run()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert indexer.query("SELECT count(*) AS n FROM source_errors")["n"][0] == 0
    assert indexer.query(INDEXED, snapshot=True)["n"][0] == documents


def test_a_csv_cell_over_128_kb_is_indexed(tmp_path):
    indexer = Indexer(tmp_path)
    assert indexer.run().returncode == 0
    documents = indexer.query(INDEXED)["n"][0]
    sentence = "Maren Holt measured the Verrin River at the Harbor Institute dock number {}. "
    long_text = "".join(sentence.format(n) for n in range(2700))
    assert len(long_text) > 200_000
    (indexer.input / "default" / "long_cell.csv").write_text(f'title,text\nRiver log,"{long_text}"\n')

    run = indexer.run()
    assert run.returncode == 0, run.stderr[-3000:]
    stored = indexer.query("SELECT text FROM documents WHERE title = 'River log'", snapshot=True)
    assert stored["text"].to_list() == [long_text]
    assert indexer.query(INDEXED, snapshot=True)["n"][0] == documents + 1
    assert "no work: index is up to date" in indexer.run().stdout


def _query(database: str, fake: FakeOpenAI, *args: str) -> subprocess.CompletedProcess:
    env = os.environ | {
        "GRAPHRAG_LLM_BASE_URL": fake.base_url,
        "GRAPHRAG_LLM_API_KEY": FAKE_LLM_KEY,
        "GRAPHRAG_LLM_MODEL": "fake-chat",
        "GRAPHRAG_LLM_MAX_RETRIES": "0",
    }
    command = [sys.executable, "-m", "graphrag_query.cli", "What did Clara Okafor do?", "--method", "basic"]
    return subprocess.run(
        [*command, "--db", database, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_failed_model_call_is_one_line_naming_the_cause_and_a_cut_answer_is_marked(sample_index):
    database = sample_index.db
    with duckdb.connect(database, read_only=True) as connection:
        entities = connection.execute("SELECT count(*) FROM entities").fetchone()[0]
    with FakeOpenAI() as fake:
        fake.faults.extend(Fault(status=401) for _ in range(5))
        refused = _query(database, fake)
        fake.faults.clear()
        fake.faults.extend(Fault(status=500) for _ in range(5))
        failed = _query(database, fake, "--no-stream")
        fake.faults.clear()
        fake.cut_streams_after = 2
        cut = _query(database, fake)
        fake.cut_streams_after = 0
        healthy = _query(database, fake)
    for run in (refused, failed, cut):
        assert run.returncode == 1, run.stderr[-2000:]
        assert "Traceback" not in run.stderr
        assert len(run.stderr.strip().splitlines()) == 1 and run.stderr.startswith("graphrag-query: ")
    assert "HTTP 401" in refused.stderr and "GRAPHRAG_LLM_API_KEY" in refused.stderr
    assert FAKE_LLM_KEY not in refused.stderr
    assert "HTTP 500" in failed.stderr and "GRAPHRAG_LLM_BASE_URL" in failed.stderr and "--offline" in failed.stderr
    # The part of the answer shown is followed by a mark saying it is not the whole answer.
    shown, _, mark = cut.stdout.partition("[answer cut off: ")
    assert shown.startswith("Script") and "Scripted answer." not in shown
    assert "stream broke off after 2 piece(s)" in mark
    assert healthy.returncode == 0, healthy.stderr[-2000:]
    assert "Scripted answer." in healthy.stdout and "[answer cut off" not in healthy.stdout
    with duckdb.connect(database, read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM entities").fetchone()[0] == entities
