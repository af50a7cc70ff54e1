"""The whole asset graph on the sample corpus, in a real Dagster instance (temporary
DAGSTER_HOME), a real DuckDB file and a real LanceDB directory."""

import shutil

import lancedb
import polars as pl
from dagster import AssetCheckKey, AssetKey, AssetSelection
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

from graphrag_assets.defs.partitions import RANGE_END_TAG, RANGE_START_TAG
from graphrag_assets.indexing import run_index
from graphrag_evaluation.build import build_definitions

from .conftest import BOTH_BACKENDS, OFFLINE_CHECKS
from .index_equality import assert_same_index

GRAPH_TABLES = ["entities", "relationships", "communities", "community_reports", "embeddings"]


def _table(settings, sql: str) -> pl.DataFrame:
    with settings.location().connect(read_only=True) as connection:
        return connection.execute(sql).pl()


def _check_statuses(instance) -> dict[str, AssetCheckExecutionRecordStatus]:
    keys = [AssetCheckKey(AssetKey(asset), name) for asset, name in OFFLINE_CHECKS]
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(keys)
    return {key.name: record.status for key, record in latest.items()}


@BOTH_BACKENDS
def test_first_index_builds_every_table_in_two_runs_and_passes_every_check(index, input_dir, instance):
    settings, report = index(input_dir)
    counts = report.rows["default"]
    assert counts["documents"] == 12  # 3 text files, 2 markdown, 4 JSONL rows, 3 CSV rows
    assert all(counts[table] > 0 for table in ["text_units", *GRAPH_TABLES]), counts
    assert len(report.source_runs) == 1 and len(report.graph_runs) == 1 and not report.failed_runs
    assert set(_check_statuses(instance).values()) == {AssetCheckExecutionRecordStatus.SUCCEEDED}

    # Every artifact was materialized for its partition, visible in the instance (and UI).
    for asset in ["text_units", *GRAPH_TABLES]:
        event = instance.get_latest_materialization_event(AssetKey(asset))
        assert event is not None and event.dagster_event.partition is not None
    source_run = instance.get_run_by_id(report.source_runs[0])
    assert source_run.tags[RANGE_START_TAG] == "default/calder_shipping.txt"
    assert source_run.tags[RANGE_END_TAG] == "default/sister_city_zh.txt"

    # Chinese documents yield Chinese people, places and organisations.
    chinese = _table(settings, "SELECT title, type FROM entities WHERE regexp_matches(title, '[一-鿿]')")
    assert {"PERSON", "GEO", "ORGANIZATION"} <= set(chinese["type"])
    assert "王海燕" in chinese["title"].to_list()

    # text_units carry the graph's ids, and every id resolves.
    dangling = _table(
        settings,
        "SELECT e FROM (SELECT unnest(entity_ids) AS e FROM text_units) ANTI JOIN entities ON e = entities.id",
    )
    assert dangling.is_empty()
    assert _table(settings, "SELECT count(*) AS n FROM text_units WHERE len(entity_ids) > 0")["n"][0] > 0

    # SQL users can rank by vector similarity with built-in functions only.
    nearest = _table(
        settings,
        "WITH q AS (SELECT vector FROM embeddings WHERE kind = 'entity_description' LIMIT 1) "
        "SELECT e.id, array_cosine_similarity(e.vector::FLOAT[256], q.vector::FLOAT[256]) AS similarity "
        "FROM embeddings e, q WHERE e.kind = 'entity_description' ORDER BY similarity DESC LIMIT 3",
    )
    assert abs(nearest["similarity"][0] - 1.0) < 1e-5

    # LanceDB mirrors the DuckDB embeddings, one table per kind.
    kinds = _table(settings, "SELECT kind, count(*) AS n FROM embeddings GROUP BY kind")
    db = lancedb.connect(settings.vectors)
    for kind, n in kinds.iter_rows():
        assert db.open_table(kind).count_rows() == n


@BOTH_BACKENDS
def test_rerun_with_nothing_changed_does_no_work(index, input_dir, instance):
    index(input_dir)
    runs_before = len(instance.get_runs())
    _, report = index(input_dir)
    assert not report.did_work
    assert len(instance.get_runs()) == runs_before


@BOTH_BACKENDS
def test_edit_and_delete_touch_only_their_sources_and_match_a_full_rebuild(
    index, input_dir, instance, tmp_path, settings_for
):
    settings, _ = index(input_dir)
    edited = input_dir / "default" / "calder_shipping.txt"
    edited.write_text(
        edited.read_text(encoding="utf-8") + "\nVictor Ashdown thanked Mara Ellison and Mayor Helen Strand.\n",
        encoding="utf-8",
    )
    (input_dir / "default" / "festival_notes.jsonl").unlink()

    _, report = index(input_dir)
    assert [s.partition_key for s in report.plan.changed] == ["default/calder_shipping.txt"]
    assert report.plan.deleted == ["default/festival_notes.jsonl"]
    run = instance.get_run_by_id(report.source_runs[0])
    assert run.tags[RANGE_START_TAG] == run.tags[RANGE_END_TAG] == "default/calder_shipping.txt"
    assert "default/festival_notes.jsonl" not in instance.get_dynamic_partitions("sources")
    for table in ["documents", "text_units", "extracted_entities", "sources"]:
        leftover = _table(
            settings, f"SELECT count(*) AS n FROM {table} WHERE source_partition = 'default/festival_notes.jsonl'"
        )
        assert leftover["n"][0] == 0, table

    # A from-scratch index of the final folder reaches the same index.
    fresh_input = tmp_path / "fresh_input"
    shutil.copytree(input_dir, fresh_input)
    fresh = settings_for(fresh_input, db=str(tmp_path / "fresh.duckdb"), vectors=str(tmp_path / "fresh_lance"))
    run_index(fresh, instance, lambda: build_definitions(fresh), log=lambda message: None)
    assert_same_index(settings.location(), fresh.location())


