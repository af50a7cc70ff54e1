"""The source-files sensor and the consistency pass, invoked directly with a real Dagster
instance (and cursor)."""

import subprocess
import sys

import duckdb
from dagster import (
    AddDynamicPartitionsRequest,
    AssetKey,
    DeleteDynamicPartitionsRequest,
    SensorResult,
    SkipReason,
    build_sensor_context,
)

from graphrag_assets.defs.partitions import RANGE_END_TAG, RANGE_START_TAG
from graphrag_assets.defs.sensors import consistency_sensor, source_files_sensor
from graphrag_assets.storage.snapshot import pointer_path, publish_snapshot


def _tick(instance, cursor):
    result = source_files_sensor(build_sensor_context(instance=instance, cursor=cursor))
    assert isinstance(result, SensorResult)
    # Apply the partition requests as the daemon would.
    for request in result.dynamic_partitions_requests or []:
        if isinstance(request, AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        elif isinstance(request, DeleteDynamicPartitionsRequest):
            for key in request.partition_keys:
                instance.delete_dynamic_partition(request.partitions_def_name, key)
    return result


def _ranges(result):
    return [
        (r.tags[RANGE_START_TAG], r.tags[RANGE_END_TAG]) for r in result.run_requests if r.job_name == "index_sources"
    ]


def test_add_edit_delete_rename_burst_and_restart(instance, input_dir, monkeypatch):
    monkeypatch.setenv("GRAPHRAG_INPUT_DIR", str(input_dir))
    first = _tick(instance, None)
    assert _ranges(first) == [("default/calder_shipping.txt", "default/sister_city_zh.txt")]  # 7 files, one run
    assert len(instance.get_dynamic_partitions("sources")) == 7
    assert instance.get_dynamic_partitions("corpora") == ["default"]

    quiet = _tick(instance, first.cursor)
    assert not quiet.run_requests and quiet.cursor == first.cursor

    # An edit (content, not mtime) re-runs exactly that partition.
    edited = input_dir / "default" / "river_cleanup.txt"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nClara Okafor thanked the volunteers.\n", encoding="utf-8")
    touched_only = input_dir / "default" / "calder_shipping.txt"
    touched_only.write_bytes(touched_only.read_bytes())
    edit = _tick(instance, quiet.cursor)
    assert _ranges(edit) == [("default/river_cleanup.txt", "default/river_cleanup.txt")]

    # A delete and a rename (a delete plus an add) remove partitions.
    (input_dir / "default" / "festival_notes.jsonl").unlink()
    (input_dir / "default" / "city_council.csv").rename(input_dir / "default" / "council_minutes.csv")
    moved = _tick(instance, edit.cursor)
    assert _ranges(moved) == [("default/council_minutes.csv", "default/council_minutes.csv")]
    # The graph follows the source run by automation, and its build retracts the deleted rows.
    assert [r for r in moved.run_requests if r.job_name == "build_graph"] == []
    partitions = instance.get_dynamic_partitions("sources")
    assert "default/festival_notes.jsonl" not in partitions and "default/city_council.csv" not in partitions
    assert "default/council_minutes.csv" in partitions

    # A burst of 500 new files (one unreadable) is one run, not 500.
    burst_dir = input_dir / "default" / "burst"
    burst_dir.mkdir()
    for i in range(500):
        (burst_dir / f"note_{i:03d}.txt").write_text(f"Note {i}: Mara Ellison visited Port Calder.\n")
    (burst_dir / "scan.txt").write_bytes(b"\x00\x01\x02")
    burst = _tick(instance, moved.cursor)
    assert _ranges(burst) == [("default/burst/note_000.txt", "default/burst/scan.txt")]

    # A file deleted alone: the sensor asks for the graph build, which retracts its rows.
    (burst_dir / "note_000.txt").unlink()
    removed = _tick(instance, burst.cursor)
    assert [(r.job_name, r.partition_key) for r in removed.run_requests] == [("build_graph", "default")]

    # Restarting with the stored cursor finds nothing to do.
    restarted = _tick(instance, removed.cursor)
    assert not restarted.run_requests


def test_consistency_pass_rereads_changed_and_incompletely_indexed_sources(index, input_dir, instance, monkeypatch):
    """The hourly pass compares the files with the published index: an edited file, and a
    source left incomplete (a text unit's extraction failed: settings_hash NULL), are
    read again; everything else is left alone."""
    settings, _ = index(input_dir)
    for name, value in {
        "GRAPHRAG_INPUT_DIR": str(input_dir),
        "GRAPHRAG_DB": settings.db,
        "GRAPHRAG_VECTORS": settings.vectors,
    }.items():
        monkeypatch.setenv(name, value)
    context = build_sensor_context(instance=instance)
    assert isinstance(consistency_sensor(context), SkipReason)

    edited = input_dir / "default" / "river_cleanup.txt"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nClara Okafor thanked the volunteers.\n", encoding="utf-8")
    with duckdb.connect(settings.db) as connection:
        connection.execute(
            "UPDATE sources SET settings_hash = NULL WHERE source_partition = 'default/calder_shipping.txt'"
        )
    publish_snapshot(settings.db, settings.vectors, "default")
    requests = consistency_sensor(context)
    assert sorted((r.tags[RANGE_START_TAG], r.tags[RANGE_END_TAG]) for r in requests) == [
        ("default/calder_shipping.txt", "default/calder_shipping.txt"),
        ("default/river_cleanup.txt", "default/river_cleanup.txt"),
    ]


def test_consistency_pass_finishes_a_build_that_was_not_published(index, input_dir, instance, monkeypatch):
    """A crash between the build and its publication (here: the pointer removed) is finished
    by the next pass, with only the publishing step, unless the live file is held."""
    settings, _ = index(input_dir)
    for name, value in {
        "GRAPHRAG_INPUT_DIR": str(input_dir),
        "GRAPHRAG_DB": settings.db,
        "GRAPHRAG_VECTORS": settings.vectors,
    }.items():
        monkeypatch.setenv(name, value)
    pointer_path(settings.db).unlink()
    requests = consistency_sensor(build_sensor_context(instance=instance))
    assert [(r.job_name, r.partition_key, r.asset_selection) for r in requests] == [
        ("build_graph", "default", [AssetKey("evaluations"), AssetKey("published_index")])
    ]

    code = "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('open', flush=True); sys.stdin.read()"
    holder = subprocess.Popen(
        [sys.executable, "-c", code, settings.db], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "open"
    try:
        assert isinstance(consistency_sensor(build_sensor_context(instance=instance)), SkipReason)
    finally:
        holder.stdin.close()
        holder.wait()
