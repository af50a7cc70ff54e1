"""The live mode: a sensor that follows the input folder, the graph's automation, and an
hourly consistency pass (a sensor too). All three run by default wherever the Dagster daemon runs
(``dg dev``): drop a file into the input folder and it reaches the published index.

The sensor diffs the files (content hashes) against its cursor, which Dagster stores, so
it survives restarts: new files add source partitions, changed files re-run theirs,
deleted files remove theirs, by the rule of ``graphrag-index``: only files gone from a
corpus folder that is still there (a vanished folder, an unmounted disk, is reported and
kept), and never more than a pass deletes unasked (``source_diff.needs_confirmation``:
those are held until ``graphrag-index --yes`` deletes them). A burst of changes becomes one run per contiguous range of
partition keys (new files are appended, so a burst of new files is one run), never one
per file. A file counts as seen only once its partition was read: a partition whose run
failed is requested again (at once, then with exponential backoff). Graph assets follow by
declarative automation; for deletions the sensor asks for the corpus graph itself, whose
build retracts the rows of removed sources.

The sensor never opens the DuckDB file (the indexer may hold it). The consistency pass
compares the files with the published snapshot, and looks at the live file only if no
one holds it, for corpora that are not done (``build_state.corpus_work``: an unpublished
build, a missing vector mirror, failed LLM calls) and requests what finishes them.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import duckdb
import polars as pl
from dagster import (
    AddDynamicPartitionsRequest,
    AssetKey,
    AutomationConditionSensorDefinition,
    DefaultSensorStatus,
    DeleteDynamicPartitionsRequest,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)
from dagster._core.storage.partition_status_cache import AssetPartitionStatus

from ..build_state import corpus_work
from ..core.inputs import InputError, corpus_folders, corpus_of_partition, discover_sources
from ..core.source_diff import SourcePlan, needs_confirmation, plan_sources
from ..settings import IndexSettings
from ..storage.connection import lock_holder
from ..storage.duckdb_store import IndexStore
from ..storage.snapshot import open_published, published_exists, read_pointer
from .jobs import GRAPH_ASSETS, build_graph_job, index_sources_job
from .partitions import RANGE_END_TAG, RANGE_START_TAG, contiguous_ranges, corpus_partitions, source_partitions

# The instance flag behind the UI's "Auto-materialize on/off" tag (dagster._daemon.asset_daemon).
# Unset reads as off, yet it pauses only the sensorless daemon (`auto_materialize: use_sensors:
# false`); here the graph's automation is the `graph_automation` sensor, running by default.
AUTOMATION_PAUSED_KEY = "ASSET_DAEMON_PAUSED"

FIRST_RETRY_SECONDS = 60.0  # a failed partition is retried at once, then 60 s later, doubling
LAST_RETRY_SECONDS = 3600.0


def _ranges_requests(ordered: list[str], wanted: set[str], run_key_prefix: str) -> list[RunRequest]:
    return [
        RunRequest(
            job_name=index_sources_job.name,
            run_key=f"{run_key_prefix}:{first}..{last}",
            tags={RANGE_START_TAG: first, RANGE_END_TAG: last},
        )
        for first, last in contiguous_ranges(ordered, wanted)
    ]


def _failed_to_retry(
    context: SensorEvaluationContext, registered: set[str], seen: dict[str, str], retries: dict[str, list[float]]
) -> list[str]:
    """Seen partitions whose latest run failed and whose retry is due; ``retries`` (key ->
    [attempts, not before]) is updated in place and forgets partitions read since."""
    statuses = (
        context.instance.get_status_by_partition(
            AssetKey("documents"), sorted(registered & set(seen)), source_partitions
        )
        or {}
    )
    due, now = [], time.time()
    for key in sorted(seen):
        if statuses.get(key) != AssetPartitionStatus.FAILED:
            retries.pop(key, None)
            continue
        attempts, not_before = retries.get(key, [0, 0.0])
        if now >= not_before:
            due.append(key)
            retries[key] = [attempts + 1, now + min(LAST_RETRY_SECONDS, FIRST_RETRY_SECONDS * 2**attempts)]
    return due


@sensor(
    jobs=[index_sources_job, build_graph_job],
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description=(
        "Adds, re-indexes and removes source partitions as files appear, change or disappear in GRAPHRAG_INPUT_DIR; "
        "retries a partition whose run failed."
    ),
)
def source_files_sensor(context: SensorEvaluationContext):
    cursors = context.instance.daemon_cursor_storage
    if AUTOMATION_PAUSED_KEY not in cursors.get_cursor_values({AUTOMATION_PAUSED_KEY}):
        cursors.set_cursor_values({AUTOMATION_PAUSED_KEY: "false"})  # once: the UI says "on"; a choice there stays
    settings = IndexSettings.from_env()
    try:
        on_disk = discover_sources(Path(settings.input_dir), settings.forced_corpus())
    except InputError as error:
        return SkipReason(str(error))
    real_folders: dict[str, Path] = {}  # resolved once per folder, for this tick only
    hashes = {source.partition_key: source.read_hash(real_folders) for source in on_disk}
    cursor = json.loads(context.cursor) if context.cursor else {}
    if "files" not in cursor:  # the cursor of older versions: the hashes alone
        cursor = {"files": cursor, "retries": {}}
    seen: dict[str, str] = cursor["files"]
    retries: dict[str, list[float]] = cursor["retries"]
    registered = context.instance.get_dynamic_partitions(source_partitions.name)  # read once: sets below, never per key
    registered_set = set(registered)
    for key in _failed_to_retry(context, registered_set, seen, retries):
        del seen[key]  # not seen after all: planned again below, as a changed file
    known = pl.DataFrame(
        {"source_partition": list(seen), "source_hash": list(seen.values()), "settings_hash": ["cursor"] * len(seen)},
        schema={"source_partition": pl.String, "source_hash": pl.String, "settings_hash": pl.String},
    )
    plan = plan_sources(
        on_disk, hashes, known, "cursor", folders=corpus_folders(Path(settings.input_dir), settings.forced_corpus())
    )
    held, why = _held_deletions(plan, seen, registered_set)
    for line in why:
        context.log.warning(line)
    # What is held stays in the cursor: it is judged again next tick, not taken as deleted.
    next_cursor = json.dumps({"files": hashes | {key: seen[key] for key in held}, "retries": retries}, sort_keys=True)
    if not plan.pending and not plan.deleted:
        return SensorResult(cursor=next_cursor, skip_reason="; ".join(["no file changed", *why]))

    deleted_set = set(plan.deleted)
    new_keys = sorted(s.partition_key for s in plan.pending if s.partition_key not in registered_set)
    ordered = [key for key in registered if key not in deleted_set] + new_keys
    corpora = {s.corpus for s in on_disk}
    new_corpora = sorted(corpora - set(context.instance.get_dynamic_partitions(corpus_partitions.name)))
    # Unique per change and per retry: Dagster launches a run key once.
    change_id = hash(next_cursor + json.dumps(seen, sort_keys=True)) & 0xFFFFFFFF
    requests = _ranges_requests(ordered, {s.partition_key for s in plan.pending}, f"sources-{change_id:08x}")
    # A corpus that only lost files needs its graph rebuilt here (the build retracts their
    # rows); with a file read too, automation follows that run and the build retracts them.
    for corpus in sorted({corpus_of_partition(key) for key in plan.deleted} - {s.corpus for s in plan.pending}):
        requests.append(
            RunRequest(job_name=build_graph_job.name, partition_key=corpus, run_key=f"retract-{change_id:08x}-{corpus}")
        )
    partition_requests = []
    if new_keys:
        partition_requests.append(AddDynamicPartitionsRequest(source_partitions.name, new_keys))
    if new_corpora:
        partition_requests.append(AddDynamicPartitionsRequest(corpus_partitions.name, new_corpora))
    deleted = [key for key in plan.deleted if key in registered_set]
    if deleted:
        partition_requests.append(DeleteDynamicPartitionsRequest(source_partitions.name, deleted))
    retried = sorted(set(retries) & {s.partition_key for s in plan.pending})
    context.log.info(
        f"{len(plan.added)} new, {len(plan.changed)} changed, {len(plan.deleted)} deleted file(s)"
        + (f" ({len(retried)} retried after a failed run)" if retried else "")
        + f": {len(requests)} run(s)"
    )
    return SensorResult(run_requests=requests, dynamic_partitions_requests=partition_requests, cursor=next_cursor)


def _held_deletions(plan: SourcePlan, seen: dict[str, str], registered: set[str]) -> tuple[list[str], list[str]]:
    """(the files the sensor does not delete although they are gone, why): those of a corpus
    whose folder vanished, and all deletions beyond what a pass deletes unasked (counted in
    files: the sensor never opens the index), taken out of ``plan.deleted``."""
    files_of = Counter(corpus_of_partition(key) for key in seen)
    gone: dict[str, list[str]] = {}
    for key in plan.deleted:
        gone.setdefault(corpus_of_partition(key), []).append(key)
    held = [key for key in plan.kept if key in registered]
    why = [
        f"corpus {corpus}: its folder is gone from the input; its sources are kept"
        for corpus in sorted({corpus_of_partition(key) for key in held})
    ]
    if needs_confirmation({corpus: len(keys) for corpus, keys in gone.items()}, files_of):
        why += [
            f"corpus {corpus}: {len(keys)} of {files_of[corpus]} file(s) gone, more than the sensor deletes unasked; "
            "kept until graphrag-index --yes deletes them"
            for corpus, keys in sorted(gone.items())
        ]
        held += [key for key in plan.deleted if key in registered]
        plan.deleted = []
    return held, why


graph_automation_sensor = AutomationConditionSensorDefinition(
    "graph_automation",
    target=GRAPH_ASSETS,
    default_status=DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description=(
        "Builds and publishes a corpus's graph after its sources were read (the graph assets' automation conditions)."
    ),
    # The condition compares the event log's storage ids in Python (defs/automation.py),
    # so it is evaluated where the code is, not in the daemon.
    use_user_code_server=True,
)


@sensor(
    jobs=[index_sources_job, build_graph_job],
    minimum_interval_seconds=3600,
    default_status=DefaultSensorStatus.RUNNING,
    description=(
        "Hourly consistency pass (and at once when the daemon starts): re-reads every registered source whose file "
        "differs from what the published index holds, and finishes every corpus that is not done (unpublished build, "
        "missing vectors, failed LLM calls)."
    ),
)
def consistency_sensor(context: SensorEvaluationContext):
    settings = IndexSettings.from_env()
    on_disk = discover_sources(Path(settings.input_dir), settings.forced_corpus())
    registered = context.instance.get_dynamic_partitions(source_partitions.name)
    registered_set = set(registered)
    on_disk = [s for s in on_disk if s.partition_key in registered_set]  # adding files is the sensor's job
    stamp = time.strftime("%Y%m%dT%H%M%S")
    stale: set[str] = set()
    pointer = read_pointer(settings.location())
    if published_exists(pointer):
        with open_published(pointer) as connection:
            indexed = connection.execute("SELECT source_partition, source_hash, settings_hash FROM sources").pl()
        real_folders: dict[str, Path] = {}  # resolved once per folder, for this pass only
        hashes = {s.partition_key: s.read_hash(real_folders) for s in on_disk}
        # Settings hashes are compared by graphrag-index; here only the bytes matter, and whether
        # the source was completely indexed (a settings hash: status extracted, also in snapshots
        # older than the status column; NULL: read again).
        complete = pl.when(pl.col("settings_hash").is_not_null()).then(pl.lit("any"))
        stale = {
            s.partition_key
            for s in plan_sources(on_disk, hashes, indexed.with_columns(complete.alias("settings_hash")), "any").pending
        }
    requests = _ranges_requests(registered, stale, f"consistency-{stamp}")
    unfinished = {}
    if settings.location().exists():
        try:
            with IndexStore(settings.location(), read_only=True, lock_wait_seconds=0) as store:
                unfinished = corpus_work(
                    store, settings, {s.corpus for s in on_disk} - {corpus_of_partition(key) for key in stale}
                )
        except duckdb.IOException as error:
            context.log.info(
                f"the live index is held by {lock_holder(error)}: unfinished corpora are looked at next time"
            )
    for corpus, work in sorted(unfinished.items()):
        context.log.info(f"corpus {corpus}: {work.reason}")
        selection = [AssetKey(name) for name in work.assets] if work.assets else None
        requests.append(
            RunRequest(
                job_name=build_graph_job.name,
                partition_key=corpus,
                run_key=f"consistency-{stamp}-{corpus}",
                asset_selection=selection,
            )
        )
    return requests or SkipReason("every source matches the published index and every corpus is done")
