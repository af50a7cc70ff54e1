"""The DuckLake backend where it differs from the DuckDB file: several writer processes on a
SQLite or PostgreSQL catalog (shards of chunking and extraction, commits that conflict and
are applied again), readers pinned to a published version while the lake changes, old
versions expiring with their files, and a catalog that cannot be opened named as such.
The write path, publishing, retraction and the incremental equality tests run on both
backends elsewhere (``BOTH_BACKENDS`` in conftest)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dagster import DagsterInstance
from dagster._core.events import DagsterEventType

from graphrag_assets.storage.duckdb_store import IndexStore
from graphrag_assets.storage.location import DuckLake, IndexLocation, index_location
from graphrag_assets.storage.snapshot import open_published, published_exists, read_pointer

from .conftest import SAMPLE_CORPUS
from .index_equality import assert_same_index, table
from .postgres import PostgresServer
from .test_cli import _run


def postgres_catalog(server: PostgresServer, tmp_path) -> str:
    """A new database of the server as a DuckLake catalog."""
    database = server.create_database(f"lake_{abs(hash(str(tmp_path))) % 10**8}")
    return "postgres:" + " ".join(f"{key}={value}" for key, value in server.connection(database).items())


def shard_steps(dagster_home) -> set[str]:
    with DagsterInstance.from_config(str(dagster_home)) as instance:
        run = next(run for run in instance.get_runs() if run.job_name == "build_graph")
        return {
            record.step_key
            for record in instance.all_logs(run.run_id, of_type=DagsterEventType.STEP_SUCCESS)
            if "chunk_and_extract_shard" in record.step_key
        }


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_shards_write_side_by_side_and_build_the_index_one_process_builds(kind, request, dagster_home, tmp_path):
    catalog = (
        f"sqlite:{tmp_path / 'lake' / 'catalog.sqlite'}"
        if kind == "sqlite"
        else postgres_catalog(request.getfixturevalue("postgres"), tmp_path)
    )
    lake = {
        "GRAPHRAG_DUCKLAKE_CATALOG": catalog,
        "GRAPHRAG_DUCKLAKE_DATA_PATH": str(tmp_path / "lake" / "data"),
        "GRAPHRAG_SHARDS": "2",
        "GRAPHRAG_SHARD_MIN_TOKENS": "1000",  # the sample corpus is small: split it anyway
    }
    result = _run(["--input", str(SAMPLE_CORPUS)], dagster_home, tmp_path, **lake)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "chunking and extraction in up to 2 processes" in result.stdout
    assert shard_steps(dagster_home) == {
        "chunking_and_extraction.chunk_and_extract_shard[shard_0]",
        "chunking_and_extraction.chunk_and_extract_shard[shard_1]",
    }

    one_process = tmp_path / "one" / "index.duckdb"
    home = tmp_path / "home_one"
    home.mkdir()
    (home / "dagster.yaml").write_text((dagster_home / "dagster.yaml").read_text())
    single = _run(["--input", str(SAMPLE_CORPUS), "--db", str(one_process)], home, tmp_path / "one")
    assert single.returncode == 0, single.stderr[-3000:]
    sharded = index_location(str(tmp_path / "out" / "index.duckdb"), catalog, lake["GRAPHRAG_DUCKLAKE_DATA_PATH"])
    assert_same_index(sharded, IndexLocation(str(one_process)))

    again = _run(["--input", str(SAMPLE_CORPUS)], dagster_home, tmp_path, **lake)
    assert again.returncode == 0 and "no work: index is up to date" in again.stdout


WRITER = textwrap.dedent(
    """
    import sys
    import polars as pl
    from graphrag_assets.storage.duckdb_store import IndexStore
    from graphrag_assets.storage.location import index_location

    catalog, data, writer = sys.argv[1:]
    store = IndexStore(index_location("unused.duckdb", catalog, data))
    with store:
        for round in range(12):
            partition = f"c/{round % 3}"  # the other writer replaces the same partitions
            rows = pl.DataFrame({
                "id": [f"{writer}-{round}-{i}" for i in range(20)], "human_readable_id": list(range(20)),
                "title": writer, "text": f"round {round}", "corpus": "c", "source_partition": partition,
                "source_path": partition, "source_hash": "h", "content_hash": "h",
            })
            with store.transaction() as tx:
                tx.replace("documents", rows, [partition])
    """
)


def test_writers_replacing_the_same_partitions_at_once_lose_nothing_and_leave_one_writer_each(postgres, tmp_path):
    """Two processes replace the rows of the same partitions of one table at the same time:
    DuckLake refuses one of two conflicting commits, which is applied again; every partition
    ends with the 20 rows of exactly one writer's round, never a mix or a loss."""
    location = index_location(
        str(tmp_path / "index.duckdb"), postgres_catalog(postgres, tmp_path), str(tmp_path / "data")
    )
    IndexStore(location).ensure_schema()
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, location.lake.catalog, location.lake.data_path, name], cwd=tmp_path
        )
        for name in ("a", "b")
    ]
    assert [writer.wait(timeout=300) for writer in writers] == [0, 0]
    rows = table(location, "SELECT source_partition, title, text, count(*) AS n FROM documents GROUP BY ALL")
    assert sorted(rows["source_partition"].to_list()) == ["c/0", "c/1", "c/2"]
    assert rows["n"].to_list() == [20, 20, 20]


