"""The asset graph as Dagster sees it: partitioning, lineage, pools, validation."""

import subprocess
import sys

from dagster import AllPartitionMapping, AssetKey, DynamicPartitionsDefinition

from graphrag_assets.defs.partitions import DUCKDB_POOL
from graphrag_evaluation.definitions import defs

from .conftest import OFFLINE_CHECKS, REPO

ARTIFACTS = ["text_units", "entities", "relationships", "communities", "community_reports", "embeddings"]


def _graph():
    return defs.resolve_asset_graph()


def test_index_artifacts_documents_and_extractions_are_partitioned_assets():
    graph = _graph()
    for name in ARTIFACTS + ["documents", "extractions"]:
        partitions = graph.get(AssetKey(name)).partitions_def
        assert isinstance(partitions, DynamicPartitionsDefinition), name
    assert graph.get(AssetKey("documents")).partitions_def.name == "sources"
    # Chunking and extraction are the first steps of a corpus's graph build: one step each
    # for all the sources read since the last build.
    assert {graph.get(AssetKey(n)).partitions_def.name for n in ARTIFACTS + ["extractions"]} == {"corpora"}


def test_lineage_edges():
    graph = _graph()
    parents = {
        name: {key.path[-1] for key in graph.get(AssetKey(name)).parent_keys}
        for name in ARTIFACTS + ["extractions", "evaluations", "published_index"]
    }
    assert parents == {
        "text_units": {"documents"},
        "extractions": {"text_units"},
        "entities": {"extractions", "text_units"},
        "relationships": {"extractions", "text_units"},
        "communities": {"entities", "relationships"},
        "community_reports": {"communities", "entities", "relationships"},
        "embeddings": {"text_units", "entities", "community_reports"},
        "evaluations": {"embeddings"},
        "published_index": {
            "evaluations",
            "embeddings",
            "community_reports",
            "communities",
            "entities",
            "relationships",
        },
    }
    # A corpus depends on every source partition; its rows are scoped by the corpus column.
    assert isinstance(graph.get_partition_mapping(AssetKey("text_units"), AssetKey("documents")), AllPartitionMapping)


def test_every_asset_is_in_the_duckdb_pool_and_has_a_code_version_and_checks():
    graph = _graph()
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        assert node.code_version, key
        assert node.pools == {DUCKDB_POOL}, key
    checks = {(key.asset_key.path[-1], key.name) for key in graph.asset_check_keys}
    assert checks == set(OFFLINE_CHECKS) | {
        ("extractions", "extraction_calls_succeeded"),
        ("entities", "summary_calls_succeeded"),
        ("community_reports", "report_calls_succeeded"),
    }


def test_single_run_backfills_for_the_source_asset():
    graph = _graph()
    policy = graph.get(AssetKey("documents")).backfill_policy
    assert policy is not None and policy.max_partitions_per_run is None


def test_dagster_definitions_validate_passes(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-w", "workspace.yaml"],
        cwd=REPO,
        env={"DAGSTER_HOME": str(tmp_path), "PATH": "", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "All code locations passed validation" in result.stderr + result.stdout


def test_instance_gives_the_duckdb_pool_a_single_slot(instance):
    pools = instance.get_concurrency_config().pool_config
    assert pools.default_pool_limit == 1
    assert str(pools.pool_granularity.value).lower() == "op"


def test_the_live_mode_is_on_wherever_the_daemon_runs_and_every_run_is_one_process():
    from dagster import DefaultSensorStatus

    assert {sensor.name: sensor.default_status for sensor in defs.sensors} == {
        "source_files_sensor": DefaultSensorStatus.RUNNING,
        "graph_automation": DefaultSensorStatus.RUNNING,
        "consistency_sensor": DefaultSensorStatus.RUNNING,
    }
    # "Materialize all" in the UI and automation use the implicit asset job: one process too.
    for job in [
        defs.resolve_job_def("build_graph"),
        defs.resolve_job_def("index_sources"),
        defs.resolve_implicit_global_asset_job_def(),
    ]:
        assert job.executor_def.name == "in_process", job.name
