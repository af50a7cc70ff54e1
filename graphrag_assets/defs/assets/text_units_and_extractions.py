"""The first steps of a corpus's graph build: chunking and extraction of the sources read
since the last build.

One step each per corpus, not one per source file: ``text_units`` chunks every source
read since the last build (new and changed files), and ``extractions`` extracts their
text units, and those of sources with a failed text unit, all at the LLM's concurrency;
the steps after them follow in the same run. When the chunker's or the extractor's
fingerprint (its code version and settings, ``fingerprints``) differs from the last
build's, or the run config asks for a rebuild, the step redoes every source of the corpus
instead. Steps per source file would cost Dagster's bookkeeping per file and asset
(docs/architecture.md, "Partitioning").
"""

import time

import polars as pl
from dagster import (
    AssetDep,
    AssetExecutionContext,
    MaterializeResult,
    asset,
)

from graphrag_common.ids import keep_short_ids

from ...core.chunking import chunk_documents
from ...core.extraction.offline import extract_offline
from ...core.inputs import given_title
from ...fingerprints import code_version, current_fingerprints
from ...llm.errors import failure_frame
from ...llm_stages.extraction import extract_with_llm
from ...settings import IndexSettings
from ...storage.schema import SOURCE_COLUMNS, TABLES
from ..automation import FOLLOW_SOURCES
from ..checks import (
    EXTRACTION_CALLS_SUCCEEDED,
    TEXT_UNITS_BELONG_TO_DOCUMENTS,
    calls_succeeded,
    text_units_belong_to_documents,
)
from ..metadata import table_metadata, tables_metadata
from ..partitions import ALL_SOURCES
from ..resources import IndexDatabase, LLMResource
from .shared import (
    GRAPH_ASSET_OPTIONS,
    RebuildConfig,
    failure_rows,
    retract_deleted_sources,
    utc_now,
    why_redo_everything,
)

EXTRACTION_TABLES = ["extracted_entities", "extracted_relationships", "covariates"]


@asset(
    deps=[AssetDep("documents", partition_mapping=ALL_SOURCES)],
    code_version=code_version("chunking", "text_units"),
    description="Token chunks of the documents read since the last build (tiktoken cl100k_base, offline).",
    kinds={"duckdb", "polars"},
    check_specs=[TEXT_UNITS_BELONG_TO_DOCUMENTS],
    automation_condition=FOLLOW_SOURCES,
    **GRAPH_ASSET_OPTIONS,
)
def text_units(
    context: AssetExecutionContext, config: RebuildConfig, settings: IndexSettings, database: IndexDatabase
) -> MaterializeResult:
    started = time.perf_counter()
    corpus = context.partition_key
    with database.store() as store:
        store.ensure_schema()
        retract_deleted_sources(context, store, corpus)
        if why_redo_everything(context, store, settings, "chunking", config):
            to_chunk = store.read(
                "SELECT DISTINCT source_partition FROM documents WHERE corpus = ? ORDER BY 1", [corpus]
            )["source_partition"].to_list()
        else:
            to_chunk = store.sources_not_extracted(corpus).filter(~pl.col("chunked"))["source_partition"].to_list()
        docs = store.read_table("documents", "source_partition", to_chunk)
        units = chunk_documents(docs, settings.chunking()).with_columns(
            pl.lit([], pl.List(pl.String)).alias("entity_ids"), pl.lit([], pl.List(pl.String)).alias("relationship_ids")
        )
        units = keep_short_ids(units, store.short_ids("text_units", [corpus]))
        chunked = (
            docs.group_by("corpus", "source_partition")
            .agg(
                pl.col("source_path").first(), pl.col("source_hash").first(), pl.col("id").n_unique().alias("documents")
            )
            .join(
                units.group_by("source_partition").agg(pl.len().alias("text_units")), on="source_partition", how="left"
            )
            .with_columns(
                pl.col("text_units").fill_null(0),
                pl.lit(None, pl.String).alias("settings_hash"),
                pl.lit(utc_now()).alias("indexed_at"),
            )
        )
        with store.transaction() as tx:
            tx.replace("text_units", units, to_chunk)
            tx.replace("sources", chunked.select(list(SOURCE_COLUMNS)), to_chunk)
        return MaterializeResult(
            metadata=table_metadata("text_units", units, ["id", "n_tokens", "text"])
            | {
                "sources_chunked": len(to_chunk),
                "documents": docs.height,
                "tokens": int(units["n_tokens"].sum() or 0),
                "seconds": time.perf_counter() - started,
            },
            check_results=[text_units_belong_to_documents(store, corpus)],
        )


