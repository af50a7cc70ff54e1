"""Incremental re-indexing driven the way `dagster dev` drives it: the source-files sensor
ticks in a real Dagster instance (temporary DAGSTER_HOME), its run requests are executed,
and the graph assets follow by their declarative automation conditions. After an add, an
edit and a delete, the index must equal a full rebuild of the final corpus, offline and
through the LLM path (where the change's cost in calls is asserted too)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from graphrag_assets.indexing import run_index
from graphrag_evaluation.build import build_definitions

from .conftest import BOTH_BACKENDS
from .daemon import GRAPH_ASSETS, Daemon
from .index_equality import assert_same_index, table

NEW_NOTE = (
    "Mara Ellison and Tobias Renn toured the Beacon Point lab with Clara Okafor. Tobias Renn thanked Mara Ellison.\n"
)
EDIT = "\nVictor Ashdown thanked Mara Ellison and Mayor Helen Strand at Gullwing Pier.\n"


def _change_corpus(folder: Path) -> None:
    (folder / "default" / "beacon_point.txt").write_text(NEW_NOTE, encoding="utf-8")
    edited = folder / "default" / "calder_shipping.txt"
    edited.write_text(edited.read_text(encoding="utf-8") + EDIT, encoding="utf-8")
    (folder / "default" / "festival_notes.jsonl").unlink()


def _rebuild(folder: Path, settings_for, tmp_path: Path):
    """A full index of the final folder from scratch, in its own Dagster instance."""
    from dagster import DagsterInstance

    fresh = settings_for(
        folder, db=str(tmp_path / "rebuilt" / "index.duckdb"), vectors=str(tmp_path / "rebuilt" / "lancedb")
    )
    with DagsterInstance.ephemeral() as other:
        report = run_index(fresh, other, lambda: build_definitions(fresh), log=lambda message: None)
    assert not report.failed_runs
    return fresh


@pytest.fixture
def watched(input_dir, settings_for, monkeypatch):
    """The index's settings, also in the environment the sensors read them from."""
    settings = settings_for(input_dir)
    for variable, value in settings.environment().items():
        monkeypatch.setenv(variable, value)
    return settings


@BOTH_BACKENDS
def test_sensor_and_automation_keep_the_index_equal_to_a_full_rebuild(
    watched, input_dir, instance, settings_for, tmp_path
):
    daemon = Daemon(instance, watched)
    daemon.tick()
    # The first tick indexed every file in one run; automation then built the graph.
    assert [job for job, _ in daemon.runs] == ["index_sources", "automation:" + ",".join(GRAPH_ASSETS)]

    _change_corpus(input_dir)
    daemon.runs.clear()
    daemon.tick()
    # Source runs for the new and the edited file (adjacent in partition order would be one
    # range; here they are not), then one graph build by automation, which also retracts
    # the deleted file's rows.
    jobs = Counter(job for job, _ in daemon.runs)
    assert jobs["index_sources"] >= 1 and jobs["build_graph"] == 0
    assert [job for job, _ in daemon.runs if job.startswith("automation")] == ["automation:" + ",".join(GRAPH_ASSETS)]
    assert "default/festival_notes.jsonl" not in instance.get_dynamic_partitions("sources")

    # A quiet tick changes nothing.
    daemon.runs.clear()
    daemon.tick()
    assert daemon.runs == []

    rebuilt = _rebuild(input_dir, settings_for, tmp_path)
    assert_same_index(watched.location(), rebuilt.location())
    # Every row stays traceable to a file that still exists.
    sources = table(
        watched.location(),
        "SELECT DISTINCT d.source_partition FROM entities e, unnest(e.text_unit_ids) AS u(unit) "
        "JOIN text_units t ON t.id = u.unit JOIN documents d ON d.id = t.document_id",
    )["source_partition"].to_list()
    assert sources and all((input_dir / key).exists() for key in sources)
    # Short ids stay unique within the corpus although sources were indexed in separate runs.
    for name in ("documents", "text_units"):
        numbers = table(watched.location(), f"SELECT human_readable_id FROM {name}")["human_readable_id"]
        assert numbers.n_unique() == numbers.len(), name


def test_llm_update_costs_only_the_changed_text_and_communities(
    watched, input_dir, instance, settings_for, tmp_path, fake_llm
):
    fake = fake_llm
    daemon = Daemon(instance, watched)
    daemon.tick()
    first_index = Counter(r["task"] for r in fake.completions())
    reports_before = set(table(watched.db, "SELECT input_hash FROM community_reports")["input_hash"])
    units_before = set(table(watched.db, "SELECT id FROM text_units")["id"])

    _change_corpus(input_dir)
    seen = len(fake.requests)
    daemon.tick()
    update = Counter(r["task"] for r in fake.requests[seen:] if r["path"].endswith("/chat/completions"))

    # Extraction (and its gleaning pass) only for the text units that are new.
    new_units = set(table(watched.db, "SELECT id FROM text_units")["id"]) - units_before
    assert update["extract_graph"] == update["glean"] == len(new_units) > 0
    # A report call only for a community whose content changed; the others kept theirs.
    reports_after = table(watched.db, "SELECT input_hash, generated_by FROM community_reports")
    rewritten = set(reports_after["input_hash"]) - reports_before
    assert update["community_report"] == len(rewritten) < reports_after.height
    assert set(reports_after["generated_by"]) == {"fake-chat"}
    assert sum(update.values()) < sum(first_index.values())

    rebuilt = _rebuild(input_dir, settings_for, tmp_path)
    assert_same_index(watched.db, rebuilt.db)


def test_a_graph_build_automation_did_not_launch_is_not_built_again(watched, input_dir, instance):
    """A build from the UI (`build_graph`) or the sensor (a deletion) leaves the graph newer
    than its sources: automation must not build it once more. A file read afterwards still
    reaches the graph."""
    daemon = Daemon(instance, watched)
    daemon.tick()
    daemon.runs.clear()
    build = daemon.defs.resolve_job_def("build_graph").execute_in_process(instance=instance, partition_key="default")
    assert build.success
    daemon.follow_automation()
    daemon.follow_automation()
    assert daemon.runs == []

    (input_dir / "default" / "beacon_point.txt").write_text(NEW_NOTE, encoding="utf-8")
    daemon.tick()
    assert [job for job, _ in daemon.runs if job.startswith("automation")] == ["automation:" + ",".join(GRAPH_ASSETS)]
