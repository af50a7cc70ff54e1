"""Deletion is explicit: a pass deletes only files gone from a corpus folder of its own
input; removing a corpus, or making the index equal a folder, is asked for by name and
confirmed; every deletion can be undone from the snapshot published before it. On a real
Dagster instance and DuckDB file, through the same code as ``graphrag-index``."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from graphrag_assets.indexing import DeletionNotConfirmed, restore, run_index
from graphrag_assets.storage.snapshot import read_pointer, restore_points
from graphrag_evaluation.build import build_definitions
from graphrag_evaluation.cli import main as graphrag_index

from .daemon import Daemon

TABLES = ["documents", "sources", "text_units", "entities", "relationships", "communities", "community_reports"]

HARBOR = {
    "pier.txt": "Ines Valcourt repaired the Gullwing Pier lights with Mara Ellison in Port Calder.\n",
    "lighthouse.txt": "Orla Brennick kept the Beacon Point lighthouse log for Clara Okafor of Port Calder.\n",
    "ferry.txt": "Tobias Renn ran the Port Calder ferry with Mara Ellison and Orla Brennick.\n",
}
RECIPES = {
    "soup.txt": "Chef Amara Quist cooked fennel soup at the Larkspur Inn with Hugo Brandt.\n",
    "bread.txt": "Hugo Brandt baked rye bread for the Larkspur Inn, as Amara Quist taught him.\n",
    "tart.txt": "Amara Quist served a plum tart to Mayor Helen Strand at the Larkspur Inn.\n",
}


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def corpus_rows(connection: duckdb.DuckDBPyConnection, corpus: str) -> dict[str, pl.DataFrame]:
    """Every table's rows of a corpus, sorted, without the time a row was written."""
    return {
        table: connection.execute(f'SELECT * FROM "{table}" WHERE corpus = ?', [corpus])
        .pl()
        .drop("indexed_at", strict=False)
        .sort(pl.all())
        for table in TABLES
    }


def rows(location, corpus: str) -> dict[str, pl.DataFrame]:
    with location.connect(read_only=True) as connection:
        return corpus_rows(connection, corpus)


def published_rows(settings, corpus: str) -> dict[str, pl.DataFrame]:
    with duckdb.connect(read_pointer(settings.location())["snapshot"], read_only=True) as connection:
        return corpus_rows(connection, corpus)


def assert_equal(mine: dict[str, pl.DataFrame], theirs: dict[str, pl.DataFrame]) -> None:
    for table in TABLES:
        assert mine[table].columns == theirs[table].columns, table
        for column in mine[table].columns:  # column by column, to name the one that differs
            assert mine[table][column].equals(theirs[table][column]), f"{table}.{column} differs"


@pytest.fixture
def two_corpora(tmp_path, settings_for, instance):
    """An input folder with corpora harbor and recipes, indexed."""
    input_dir = tmp_path / "input"
    write(input_dir / "harbor", HARBOR)
    write(input_dir / "recipes", RECIPES)
    settings = settings_for(input_dir)
    report = run_index(settings, instance, lambda: build_definitions(settings), log=lambda message: None)
    assert not report.failed_runs and set(report.corpora_built) == {"harbor", "recipes"}
    return settings


def test_indexing_another_folder_keeps_every_corpus_it_does_not_hold(two_corpora, tmp_path, settings_for, instance):
    before = {corpus: rows(two_corpora.location(), corpus) for corpus in ("harbor", "recipes")}
    published_before = published_rows(two_corpora, "recipes")

    # The README's "your own documents": one loose file in another folder, corpus default.
    mydocs = write(tmp_path / "mydocs", {"notes.txt": "Mara Ellison met Hugo Brandt at Gullwing Pier.\n"})
    other = settings_for(mydocs)
    lines = []
    report = run_index(other, instance, lambda: build_definitions(other), log=lines.append)
    assert report.plan.deleted == [] and report.corpora_built == ["default"]
    assert "corpus harbor: not in this input, kept" in lines and "corpus recipes: not in this input, kept" in lines
    for corpus in ("harbor", "recipes"):
        assert_equal(rows(other.location(), corpus), before[corpus])
    assert_equal(published_rows(other, "recipes"), published_before)

    # The same corpus name in two folders: each folder's pass deletes only its own files.
    write(tmp_path / "second" / "harbor", {"storm.txt": "Clara Okafor closed Gullwing Pier before the storm.\n"})
    second = settings_for(tmp_path / "second")
    lines.clear()
    report = run_index(second, instance, lambda: build_definitions(second), log=lines.append)
    assert report.plan.deleted == []
    assert report.plan.kept == ["default/notes.txt", *sorted(f"harbor/{name}" for name in HARBOR)]
    assert f"corpus default: 1 source(s) read from {mydocs}, not in this input, kept (--prune removes them)" in lines
    assert any(line.startswith("corpus harbor: 3 source(s) read from ") for line in lines), lines
    assert_equal(rows(second.location(), "recipes"), before["recipes"])
    documents = rows(second.location(), "harbor")["documents"]
    assert sorted(documents["source_partition"]) == sorted(f"harbor/{n}" for n in [*HARBOR, "storm.txt"])
    kept = documents.filter(pl.col("source_partition") != "harbor/storm.txt")
    assert kept.equals(before["harbor"]["documents"])

    # A file gone from the input's own folder is deleted as before.
    (tmp_path / "second" / "harbor" / "storm.txt").unlink()
    report = run_index(second, instance, lambda: build_definitions(second), log=lambda message: None)
    assert report.plan.deleted == ["harbor/storm.txt"]
    assert sorted(rows(second.location(), "harbor")["documents"]["source_partition"]) == sorted(
        f"harbor/{name}" for name in HARBOR
    )