@asset(
    deps=[text_units],
    code_version=code_version("extraction", "extractions"),
    description=(
        "Per-text-unit entity and relationship records of the sources not yet extracted: by the LLM "
        "when GRAPHRAG_LLM_MODEL is set (structured extraction plus gleaning), otherwise offline (proper "
        "nouns and noun phrases for English, jieba part-of-speech for Chinese). With GRAPHRAG_LLM_CLAIMS, "
        "also the claims of each text unit (table covariates). Marks each source fully indexed."
    ),
    kinds={"duckdb", "polars"},
    check_specs=[EXTRACTION_CALLS_SUCCEEDED],
    automation_condition=FOLLOW_SOURCES,
    **GRAPH_ASSET_OPTIONS,
)
def extractions(
    context: AssetExecutionContext,
    config: RebuildConfig,
    settings: IndexSettings,
    database: IndexDatabase,
    llm: LLMResource,
) -> MaterializeResult:
    started = time.perf_counter()
    corpus = context.partition_key
    with database.store() as store:
        store.ensure_schema()
        retract_deleted_sources(context, store, corpus)
        waiting = store.sources_not_extracted(corpus)
        if why_redo_everything(context, store, settings, "extraction", config):
            pending = store.read("SELECT source_partition FROM sources WHERE corpus = ? ORDER BY 1", [corpus])[
                "source_partition"
            ].to_list()
        else:
            pending = waiting.filter("chunked")["source_partition"].to_list()
        unchunked = waiting.filter(~pl.col("chunked"))["source_partition"].to_list()
        if unchunked:
            context.log.warning(
                f"{len(unchunked)} source(s) read but not chunked yet, left for text_units: {unchunked[:10]}"
            )
        units = store.read_table("text_units", "source_partition", pending)
        llm_settings = llm.get_settings()
        failures = failure_rows(failure_frame([]), "")
        claims = pl.DataFrame(schema=TABLES["covariates"].columns)
        if llm_settings.enabled:
            with llm.session(store, corpus, context.run.run_id) as session:
                extracted_entities, extracted_relationships, claims, failed = extract_with_llm(
                    session.client,
                    units,
                    llm_settings.entity_type_list(),
                    llm_settings.gleanings,
                    llm_settings.claim_description if llm_settings.claims else None,
                )
            # Claims already indexed keep their short numbers (reports and answers cite them).
            claims = keep_short_ids(claims, store.short_ids("covariates", [corpus]))
            scopes = dict(zip(units["id"], units["source_partition"]))
            failures = failure_rows(failed, pl.col("item_id").replace_strict(scopes, return_dtype=pl.String))
            for failure in failures.iter_rows(named=True):
                context.log.error(
                    f"LLM {failure['stage']} failed for text unit {failure['item_id']} of {failure['scope']}: "
                    f"{failure['error']}"
                )
            method = {"method": f"llm ({llm_settings.model_for('extraction')})"} | session.usage.metadata()
        else:
            # A document's given title is an entity of each of its text units.
            documents = store.read_table("documents", "source_partition", pending).select("id", "title", "source_path")
            titles = {
                row["id"]: title
                for row in documents.iter_rows(named=True)
                if (title := given_title(row["title"], row["source_path"]))
            }
            extracted_entities, extracted_relationships = extract_offline(units, titles)
            method = {"method": "offline (rule-based English, jieba Chinese); no LLM calls", "llm_calls": 0}
        # A source with a failed text unit stays (or, extracted again, becomes) not extracted,
        # so the next build retries it (only the failed calls: the others are cached).
        failed_sources = sorted(set(failures["scope"].to_list()))
        extracted = sorted(set(pending) - set(failed_sources))
        with store.transaction() as tx:
            tx.replace("extracted_entities", extracted_entities, pending)
            tx.replace("extracted_relationships", extracted_relationships, pending)
            tx.replace("covariates", claims, pending)
            tx.replace("llm_failures", failures, pending)
            tx.execute(
                "UPDATE sources SET settings_hash = NULL WHERE source_partition IN (SELECT unnest(?))", [failed_sources]
            )
            tx.execute(
                "UPDATE sources SET settings_hash = ?, indexed_at = now() WHERE source_partition IN (SELECT unnest(?))",
                [str(current_fingerprints(settings)["reading"]), extracted],
            )
        # The asset is the corpus's extraction records, not only this run's.
        corpus_rows = {
            name: store.read(f"SELECT count(*) AS n FROM {name} WHERE corpus = ?", [corpus])["n"][0]
            for name in EXTRACTION_TABLES
        }
        return MaterializeResult(
            metadata=method
            | tables_metadata(corpus_rows)
            | {
                "sources_extracted": len(extracted),
                "sources_with_failures": len(pending) - len(extracted),
                "sources_read_not_chunked": len(unchunked),
                "entity_records": extracted_entities.height,
                "relationship_records": extracted_relationships.height,
                "claims": claims.height,
                "text_units": units.height,
                "failed_text_units": failures["item_id"].n_unique(),
                "seconds": time.perf_counter() - started,
                "preview": table_metadata("extracted_entities", extracted_entities, ["title", "type", "description"])[
                    "preview"
                ],
            },
            check_results=[calls_succeeded(EXTRACTION_CALLS_SUCCEEDED, failures)],
        )
