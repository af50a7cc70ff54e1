"""What re-runs when the code of a stage changes, or a rebuild is asked for: that stage for
every source, and the stages after it, never the ones before (real DuckDB file, real
Dagster instance in a temporary DAGSTER_HOME)."""

from __future__ import annotations

import os

import duckdb
import polars as pl
from dagster import AssetKey, DagsterInstance, validate_run_config

from graphrag_assets import fingerprints
from graphrag_assets.build_state import CorpusWork, corpus_work
from graphrag_assets.defs.assets.shared import rebuild_run_config
from graphrag_assets.fingerprints import CODE_VERSIONS, STAGE_ASSETS, STAGES
from graphrag_assets.indexing import run_index
from graphrag_evaluation.build import build_definitions

from .conftest import SAMPLE_CORPUS
from .index_equality import assert_same_index
from .test_cli import _run

SOURCES = 7  # files of the sample corpus
ALL_ASSETS = [asset for stage in STAGES for asset in STAGE_ASSETS[stage]] + ["evaluations", "published_index"]


def _materializations(instance) -> dict[str, int]:
    return {asset: len(instance.fetch_materializations(AssetKey(asset), limit=1000).records) for asset in ALL_ASSETS}


def _latest(instance, asset: str) -> dict:
    metadata = instance.get_latest_materialization_event(AssetKey(asset)).asset_materialization.metadata
    return {name: value.value for name, value in metadata.items()}


def _table(database: str, sql: str) -> pl.DataFrame:
    with duckdb.connect(database, read_only=True) as connection:
        return connection.execute(sql).pl()


def _rows(database: str) -> dict[str, pl.DataFrame]:
    """What the stages before a redone one wrote, with the time each source was indexed."""
    return {
        "documents": _table(database, "SELECT id, text FROM documents ORDER BY id"),
        "text_units": _table(database, "SELECT id, human_readable_id, text FROM text_units ORDER BY id"),
        "extracted_entities": _table(database, "SELECT * FROM extracted_entities ORDER BY ALL"),
        "sources": _table(
            database, "SELECT source_partition, settings_hash, indexed_at FROM sources ORDER BY source_partition"
        ),
        "entities": _table(database, "SELECT id, human_readable_id, title, description FROM entities ORDER BY id"),
    }


def test_a_stage_code_version_change_redoes_that_stage_and_what_follows_only(
    index, input_dir, instance, monkeypatch, settings_for, tmp_path
):
    settings, _ = index(input_dir)
    before, counts = _rows(settings.db), _materializations(instance)

    # Clustering's code changed: communities, reports, vectors and the published index
    # are built again; chunks, extractions and the merged graph are left as they were.
    monkeypatch.setitem(CODE_VERSIONS, "clustering", CODE_VERSIONS["clustering"] + 1)
    with settings.store() as store:
        work = corpus_work(store, settings, {"default"})
    version = CODE_VERSIONS["clustering"]
    assert work == {
        "default": CorpusWork(
            f"clustering code changed (version {version - 1} -> {version})",
            ("communities", "community_reports", "embeddings", "evaluations", "published_index"),
        )
    }
    _, report = index(input_dir)
    assert not report.source_runs and len(report.graph_runs) == 1 and not report.failed_runs
    after = _materializations(instance)
    assert {asset for asset in ALL_ASSETS if after[asset] != counts[asset]} == {
        "communities",
        "community_reports",
        "embeddings",
        "evaluations",
        "published_index",
    }
    assert all(
        after[asset] == counts[asset] + 1
        for asset in ["communities", "community_reports", "embeddings", "evaluations", "published_index"]
    )
    for table, rows in _rows(settings.db).items():
        assert rows.equals(before[table]), table
    recorded = _table(settings.db, "SELECT stage_fingerprints FROM corpus_builds")["stage_fingerprints"][0]
    assert fingerprints.load_fingerprints(recorded)["clustering"].version == version

    # The chunker's code changed: every source is chunked and extracted again from its
    # stored documents (no file is read again), and the graph is rebuilt.
    counts = after
    monkeypatch.setitem(CODE_VERSIONS, "chunking", CODE_VERSIONS["chunking"] + 1)
    _, report = index(input_dir)
    assert report.plan.pending == [] and not report.source_runs and len(report.graph_runs) == 1
    after = _materializations(instance)
    assert after["documents"] == counts["documents"]
    assert all(after[asset] == counts[asset] + 1 for asset in ALL_ASSETS if asset != "documents")
    assert _latest(instance, "text_units")["sources_chunked"] == SOURCES
    assert _latest(instance, "extractions")["sources_extracted"] == SOURCES
    now = _rows(settings.db)
    assert now["documents"].equals(before["documents"])
    assert (now["sources"]["indexed_at"] > before["sources"]["indexed_at"]).all()
    # The same chunker under a new number gives the same chunks: nothing else moved.
    assert now["text_units"].equals(before["text_units"]) and now["entities"].equals(before["entities"])

    # Done: the next pass has nothing to do.
    _, report = index(input_dir)
    assert not report.did_work

    # A full index of the same folder by the new code equals the redone one.
    fresh = settings_for(input_dir, db=str(tmp_path / "fresh.duckdb"), vectors=str(tmp_path / "fresh_lance"))
    run_index(fresh, instance, lambda: build_definitions(fresh), log=lambda message: None)
    assert_same_index(settings.db, fresh.db)