def test_prune_deletes_what_the_input_does_not_hold_only_once_confirmed(two_corpora, tmp_path, settings_for, instance):
    mydocs = write(tmp_path / "mydocs" / "harbor", {"pier.txt": HARBOR["pier.txt"]})
    other = settings_for(mydocs.parent)
    before = {corpus: rows(other.location(), corpus) for corpus in ("harbor", "recipes")}
    asked = []

    def no(deletion):
        asked.append(deletion)
        return False

    with pytest.raises(DeletionNotConfirmed, match="corpus recipes: 3 source"):
        run_index(other, instance, lambda: build_definitions(other), log=lambda m: None, prune=True, confirm=no)
    assert asked[0].sources == ["harbor/ferry.txt", "harbor/lighthouse.txt", *(f"recipes/{n}" for n in sorted(RECIPES))]
    for corpus in ("harbor", "recipes"):  # refused: nothing changed
        assert_equal(rows(other.location(), corpus), before[corpus])

    report = run_index(
        other, instance, lambda: build_definitions(other), log=lambda m: None, prune=True, confirm=lambda d: True
    )
    assert sorted(report.plan.deleted) == asked[0].sources and not report.failed_runs
    assert rows(other.location(), "harbor")["documents"]["source_partition"].to_list() == ["harbor/pier.txt"]
    assert rows(other.location(), "recipes")["documents"].is_empty()
    assert published_rows(other, "recipes")["entities"].is_empty()

    # The snapshot published before the prune brings everything back.
    assert restore_points(other.location())[-1]["sources"] == asked[0].sources
    report = restore(other, instance, lambda: build_definitions(other), log=lambda message: None)
    assert report.restored == asked[0].sources and not report.failed_runs
    for corpus in ("harbor", "recipes"):
        assert rows(other.location(), corpus)["documents"].equals(before[corpus]["documents"])
        assert published_rows(other, corpus)["documents"].equals(before[corpus]["documents"])
    titles = rows(other.location(), "recipes")["entities"]["title"].sort()
    assert titles.equals(before["recipes"]["entities"]["title"].sort())
    assert restore_points(other.location()) == []
    # Restored sources have no file: the next pass keeps them.
    report = run_index(other, instance, lambda: build_definitions(other), log=lambda message: None)
    assert report.plan.deleted == [] and "harbor/ferry.txt" in report.plan.kept


def test_remove_corpus_deletes_exactly_that_corpus_after_the_confirmation(two_corpora, instance, capsys):
    before = rows(two_corpora.location(), "harbor")
    arguments = ["--input", two_corpora.input_dir, "--db", two_corpora.db, "--vectors", two_corpora.vectors]

    # A script cannot answer: without --yes nothing is removed.
    assert graphrag_index([*arguments, "--remove-corpus", "recipes"]) == 3
    assert "corpus recipes: 3 source(s), 3 of 3 document(s)" in capsys.readouterr().err
    assert len(rows(two_corpora.location(), "recipes")["documents"]) == 3

    assert graphrag_index([*arguments, "--remove-corpus", "cookbook"]) == 2
    assert "no corpus 'cookbook' (corpora: harbor, recipes)" in capsys.readouterr().err

    assert graphrag_index([*arguments, "--remove-corpus", "recipes", "--yes"]) == 0
    for table, frame in rows(two_corpora.location(), "recipes").items():
        assert frame.is_empty(), table
    assert published_rows(two_corpora, "recipes")["documents"].is_empty()
    assert_equal(rows(two_corpora.location(), "harbor"), before)
    assert instance.get_dynamic_partitions("corpora") == ["harbor"]
    assert not any(key.startswith("recipes/") for key in instance.get_dynamic_partitions("sources"))

    # Its folder is still in the input, but nothing in it changed: the next pass reads it again.
    assert graphrag_index(arguments) == 0
    assert len(rows(two_corpora.location(), "recipes")["documents"]) == 3


def test_the_sensor_never_deletes_a_corpus_whose_folder_vanished(tmp_path, settings_for, instance, monkeypatch, caplog):
    input_dir = tmp_path / "input"
    write(input_dir / "harbor", HARBOR)
    write(input_dir / "recipes", RECIPES)
    settings = settings_for(input_dir)
    for variable, value in settings.environment().items():  # where the sensor reads its settings
        monkeypatch.setenv(variable, value)
    daemon = Daemon(instance, settings)
    daemon.tick()
    indexed = rows(settings.location(), "recipes")

    for name in RECIPES:  # the folder goes (unmounted, moved away)
        (input_dir / "recipes" / name).unlink()
    (input_dir / "recipes").rmdir()
    daemon.runs.clear()
    daemon.tick()
    assert daemon.runs == []
    assert "corpus recipes: its folder is gone from the input; its sources are kept" in daemon.skip_reason
    assert {f"recipes/{name}" for name in RECIPES} <= set(instance.get_dynamic_partitions("sources"))
    assert_equal(rows(settings.location(), "recipes"), indexed)

    # Most of a corpus gone at once is held too; one file is deleted.
    (input_dir / "harbor" / "ferry.txt").unlink()
    (input_dir / "harbor" / "pier.txt").unlink()
    daemon.tick()
    assert "corpus harbor: 2 of 3 file(s) gone" in daemon.skip_reason and daemon.runs == []
    write(input_dir / "harbor", {"pier.txt": HARBOR["pier.txt"]})
    daemon.tick()
    assert ("build_graph", "harbor") in daemon.runs
    assert sorted(rows(settings.location(), "harbor")["documents"]["source_partition"]) == [
        "harbor/lighthouse.txt",
        "harbor/pier.txt",
    ]
