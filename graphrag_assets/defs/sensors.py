"""Incremental re-indexing: a sensor that follows the input folder, and a daily
consistency pass.

The sensor diffs the files (content hashes) against its cursor, which Dagster stores, so
it survives restarts: new files add source partitions, changed files re-run theirs,
deleted files remove theirs. A burst of changes becomes one run per contiguous range of
partition keys (new files are appended, so a burst of new files is one run), never one
per file. Graph assets follow by declarative automation; for deletions the sensor asks
for the corpus graph itself, whose build retracts the rows of removed sources.

It never opens the DuckDB file (the indexer may hold it); the schedule compares the files
with the published snapshot of the index instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
from dagster import (
    AddDynamicPartitionsRequest,
    DefaultScheduleStatus,
    DefaultSensorStatus,
    DeleteDynamicPartitionsRequest,
    RunRequest,
    ScheduleEvaluationContext,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    schedule,
    sensor,
)

from ..core.inputs import InputError, corpus_of_partition, discover_sources
from ..core.source_diff import plan_sources
from ..indexing import RANGE_END_TAG, RANGE_START_TAG, contiguous_ranges
from ..settings import IndexSettings
from ..storage.snapshot import read_pointer
from .jobs import build_graph_job, index_sources_job
from .partitions import corpus_partitions, source_partitions


def _ranges_requests(ordered: list[str], wanted: set[str], run_key_prefix: str) -> list[RunRequest]:
    return [
        RunRequest(job_name=index_sources_job.name, run_key=f"{run_key_prefix}:{first}..{last}", tags={RANGE_START_TAG: first, RANGE_END_TAG: last})
        for first, last in contiguous_ranges(ordered, wanted)
    ]


@sensor(
    jobs=[index_sources_job, build_graph_job],
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.STOPPED,
    description="Adds, re-indexes and removes source partitions as files appear, change or disappear in GRAPHRAG_INPUT_DIR.",
)
def source_files_sensor(context: SensorEvaluationContext):
    settings = IndexSettings.from_env()
    try:
        on_disk = discover_sources(Path(settings.input_dir), settings.forced_corpus())
    except InputError as error:
        return SkipReason(str(error))
    hashes = {source.partition_key: source.read_hash() for source in on_disk}
    previous: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    known = pl.DataFrame(
        {"source_partition": list(previous), "source_hash": list(previous.values()), "settings_hash": ["cursor"] * len(previous)},
        schema={"source_partition": pl.String, "source_hash": pl.String, "settings_hash": pl.String},
    )
    plan = plan_sources(on_disk, hashes, known, "cursor")
    if not plan.pending and not plan.deleted:
        return SensorResult(cursor=json.dumps(hashes, sort_keys=True), skip_reason="no file changed")

    registered = context.instance.get_dynamic_partitions(source_partitions.name)
    new_keys = sorted(s.partition_key for s in plan.pending if s.partition_key not in set(registered))
    ordered = [key for key in registered if key not in set(plan.deleted)] + new_keys
    corpora = {s.corpus for s in on_disk}
    new_corpora = sorted(corpora - set(context.instance.get_dynamic_partitions(corpus_partitions.name)))
    change_id = json.dumps(hashes, sort_keys=True).__hash__() & 0xFFFFFFFF
    requests = _ranges_requests(ordered, {s.partition_key for s in plan.pending}, f"sources-{change_id:08x}")
    for corpus in sorted({corpus_of_partition(key) for key in plan.deleted}):
        requests.append(RunRequest(job_name=build_graph_job.name, partition_key=corpus, run_key=f"retract-{change_id:08x}-{corpus}"))
    partition_requests = []
    if new_keys:
        partition_requests.append(AddDynamicPartitionsRequest(source_partitions.name, new_keys))
    if new_corpora:
        partition_requests.append(AddDynamicPartitionsRequest(corpus_partitions.name, new_corpora))
    deleted = [key for key in plan.deleted if key in set(registered)]
    if deleted:
        partition_requests.append(DeleteDynamicPartitionsRequest(source_partitions.name, deleted))
    context.log.info(f"{len(plan.added)} new, {len(plan.changed)} changed, {len(plan.deleted)} deleted file(s): {len(requests)} run(s)")
    return SensorResult(run_requests=requests, dynamic_partitions_requests=partition_requests, cursor=json.dumps(hashes, sort_keys=True))


@schedule(
    job=index_sources_job,
    cron_schedule="0 3 * * *",
    default_status=DefaultScheduleStatus.STOPPED,
    description="Daily consistency pass: re-runs every registered source whose file differs from what the published index holds.",
)
def consistency_schedule(context: ScheduleEvaluationContext):
    settings = IndexSettings.from_env()
    pointer = read_pointer(settings.database)
    if pointer is None:
        return SkipReason(f"no published index at {settings.database} yet")
    with duckdb.connect(pointer["snapshot"], read_only=True) as connection:
        indexed = connection.execute("SELECT source_partition, source_hash, settings_hash FROM sources").pl()
    on_disk = discover_sources(Path(settings.input_dir), settings.forced_corpus())
    registered = context.instance.get_dynamic_partitions(source_partitions.name)
    on_disk = [s for s in on_disk if s.partition_key in set(registered)]  # adding files is the sensor's job
    hashes = {s.partition_key: s.read_hash() for s in on_disk}
    # Settings hashes are compared by graphrag-index; here only the bytes matter, and whether
    # the source was completely indexed (NULL: a text unit's extraction failed; read it again).
    complete = pl.when(pl.col("settings_hash").is_not_null()).then(pl.lit("any"))
    plan = plan_sources(on_disk, hashes, indexed.with_columns(complete.alias("settings_hash")), "any")
    stale = {s.partition_key for s in plan.pending}
    if not stale:
        return SkipReason("every source matches the index")
    return _ranges_requests(registered, stale, f"consistency-{context.scheduled_execution_time:%Y%m%d}")
