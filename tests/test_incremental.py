"""Incremental re-indexing driven the way `dagster dev` drives it: the source-files sensor
ticks in a real Dagster instance (temporary DAGSTER_HOME), its run requests are executed,
and the graph assets follow by their declarative automation conditions. After an add, an
edit and a delete, the index must equal a full rebuild of the final corpus, offline and
through the LLM path (where the change's cost in calls is asserted too)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from dagster import AddDynamicPartitionsRequest, AssetKey, DeleteDynamicPartitionsRequest, build_sensor_context, evaluate_automation_conditions

from graphrag_assets.defs.build import build_definitions
from graphrag_assets.defs.sensors import source_files_sensor
from graphrag_assets.indexing import run_index

from .index_equality import assert_same_index, table

GRAPH_ASSETS = ["text_units", "extractions", "entities", "relationships", "communities", "community_reports", "embeddings", "published_index"]
NEW_NOTE = "Mara Ellison and Tobias Renn toured the Beacon Point lab with Clara Okafor. Tobias Renn thanked Mara Ellison.\n"
EDIT = "\nVictor Ashdown thanked Mara Ellison and Mayor Helen Strand at Gullwing Pier.\n"


class Daemon:
    """What the Dagster daemon does for this code location, one tick at a time: evaluate
    the sensor (applying its partition requests and launching its runs), then evaluate
    the automation conditions and launch what they request."""

    def __init__(self, instance, settings):
        self.instance = instance
        self.defs = build_definitions(settings)
        self.sensor_cursor: str | None = None
        self.automation_cursor = None
        self.runs: list[tuple[str, str]] = []  # (job or asset selection, partition or range)
        # The daemon evaluates automation all along, before any file appears; conditions
        # such as "a dependency was updated" are relative to the previous evaluation.
        self.follow_automation()

    def tick(self) -> None:
        result = source_files_sensor(build_sensor_context(instance=self.instance, cursor=self.sensor_cursor))
        for request in result.dynamic_partitions_requests or []:
            if isinstance(request, AddDynamicPartitionsRequest):
                self.instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
            elif isinstance(request, DeleteDynamicPartitionsRequest):
                for key in request.partition_keys:
                    self.instance.delete_dynamic_partition(request.partitions_def_name, key)
        for request in result.run_requests or []:
            job = self.defs.resolve_job_def(request.job_name)
            run = job.execute_in_process(instance=self.instance, tags=request.tags, partition_key=request.partition_key, raise_on_error=True)
            assert run.success
            self.runs.append((request.job_name, request.partition_key or f"{request.tags.get('dagster/asset_partition_range_start')}.."))
        self.sensor_cursor = result.cursor
        self.follow_automation()

    def follow_automation(self) -> None:
        evaluation = evaluate_automation_conditions(self.defs, self.instance, cursor=self.automation_cursor)
        self.automation_cursor = evaluation.cursor
        requested: dict[str, list[str]] = {}
        for asset in GRAPH_ASSETS:
            for partition in evaluation.get_requested_partitions(AssetKey(asset)):
                requested.setdefault(partition, []).append(asset)
        for corpus, assets in sorted(requested.items()):
            job = self.defs.resolve_implicit_global_asset_job_def()
            run = job.execute_in_process(instance=self.instance, asset_selection=[AssetKey(a) for a in assets], partition_key=corpus)
            assert run.success
            self.runs.append(("automation:" + ",".join(assets), corpus))


def _change_corpus(folder: Path) -> None:
    (folder / "default" / "beacon_point.txt").write_text(NEW_NOTE, encoding="utf-8")
    edited = folder / "default" / "calder_shipping.txt"
    edited.write_text(edited.read_text(encoding="utf-8") + EDIT, encoding="utf-8")
    (folder / "default" / "festival_notes.jsonl").unlink()


def _rebuild(folder: Path, settings_for, tmp_path: Path):
    """A full index of the final folder from scratch, in its own Dagster instance."""
    from dagster import DagsterInstance

    fresh = settings_for(folder, database=str(tmp_path / "rebuilt" / "index.duckdb"), vectors=str(tmp_path / "rebuilt" / "lancedb"))
    with DagsterInstance.ephemeral() as other:
        report = run_index(fresh, other, build_definitions(fresh), log=lambda message: None)
    assert not report.failed_runs
    return fresh


@pytest.fixture
def watched(input_dir, settings_for, monkeypatch):
    settings = settings_for(input_dir)
    monkeypatch.setenv("GRAPHRAG_INPUT_DIR", str(input_dir))
    monkeypatch.setenv("GRAPHRAG_DB", settings.database)
    monkeypatch.setenv("GRAPHRAG_VECTORS", settings.vectors)
    return settings


def test_sensor_and_automation_keep_the_index_equal_to_a_full_rebuild(watched, input_dir, instance, settings_for, tmp_path):
    daemon = Daemon(instance, watched)
    daemon.tick()
    # The first tick indexed every file in one run; automation then built the graph.
    assert [job for job, _ in daemon.runs] == ["index_sources", "automation:" + ",".join(GRAPH_ASSETS)]

    _change_corpus(input_dir)
    daemon.runs.clear()
    daemon.tick()
    # One source run for the new and the edited file (adjacent in partition order would be
    # one range; here they are not), one graph run for the deletion; automation had nothing
    # left to do, as the graph run came after the source runs.
    jobs = Counter(job for job, _ in daemon.runs)
    assert jobs["build_graph"] == 1 and jobs["index_sources"] >= 1
    assert not [job for job, _ in daemon.runs if job.startswith("automation")]
    assert "default/festival_notes.jsonl" not in instance.get_dynamic_partitions("sources")

    # A quiet tick changes nothing.
    daemon.runs.clear()
    daemon.tick()
    assert daemon.runs == []

    rebuilt = _rebuild(input_dir, settings_for, tmp_path)
    assert_same_index(watched.database, rebuilt.database)
    # Every row stays traceable to a file that still exists.
    sources = table(
        watched.database,
        "SELECT DISTINCT d.source_partition FROM entities e, unnest(e.text_unit_ids) AS u(unit) "
        "JOIN text_units t ON t.id = u.unit JOIN documents d ON d.id = t.document_id",
    )["source_partition"].to_list()
    assert sources and all((input_dir / key).exists() for key in sources)
    # Short ids stay unique within the corpus although sources were indexed in separate runs.
    for name in ("documents", "text_units"):
        numbers = table(watched.database, f"SELECT human_readable_id FROM {name}")["human_readable_id"]
        assert numbers.n_unique() == numbers.len(), name


def test_llm_update_costs_only_the_changed_text_and_communities(watched, input_dir, instance, settings_for, tmp_path, fake_llm):
    fake = fake_llm
    daemon = Daemon(instance, watched)
    daemon.tick()
    first_index = Counter(r["task"] for r in fake.completions())
    reports_before = set(table(watched.database, "SELECT input_hash FROM community_reports")["input_hash"])
    units_before = set(table(watched.database, "SELECT id FROM text_units")["id"])

    _change_corpus(input_dir)
    seen = len(fake.requests)
    daemon.tick()
    update = Counter(r["task"] for r in fake.requests[seen:] if r["path"].endswith("/chat/completions"))

    # Extraction (and its gleaning pass) only for the text units that are new.
    new_units = set(table(watched.database, "SELECT id FROM text_units")["id"]) - units_before
    assert update["extract_graph"] == update["glean"] == len(new_units) > 0
    # A report call only for a community whose content changed; the others kept theirs.
    reports_after = table(watched.database, "SELECT input_hash, generated_by FROM community_reports")
    rewritten = set(reports_after["input_hash"]) - reports_before
    assert update["community_report"] == len(rewritten) < reports_after.height
    assert set(reports_after["generated_by"]) == {"fake-chat"}
    assert sum(update.values()) < sum(first_index.values())

    rebuilt = _rebuild(input_dir, settings_for, tmp_path)
    assert_same_index(watched.database, rebuilt.database)