def test_extractions_from_the_ui_chunk_and_extract_a_file_read_again_and_the_next_pass_builds_the_rest(
    index, input_dir, instance, tmp_path, settings_for
):
    """Chunking and extraction are one graph of steps making both assets: materializing
    `extractions` from the UI takes `text_units` with it (Dagster selects the whole graph),
    so a file read again is chunked and extracted before it is marked indexed; the next
    pass finds it indexed and builds the rest of the corpus's graph."""
    settings, _ = index(input_dir)
    key = "default/calder_shipping.txt"
    edited = input_dir / key
    edited.write_text(
        edited.read_text(encoding="utf-8") + "\nVictor Ashdown thanked Mara Ellison at Gullwing Pier.\n",
        encoding="utf-8",
    )
    assets = build_definitions(settings).resolve_implicit_global_asset_job_def()
    assets.execute_in_process(instance=instance, asset_selection=[AssetKey("documents")], partition_key=key)
    status = (
        f"SELECT status, settings_hash IS NOT NULL AS indexed, text_units FROM sources WHERE source_partition = '{key}'"
    )
    assert _table(settings, status).rows() == [("read", False, None)]
    selection = AssetSelection.assets("extractions").required_multi_asset_neighbors()
    assert selection.resolve(assets.asset_layer.asset_graph) == {AssetKey("text_units"), AssetKey("extractions")}
    assert assets.execute_in_process(
        instance=instance, asset_selection=[AssetKey("text_units"), AssetKey("extractions")], partition_key="default"
    ).success
    assert _table(settings, status).rows() == [("extracted", True, 1)]
    extraction = instance.get_latest_materialization_event(AssetKey("extractions")).asset_materialization.metadata
    chunking = instance.get_latest_materialization_event(AssetKey("text_units")).asset_materialization.metadata
    assert chunking["sources_chunked"].value == 1 and extraction["sources_extracted"].value == 1

    _, report = index(input_dir)
    assert not report.plan.pending and report.graph_runs
    fresh = settings_for(input_dir, db=str(tmp_path / "fresh.duckdb"), vectors=str(tmp_path / "fresh_lance"))
    run_index(fresh, instance, lambda: build_definitions(fresh), log=lambda message: None)
    assert_same_index(settings.location(), fresh.location())


def test_bad_files_are_reported_by_name_and_nothing_indexed_is_lost(index, input_dir):
    settings, _ = index(input_dir)
    before = _table(
        settings, "SELECT id, title, text FROM documents WHERE source_partition = 'default/river_cleanup.txt'"
    )
    (input_dir / "default" / "river_cleanup.txt").write_bytes(b"\x00\x01binary now")
    (input_dir / "default" / "empty.md").write_text("")
    (input_dir / "default" / "latin1.txt").write_bytes("Café de la Gare".encode("latin-1"))
    (input_dir / "default" / "no_text.csv").write_text("id,body\n1,Hello\n")
    (input_dir / "default" / "new_notes.txt").write_text(
        "Mara Ellison and Tobias Renn opened the Beacon Point lab. Mara Ellison led it.\n"
    )

    _, report = index(input_dir)
    assert not report.failed_runs
    errors = "\n".join(report.source_errors)
    assert "default/river_cleanup.txt: file looks binary" in errors
    assert "default/empty.md: file is empty" in errors
    assert "default/latin1.txt: not valid UTF-8" in errors
    assert "default/no_text.csv: text column 'text' not found" in errors
    after = _table(
        settings, "SELECT id, title, text FROM documents WHERE source_partition = 'default/river_cleanup.txt'"
    )
    assert after.equals(before)
    assert (
        _table(settings, "SELECT count(*) AS n FROM documents WHERE source_partition = 'default/new_notes.txt'")["n"][0]
        == 1
    )
    assert (
        _table(settings, "SELECT count(*) AS n FROM text_units WHERE source_partition = 'default/river_cleanup.txt'")[
            "n"
        ][0]
        > 0
    )

    # Fixing the file clears its error on the next pass.
    (input_dir / "default" / "river_cleanup.txt").write_text(
        "Clara Okafor cleaned the Verrin River. Clara Okafor thanked Port Calder.\n"
    )
    for name in ["empty.md", "latin1.txt", "no_text.csv"]:
        (input_dir / "default" / name).unlink()
    _, report = index(input_dir)
    assert report.source_errors == []