def test_new_offline_rules_re_extract_an_offline_index_and_leave_a_model_index_alone(
    index, input_dir, instance, monkeypatch
):
    settings, _ = index(input_dir)
    with monkeypatch.context() as model:
        model.setenv("GRAPHRAG_LLM_MODEL", "some-model")
        model.setenv("GRAPHRAG_LLM_BASE_URL", "http://127.0.0.1:9/v1")
        model_extraction = fingerprints.current_fingerprints(settings)["extraction"]
    monkeypatch.setattr(fingerprints, "OFFLINE_EXTRACTION_RULES", fingerprints.OFFLINE_EXTRACTION_RULES + 1)
    with settings.store() as store:
        work = corpus_work(store, settings, {"default"})
    assert work["default"].reason == "extraction settings or method changed"
    assert work["default"].assets is None  # the whole graph job: extraction redoes every source itself
    _, report = index(input_dir)
    assert not report.failed_runs and _latest(instance, "extractions")["sources_extracted"] == SOURCES
    _, report = index(input_dir)
    assert not report.did_work
    # An index extracted by a model: the offline rules are no part of its fingerprint.
    monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "some-model")
    monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    assert fingerprints.current_fingerprints(settings)["extraction"] == model_extraction


def test_a_changed_extractor_re_extracts_every_source_from_the_cache(fake_llm, index, input_dir, instance, monkeypatch):
    settings, _ = index(input_dir)
    counts, calls = _materializations(instance), len(fake_llm.requests)
    monkeypatch.setitem(CODE_VERSIONS, "extraction", CODE_VERSIONS["extraction"] + 1)
    _, report = index(input_dir)
    assert not report.failed_runs and not report.source_runs
    after = _materializations(instance)
    assert after["documents"] == counts["documents"]
    # One graph of steps makes both: text_units is materialized too, and chunks nothing.
    assert after["text_units"] == counts["text_units"] + 1 and _latest(instance, "text_units")["sources_chunked"] == 0
    assert after["extractions"] == counts["extractions"] + 1
    extraction = _latest(instance, "extractions")
    assert extraction["sources_extracted"] == SOURCES and extraction["llm_cache_hits"] > 0
    # Same prompts, same text: every extraction (and every later call) is answered by the cache.
    assert len(fake_llm.requests) == calls and report.llm_calls == 0


def test_the_ui_sees_the_same_versions_and_rebuilds_by_a_run_config_of_the_graph_job(index, input_dir, instance):
    settings, _ = index(input_dir)
    counts = _materializations(instance)
    definitions = build_definitions(settings)
    # The stage versions are the assets' code versions: the UI marks stale what graphrag-index redoes.
    graph = definitions.resolve_asset_graph()
    for stage, assets in STAGE_ASSETS.items():
        for asset in assets:
            assert graph.get(AssetKey(asset)).code_version.startswith(f"{asset}-v{CODE_VERSIONS[stage]}"), asset

    job = definitions.resolve_job_def("build_graph")
    # Every asset that keeps earlier work takes a rebuild flag in the graph job's run config.
    everything = rebuild_run_config(fingerprints.KEEPS_EARLIER_WORK)
    assert validate_run_config(job, everything | {"execution": {"config": {}}}) is not None
    plan = everything["ops"]["chunking_and_extraction"]["ops"]["plan_chunking_and_extraction"]["config"]
    assert plan == {"rebuild_chunking": True, "rebuild_extraction": True}
    assert {"community_reports", "embeddings"} <= set(everything["ops"])

    result = job.execute_in_process(
        instance=instance, partition_key="default", run_config=rebuild_run_config(("text_units",))
    )
    assert result.success
    assert _latest(instance, "text_units")["sources_chunked"] == SOURCES
    assert _materializations(instance)["documents"] == counts["documents"]


def test_graphrag_index_rebuild_chunking_rechunks_and_names_the_stages(dagster_home, tmp_path):
    assert _run(["--input", str(SAMPLE_CORPUS)], dagster_home, tmp_path).returncode == 0

    result = _run(["--input", str(SAMPLE_CORPUS), "--rebuild", "chunking"], dagster_home, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "corpus default: graph build (rebuild of chunking requested)" in result.stdout
    assert "0 source run(s), 1 graph run(s)" in result.stdout
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    with DagsterInstance.get() as instance:
        assert _latest(instance, "text_units")["sources_chunked"] == SOURCES
        assert len(instance.fetch_materializations(AssetKey("documents"), limit=100).records) == SOURCES  # read once

    unknown = _run(["--input", str(SAMPLE_CORPUS), "--rebuild", "chunker"], dagster_home, tmp_path)
    assert unknown.returncode == 2
    assert (
        "invalid choice: 'chunker'" in unknown.stderr and ", ".join(repr(stage) for stage in STAGES) in unknown.stderr
    )
