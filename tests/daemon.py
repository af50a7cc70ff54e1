"""The Dagster daemon's work for this code location, one tick at a time, in the test
process: sensor ticks with their partition requests applied and their runs executed, then
the graph's automation conditions evaluated and what they request materialized."""

from __future__ import annotations

from dagster import (
    AddDynamicPartitionsRequest,
    AssetKey,
    DeleteDynamicPartitionsRequest,
    build_sensor_context,
    evaluate_automation_conditions,
)

from graphrag_assets.defs.sensors import source_files_sensor
from graphrag_evaluation.build import build_definitions

GRAPH_ASSETS = [
    "text_units",
    "extractions",
    "entities",
    "relationships",
    "communities",
    "community_reports",
    "embeddings",
    "evaluations",
    "published_index",
]


class Daemon:
    """What the Dagster daemon does for this code location, one tick at a time: evaluate
    the sensor (applying its partition requests and launching its runs), then evaluate
    the automation conditions and launch what they request."""

    def __init__(self, instance, settings, allow_failures: bool = False):
        self.instance = instance
        self.allow_failures = allow_failures
        self.failed: list[tuple[str, str]] = []
        self.defs = build_definitions(settings)
        self.sensor_cursor: str | None = None
        self.automation_cursor = None
        self.runs: list[tuple[str, str]] = []  # (job or asset selection, partition or range)
        self.skip_reason: str | None = None  # the last sensor tick's, when it launched nothing
        # The daemon evaluates automation all along, before any file appears; conditions
        # such as "a dependency was updated" are relative to the previous evaluation.
        self.follow_automation()

    def tick(self) -> None:
        result = source_files_sensor(build_sensor_context(instance=self.instance, cursor=self.sensor_cursor))
        self.skip_reason = result.skip_reason.skip_message if result.skip_reason else None
        for request in result.dynamic_partitions_requests or []:
            if isinstance(request, AddDynamicPartitionsRequest):
                self.instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
            elif isinstance(request, DeleteDynamicPartitionsRequest):
                for key in request.partition_keys:
                    self.instance.delete_dynamic_partition(request.partitions_def_name, key)
        for request in result.run_requests or []:
            job = self.defs.resolve_job_def(request.job_name)
            run = job.execute_in_process(
                instance=self.instance, tags=request.tags, partition_key=request.partition_key, raise_on_error=False
            )
            assert run.success or self.allow_failures, "a run failed"
            self.runs.append(
                (
                    request.job_name,
                    request.partition_key or f"{request.tags.get('dagster/asset_partition_range_start')}..",
                )
            )
            if not run.success:
                self.failed.append(self.runs[-1])
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
            run = job.execute_in_process(
                instance=self.instance,
                asset_selection=[AssetKey(a) for a in assets],
                partition_key=corpus,
                raise_on_error=False,
            )
            assert run.success or self.allow_failures, "a run failed"
            self.runs.append(("automation:" + ",".join(assets), corpus))
            if not run.success:
                self.failed.append(self.runs[-1])
