"""The one write path, on both backends: the DuckDB file and a DuckLake."""

import duckdb
import polars as pl
import pytest

from graphrag_assets.storage.duckdb_store import IndexStore
from graphrag_assets.storage.location import index_location
from graphrag_assets.storage.schema import TABLES

from .conftest import backend_settings


def _documents(partition: str, titles: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": [f"{partition}:{t}" for t in titles],
            "human_readable_id": list(range(len(titles))),
            "title": titles,
            "text": [f"text of {t}" for t in titles],
            "corpus": "c",
            "source_partition": partition,
            "source_path": partition,
            "source_hash": "h",
            "content_hash": "h",
        }
    )


@pytest.fixture(params=["duckdb", "ducklake"])
def store(tmp_path, request):
    database = str(tmp_path / "index.duckdb")
    store = IndexStore(index_location(database, **backend_settings(request.param, database)))
    store.ensure_schema()
    return store


def test_columns_land_by_name_whatever_the_frame_order(store):
    frame = _documents("c/a", ["one", "two"])
    shuffled = frame.select(list(reversed(frame.columns)))
    with store.transaction() as tx:
        tx.replace("documents", shuffled, ["c/a"])
    stored = store.read("SELECT * FROM documents ORDER BY human_readable_id")
    assert stored.columns == list(TABLES["documents"].columns)
    assert stored["title"].to_list() == ["one", "two"]
    assert stored["text"].to_list() == ["text of one", "text of two"]


def test_replace_touches_only_its_partition_and_empty_frames_delete(store):
    with store.transaction() as tx:
        tx.replace("documents", pl.concat([_documents("c/a", ["a1"]), _documents("c/b", ["b1", "b2"])]), ["c/a", "c/b"])
    with store.transaction() as tx:
        tx.replace("documents", _documents("c/a", [])[:0], ["c/a"])
    assert store.read("SELECT title FROM documents ORDER BY title")["title"].to_list() == ["b1", "b2"]


def test_a_failure_inside_the_transaction_keeps_the_previous_rows(store):
    with store.transaction() as tx:
        tx.replace("documents", _documents("c/a", ["old"]), ["c/a"])
    with pytest.raises(RuntimeError):
        with store.transaction() as tx:
            tx.replace("documents", _documents("c/a", ["new"]), ["c/a"])
            raise RuntimeError("crash between delete+insert and commit")
    assert store.read("SELECT title FROM documents")["title"].to_list() == ["old"]


def test_schema_mismatch_and_foreign_partitions_are_errors(store):
    with pytest.raises(ValueError, match="missing \\['content_hash'\\]"):
        with store.transaction() as tx:
            tx.replace("documents", _documents("c/a", ["x"]).drop("content_hash"), ["c/a"])
    with pytest.raises(ValueError, match="not being replaced"):
        with store.transaction() as tx:
            tx.replace("documents", _documents("c/b", ["x"]), ["c/a"])


def test_tables_are_plain_sql_with_graphrag_column_names(store):
    with store.location.connect(read_only=True) as connection:
        columns = {
            table: [row[0] for row in connection.execute(f"DESCRIBE {table}").fetchall()]
            for table in ["entities", "relationships", "communities", "community_reports", "text_units"]
        }
    assert columns["entities"][:9] == [
        "id",
        "human_readable_id",
        "title",
        "type",
        "description",
        "text_unit_ids",
        "frequency",
        "degree",
        "corpus",
    ]
    assert {"source", "target", "weight", "combined_degree", "text_unit_ids"} <= set(columns["relationships"])
    assert {"community", "level", "parent", "children", "entity_ids", "relationship_ids", "size", "period"} <= set(
        columns["communities"]
    )
    assert {"summary", "full_content", "rank", "rating_explanation", "findings", "full_content_json"} <= set(
        columns["community_reports"]
    )
    assert {"text", "n_tokens", "document_id", "entity_ids", "relationship_ids"} <= set(columns["text_units"])


def test_an_index_from_an_older_version_gains_new_columns_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE TABLE community_reports (id VARCHAR, corpus VARCHAR, title VARCHAR)")
        connection.execute("INSERT INTO community_reports VALUES ('r1', 'c', 'Old report')")
        # Sources before their status column: a row once chunked, the fingerprint once extracted.
        connection.execute("CREATE TABLE sources (source_partition VARCHAR, settings_hash VARCHAR)")
        connection.execute("INSERT INTO sources VALUES ('c/done.txt', 'fingerprint'), ('c/failed.txt', NULL)")
    IndexStore(path).ensure_schema()
    with duckdb.connect(str(path), read_only=True) as connection:
        columns = [row[0] for row in connection.execute("DESCRIBE community_reports").fetchall()]
        rows = connection.execute("SELECT id, title, input_hash FROM community_reports").fetchall()
        statuses = connection.execute("SELECT source_partition, status FROM sources ORDER BY 1").fetchall()
    assert set(TABLES["community_reports"].columns) <= set(columns)
    assert rows == [("r1", "Old report", None)]
    assert statuses == [("c/done.txt", "extracted"), ("c/failed.txt", "failed")]
