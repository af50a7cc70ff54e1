"""The per-source asset: documents, one partition per input file.

A single-run backfill policy makes a first index of thousands of files one run, not one
run per file. A file that cannot be read is reported (log, ``source_errors`` table,
failed check) and its previously indexed rows stay as they were; the other files of the
run are indexed.

A source's row in the ``sources`` table says how far it got (``status``): ``read`` once its
file is read (again), ``extracted`` with the reading fingerprint it was indexed with once
the corpus's graph build has chunked it and extracted every one of its text units,
``failed`` when a text unit's LLM call failed (the next build extracts it again).
"""

import time

from dagster import (
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
    asset,
)

from ...fingerprints import code_version
from ...settings import IndexSettings
from ...stages.sources import read_sources
from ..checks import SOURCES_READABLE, sources_readable
from ..metadata import markdown_preview, table_schema_metadata
from ..resources import IndexDatabase
from .shared import SOURCE_ASSET_OPTIONS


def add_metadata_per_partition(context: AssetExecutionContext, metadata_by_partition: dict[str, dict]) -> None:
    """``context.add_asset_metadata(metadata, partition_key=key)`` for every partition of the
    run at once. Dagster's call loads every partition key of the instance to check the one
    given and copies all the metadata added before, so one call per partition is quadratic
    (hours for a first index of 20,000 files); these keys are the run's own."""
    from dagster._core.execution.context.metadata_logging import AssetMetadataHandle, OutputMetadataAccumulator

    step = context.op_execution_context._step_execution_context
    added = {
        AssetMetadataHandle(asset_key=context.asset_key, partition_key=key): metadata
        for key, metadata in metadata_by_partition.items()
    }
    step._metadata_accumulator = OutputMetadataAccumulator(
        per_output_metadata={**step._metadata_accumulator.per_output_metadata, **added}
    )


@asset(
    **SOURCE_ASSET_OPTIONS,
    code_version=code_version("reading", "documents"),
    description="Documents read from each input file (one per .txt/.md file, one per row of CSV/JSONL/Parquet).",
    check_specs=[SOURCES_READABLE],
)
def documents(context: AssetExecutionContext, settings: IndexSettings, database: IndexDatabase) -> MaterializeResult:
    started = time.perf_counter()
    with database.store() as store:
        store.ensure_schema()
        done = read_sources(store, settings, list(context.partition_keys), context.log)
        read, errors = done.documents, done.errors
        # A run of many partitions makes one materialization per partition: each gets its own
        # rows (an unreadable source keeps its previously indexed ones), the run's totals are
        # named as such.
        indexed = dict(
            store.read(
                "SELECT source_partition, count(*) AS n FROM documents "
                "WHERE source_partition IN (SELECT unnest(?)) GROUP BY 1",
                [context.partition_keys],
            ).iter_rows()
        )
        read_by_source = read.partition_by("source_partition", as_dict=True)
        error_of = {e["source_partition"]: e["error"] for e in errors}
        add_metadata_per_partition(
            context,
            {
                key: {
                    "dagster/row_count": indexed.get(key, 0),
                    "preview": MetadataValue.md(
                        markdown_preview(read_by_source.get((key,), read.clear()), ["title", "source_path", "text"])
                    ),
                }
                | ({"unreadable": error_of[key]} if key in error_of else {})
                for key in context.partition_keys
            },
        )
        return MaterializeResult(
            metadata=table_schema_metadata("documents")
            | {
                "sources_in_run": len(context.partition_keys),
                "documents_read_in_run": read.height,
                "unreadable_sources_in_run": len(errors),
                "seconds_of_run": time.perf_counter() - started,
            },
            check_results=[sources_readable(errors)],
        )
