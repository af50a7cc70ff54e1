"""Odd inputs and faults a run must survive without losing what is indexed: a file name
that is not UTF-8, a file deeper than PATH_MAX, a CSV cell over 128 KB. ``graphrag-index``
runs as a user runs it (a subprocess with a real Dagster instance and DuckDB file); each
odd file is made by the test."""

from __future__ import annotations

import os
import shutil

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