def test_a_reader_keeps_its_published_version_while_the_lake_changes_and_old_versions_expire(
    index, input_dir, tmp_path
):
    """Readers attach a SQLite catalog where it is, as of the published version: one opened
    before an update keeps answering from its version. The lake keeps the last three
    published versions and expires the older ones, with the files only they used."""
    catalog = f"sqlite:{tmp_path / 'index' / 'catalog.sqlite'}"
    settings, _ = index(input_dir, ducklake_catalog=catalog)
    first = read_pointer(settings.location())
    count = "SELECT count(*) FROM documents"
    reader = open_published(first)
    before = reader.execute(count).fetchone()[0]

    for round in range(4):
        note = input_dir / "default" / f"note_{round}.txt"
        note.write_text(f"Note {round}: Helen Strand opened Gullwing Pier again.\n", encoding="utf-8")
        index(input_dir, ducklake_catalog=catalog)
        if round == 0:
            assert reader.execute(count).fetchone()[0] == before  # time travel: the version it opened
            with open_published(read_pointer(settings.location())) as newer:
                assert newer.execute(count).fetchone()[0] == before + 1
    reader.close()

    pointer = read_pointer(settings.location())
    assert published_exists(pointer) and pointer["snapshot_version"] > first["snapshot_version"]
    assert len(pointer["kept_versions"]) == 3 and first["snapshot_version"] < pointer["kept_versions"][0]
    oldest = table(settings.location(), "SELECT min(snapshot_id) AS id FROM graphrag.snapshots()")["id"][0]
    assert oldest == pointer["kept_versions"][0]
    with pytest.raises(Exception, match="snapshot"):
        open_published(first)
    with open_published(pointer) as latest:
        assert latest.execute(count).fetchone()[0] == before + 4


def test_a_catalog_that_cannot_be_opened_is_named_and_exits_2(dagster_home, tmp_path):
    result = _run([], dagster_home, tmp_path, GRAPHRAG_DUCKLAKE_CATALOG="postgres:host=127.0.0.1 port=1 dbname=none")
    assert result.returncode == 2
    assert "GRAPHRAG_DUCKLAKE_CATALOG: cannot open the DuckLake postgres:host=127.0.0.1 port=1" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_catalog_password_is_never_written_where_readers_find_the_lake():
    lake = DuckLake("ducklake:postgres:dbname=lake host=db password=s3cret user=graphrag", "/srv/lake")
    assert lake.kind == "postgres" and lake.several_writers
    assert "s3cret" not in lake.catalog_for_readers() and "s3cret" not in lake.describe()
    assert lake.catalog_for_readers() == "postgres:dbname=lake host=db user=graphrag"
    assert not DuckLake("/srv/lake.ducklake", "/srv/lake").several_writers


def test_the_index_a_query_reads_follows_its_own_settings(index, input_dir, tmp_path, monkeypatch):
    """A DuckLake indexed under the default database name does not take over the DuckDB
    index's published pointer: each store has its own, and a reader follows its settings."""
    from graphrag_query.reader import IndexNotFound, IndexReader

    settings, _ = index(input_dir)
    documents = IndexReader(settings.db).table("documents").height
    (input_dir / "default" / "lake_note.txt").write_text("Helen Strand opened the Gullwing Pier lake.\n")
    catalog = str(tmp_path / "index" / "catalog.ducklake")
    lake, _ = index(input_dir, ducklake_catalog=catalog)

    monkeypatch.delenv("GRAPHRAG_DUCKLAKE_CATALOG", raising=False)
    assert IndexReader(settings.db).table("documents").height == documents  # the DuckDB file's snapshot
    monkeypatch.setenv("GRAPHRAG_DUCKLAKE_CATALOG", catalog)
    assert IndexReader(settings.db).table("documents").height == documents + 1
    assert read_pointer(lake.location())["written_by"] == lake.location().describe()

    # Only the lake has published: the DuckDB reader is told where the index is.
    monkeypatch.delenv("GRAPHRAG_DUCKLAKE_CATALOG")
    Path(settings.db + ".published.json").unlink()
    with pytest.raises(IndexNotFound, match=f"nothing is published for {settings.db}; DuckLake"):
        IndexReader(settings.db)
