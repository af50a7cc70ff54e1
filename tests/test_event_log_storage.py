"""The batching SQLite event log stores what Dagster's own stores, in fewer transactions."""

import os

import pytest
from dagster import (
    AssetCheckResult,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    BackfillPolicy,
    DagsterEventType,
    Definitions,
    DynamicPartitionsDefinition,
    MaterializeResult,
    asset,
    define_asset_job,
    instance_for_test,
)
from dagster._core.storage.partition_status_cache import AssetPartitionStatus

from graphrag_assets.defs.partitions import RANGE_END_TAG, RANGE_START_TAG
from graphrag_assets.instance.event_log_storage import BATCH_SIZE_VARIABLE, BatchingSqliteEventLogStorage

files = DynamicPartitionsDefinition(name="files")
KEYS = [f"default/file-{number:03d}.txt" for number in range(40)]


@asset(
    partitions_def=files,
    backfill_policy=BackfillPolicy.single_run(),
    check_specs=[AssetCheckSpec("readable", asset="pages")],
)
def pages(context: AssetExecutionContext) -> MaterializeResult:
    return MaterializeResult(
        metadata={"files": len(context.partition_keys)},
        check_results=[AssetCheckResult(check_name="readable", passed=True)],
    )


def _materialize_range(instance) -> dict:
    instance.add_dynamic_partitions(files.name, KEYS)
    job = Definitions(assets=[pages], jobs=[define_asset_job("pages_job", [pages])]).resolve_job_def("pages_job")
    result = job.execute_in_process(instance=instance, tags={RANGE_START_TAG: KEYS[0], RANGE_END_TAG: KEYS[-1]})
    assert result.success
    check_key = next(iter(pages.check_keys))
    return {
        "materializations": len(instance.fetch_materializations(AssetKey("pages"), limit=1000).records),
        "planned": len(
            instance.get_records_for_run(
                result.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION_PLANNED, limit=1000
            ).records
        ),
        "statuses": set(instance.get_status_by_partition(AssetKey("pages"), KEYS, files).values()),
        "latest_partition": instance.get_latest_materialization_event(AssetKey("pages")).dagster_event.partition,
        "check_evaluations": len(instance.event_log_storage.get_asset_check_execution_history(check_key, limit=10)),
        "materialized_partitions": sorted(instance.get_materialized_partitions(AssetKey("pages"))),
    }


@pytest.fixture
def batching(monkeypatch):
    monkeypatch.delenv(BATCH_SIZE_VARIABLE, raising=False)
    yield
    os.environ.pop(BATCH_SIZE_VARIABLE, None)


def test_a_ranged_run_stores_the_same_events_in_batches(batching, tmp_path):
    (tmp_path / "plain").mkdir(), (tmp_path / "batched").mkdir()
    with instance_for_test(temp_dir=str(tmp_path / "plain")) as plain:
        expected = _materialize_range(plain)
    storage = {
        "event_log_storage": {
            "module": "graphrag_assets.instance.event_log_storage",
            "class": BatchingSqliteEventLogStorage.__name__,
        }
    }
    with instance_for_test(temp_dir=str(tmp_path / "batched"), overrides=storage) as batched:
        assert isinstance(batched.event_log_storage, BatchingSqliteEventLogStorage)
        assert os.environ[BATCH_SIZE_VARIABLE] == "1000"
        stored = _materialize_range(batched)
    assert stored == expected
    assert stored["materializations"] == stored["planned"] == len(KEYS)
    assert stored["statuses"] == {AssetPartitionStatus.MATERIALIZED} and stored["materialized_partitions"] == KEYS
