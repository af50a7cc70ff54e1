"""Per-source assets: documents -> text_units.

Partitioned by input file. A single-run backfill policy makes a first index of
thousands of files one run, not one run per file. A file that cannot be read is
reported (log, ``source_errors`` table, failed check) and its previously indexed rows
stay as they were; the other files of the run are indexed.

A source's row in the ``sources`` table says how far it got: none while its file is
being read, ``settings_hash`` NULL once chunked, the extraction settings once the
corpus's ``extractions`` step has extracted every one of its text units.
"""


import datetime as dt
import time

import polars as pl
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    BackfillPolicy,
    MaterializeResult,
    MetadataValue,
    asset,
)

from ...core.chunking import chunk_documents
from ...core.ids import keep_short_ids
from ...core.inputs import InputError, SourceFile, read_source
from ...settings import IndexSettings
from ...storage.schema import SOURCE_COLUMNS, SOURCE_ERROR_COLUMNS, TABLES
from ..metadata import table_metadata
from ..partitions import DUCKDB_POOL, source_partitions

SOURCE_ASSET_OPTIONS = dict(
    partitions_def=source_partitions,
    backfill_policy=BackfillPolicy.single_run(),
    pool=DUCKDB_POOL,
    group_name="sources",
    kinds={"duckdb", "polars"},
)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _read_partition(settings: IndexSettings, key: str) -> pl.DataFrame:
    corpus, relative_path = key.split("/", 1)
    source = SourceFile(corpus, relative_path, settings.source_path(corpus, relative_path))
    try:
        return read_source(source, settings.table_columns())
    except OSError as error:
        raise InputError(key, f"cannot read file {source.path} ({error.strerror or error})") from None


@asset(
    **SOURCE_ASSET_OPTIONS,
    code_version="documents-v1",
    description="Documents read from each input file (one per .txt/.md file, one per row of CSV/JSONL/Parquet).",
    check_specs=[AssetCheckSpec("sources_readable", asset="documents", description="Every source file of the run could be read.")],
)
def documents(context: AssetExecutionContext, settings: IndexSettings) -> MaterializeResult:
    started = time.perf_counter()
    with settings.store() as store:
        store.ensure_schema()
        frames, errors = [], []
        for key in context.partition_keys:
            try:
                frames.append(_read_partition(settings, key))
            except InputError as error:
                context.log.error(f"Skipping source {error}; its previously indexed rows are kept.")
                errors.append({"corpus": key.split("/", 1)[0], "source_partition": key, "source_path": key.split("/", 1)[1], "error": str(error), "recorded_at": _now()})
        read = pl.concat(frames) if frames else pl.DataFrame(schema=TABLES["documents"].columns)
        readable = [key for key in context.partition_keys if key not in {e["source_partition"] for e in errors}]
        read = keep_short_ids(read, store.short_ids("documents", read["corpus"].unique().to_list()))
        with store.transaction() as tx:
            tx.replace("documents", read, readable)
            # Read again, so not indexed until chunked and extracted again.
            tx.replace("sources", pl.DataFrame(schema=SOURCE_COLUMNS), readable)
            tx.replace("source_errors", pl.DataFrame(errors, schema=SOURCE_ERROR_COLUMNS), context.partition_keys)
        return MaterializeResult(
            metadata=table_metadata("documents", read, ["title", "source_path", "text"])
            | {"sources": len(context.partition_keys), "unreadable_sources": len(errors), "seconds": time.perf_counter() - started},
            check_results=[
                AssetCheckResult(
                    check_name="sources_readable",
                    passed=not errors,
                    severity=AssetCheckSeverity.ERROR,
                    metadata={"unreadable": MetadataValue.md("\n".join(f"- {e['error']}" for e in errors) or "none")},
                )
            ],
        )


@asset(
    **SOURCE_ASSET_OPTIONS,
    deps=[documents],
    code_version="text_units-v1",
    description="Token chunks of every document (tiktoken cl100k_base, offline).",
    check_specs=[AssetCheckSpec("text_units_belong_to_documents", asset="text_units", description="Every text unit's document_id is a document.")],
)
def text_units(context: AssetExecutionContext, settings: IndexSettings) -> MaterializeResult:
    started = time.perf_counter()
    with settings.store() as store:
        store.ensure_schema()
        docs = store.read_table("documents", "source_partition", context.partition_keys)
        units = chunk_documents(docs, settings.chunking()).with_columns(
            pl.lit([], pl.List(pl.String)).alias("entity_ids"), pl.lit([], pl.List(pl.String)).alias("relationship_ids")
        )
        units = keep_short_ids(units, store.short_ids("text_units", units["corpus"].unique().to_list()))
        # Sources read again lost their row (documents); the others (unreadable files keep
        # their indexed rows, a re-run of this step alone) keep theirs.
        still_indexed = store.read("SELECT source_partition FROM sources WHERE source_partition IN (SELECT unnest(?))", [context.partition_keys])
        chunked = (
            docs.filter(~pl.col("source_partition").is_in(still_indexed["source_partition"].implode()))
            .group_by("corpus", "source_partition")
            .agg(pl.col("source_path").first(), pl.col("source_hash").first(), pl.col("id").n_unique().alias("documents"))
            .join(units.group_by("source_partition").agg(pl.len().alias("text_units")), on="source_partition", how="left")
            .with_columns(pl.col("text_units").fill_null(0), pl.lit(None, pl.String).alias("settings_hash"), pl.lit(_now()).alias("indexed_at"))
        )
        with store.transaction() as tx:
            tx.replace("text_units", units, context.partition_keys)
            tx.replace("sources", chunked.select(list(SOURCE_COLUMNS)), chunked["source_partition"].to_list())
        orphans = store.read(
            "SELECT t.id FROM text_units t ANTI JOIN documents d ON t.document_id = d.id "
            "WHERE t.source_partition IN (SELECT unnest(?))",
            [context.partition_keys],
        )
        return MaterializeResult(
            metadata=table_metadata("text_units", units, ["id", "n_tokens", "text"])
            | {"documents": docs.height, "tokens": int(units["n_tokens"].sum() or 0), "seconds": time.perf_counter() - started},
            check_results=[
                AssetCheckResult(check_name="text_units_belong_to_documents", passed=orphans.is_empty(), metadata={"orphans": orphans.height})
            ],
        )
