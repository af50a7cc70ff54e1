"""Per-source assets: documents -> text_units -> extractions.

Partitioned by input file. A single-run backfill policy makes a first index of
thousands of files one run, not one run per file. A file that cannot be read is
reported (log, ``source_errors`` table, failed check) and its previously indexed rows
stay as they were; the other files of the run are indexed.
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
from ...core.extraction.llm import extract_with_llm
from ...core.extraction.offline import extract_offline
from ...core.ids import keep_short_ids
from ...core.inputs import InputError, SourceFile, read_source
from ...fingerprints import source_settings_hash
from ...llm.prompts import prompts_version
from ...llm.resources import CLAIM_PROMPT, SOURCE_PROMPTS, LLMResource
from ...settings import IndexSettings
from ...storage.schema import LLM_FAILURE_COLUMNS, SOURCE_COLUMNS, SOURCE_ERROR_COLUMNS, TABLES
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
        with store.transaction() as tx:
            tx.replace("text_units", units, context.partition_keys)
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


@asset(
    **SOURCE_ASSET_OPTIONS,
    deps=[text_units],
    code_version=f"extractions-v2-{prompts_version(*SOURCE_PROMPTS, CLAIM_PROMPT)}",
    description=(
        "Per-text-unit entity and relationship records: by the LLM when GRAPHRAG_LLM_MODEL is set "
        "(structured extraction plus gleaning), otherwise offline (proper nouns and noun phrases for "
        "English, jieba part-of-speech for Chinese). With GRAPHRAG_LLM_CLAIMS, also the claims of each "
        "text unit (table covariates). Also marks each source as fully indexed."
    ),
    check_specs=[
        AssetCheckSpec("extraction_calls_succeeded", asset="extractions", description="No text unit's LLM extraction (or claim) call failed.")
    ],
)
def extractions(context: AssetExecutionContext, settings: IndexSettings, llm: LLMResource) -> MaterializeResult:
    started = time.perf_counter()
    with settings.store() as store:
        store.ensure_schema()
        units = store.read_table("text_units", "source_partition", context.partition_keys)
        llm_settings = llm.get_settings()
        failures = pl.DataFrame(schema=LLM_FAILURE_COLUMNS)
        claims = pl.DataFrame(schema=TABLES["covariates"].columns)
        if llm_settings.enabled:
            with llm.session(store) as session:
                extracted_entities, extracted_relationships, claims, failed = extract_with_llm(
                    session.client,
                    units,
                    llm_settings.entity_type_list(),
                    llm_settings.gleanings,
                    llm_settings.claim_description if llm_settings.claims else None,
                )
            # Claims already indexed keep their short numbers (reports and answers cite them).
            claims = keep_short_ids(claims, store.short_ids("covariates", units["corpus"].unique().to_list()))
            scopes = dict(zip(units["id"], units["source_partition"]))
            failures = failed.with_columns(
                pl.col("item_id").replace_strict(scopes, return_dtype=pl.String).alias("scope"), pl.lit(_now()).alias("recorded_at")
            ).select(list(LLM_FAILURE_COLUMNS))
            for failure in failures.iter_rows(named=True):
                context.log.error(f"LLM {failure['stage']} failed for text unit {failure['item_id']} of {failure['scope']}: {failure['error']}")
            method = {"method": f"llm ({llm_settings.model_for('extraction')})"} | session.usage.metadata(llm_settings)
        else:
            extracted_entities, extracted_relationships = extract_offline(units)
            method = {"method": "offline (rule-based English, jieba Chinese); no LLM calls", "llm_calls": 0}
        # A source with a failed text unit is not complete: it keeps no `sources` row, so the
        # next pass retries it (only the failed calls: the others are cached).
        failed_sources = set(failures["scope"].to_list())
        indexed = store.read(
            "SELECT d.corpus, d.source_partition, any_value(d.source_path) AS source_path, any_value(d.source_hash) AS source_hash, "
            "count(DISTINCT d.id) AS documents, count(t.id) AS text_units "
            "FROM documents d LEFT JOIN text_units t ON t.document_id = d.id "
            "WHERE d.source_partition IN (SELECT unnest(?)) GROUP BY d.corpus, d.source_partition",
            [[key for key in context.partition_keys if key not in failed_sources]],
        ).with_columns(pl.lit(source_settings_hash(settings, llm)).alias("settings_hash"), pl.lit(_now()).alias("indexed_at"))
        with store.transaction() as tx:
            tx.replace("extracted_entities", extracted_entities, context.partition_keys)
            tx.replace("extracted_relationships", extracted_relationships, context.partition_keys)
            tx.replace("covariates", claims, context.partition_keys)
            tx.replace("sources", indexed.select(list(SOURCE_COLUMNS)), context.partition_keys)
            tx.replace("llm_failures", failures, context.partition_keys)
        return MaterializeResult(
            metadata=method
            | {
                "entity_records": extracted_entities.height,
                "relationship_records": extracted_relationships.height,
                "claims": claims.height,
                "text_units": units.height,
                "failed_text_units": failures["item_id"].n_unique(),
                "seconds": time.perf_counter() - started,
                "preview": table_metadata("extracted_entities", extracted_entities, ["title", "type", "description"])["preview"],
            },
            check_results=[
                AssetCheckResult(
                    check_name="extraction_calls_succeeded",
                    passed=failures.is_empty(),
                    severity=AssetCheckSeverity.ERROR,
                    metadata={"failed": MetadataValue.md("\n".join(f"- {f['scope']} / {f['stage']} / {f['item_id']}: {f['error']}" for f in failures.iter_rows(named=True)) or "none")},
                )
            ],
        )
