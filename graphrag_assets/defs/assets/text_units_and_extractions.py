"""The first steps of a corpus's graph build: chunking and extraction of the sources read
since the last build, split into shards when the index admits several writers.

One graph of three steps makes both assets, ``text_units`` and ``extractions``:

- ``plan_chunking_and_extraction`` retracts deleted sources and finds what to chunk (new and
  changed files) and what to extract (those, and sources with a failed text unit). On an
  index with one writer, or when the work is too small to be worth a process
  (``core/shards.py``), it does the work itself; otherwise it hands out shards.
- ``chunk_and_extract_shard``, one step per shard (a process each with the multiprocess
  executor), chunks and extracts its sources and writes their rows, in batches of bounded
  size: what a step holds in memory is bounded by its batch, not by the corpus.
- ``record_text_units_and_extractions`` evaluates the checks and writes both assets'
  metadata for the corpus.

When the chunker's or the extractor's fingerprint (its code version and settings,
``fingerprints``) differs from the last build's, or the run config asks for a rebuild, the
steps redo every source of the corpus instead. Steps per source file would cost Dagster's
bookkeeping per file and asset (docs/architecture.md, "Partitioning").
"""

import os

import polars as pl
from dagster import (
    AssetKey,
    AssetsDefinition,
    Config,
    DynamicOut,
    DynamicOutput,
    GraphIn,
    GraphOut,
    In,
    MetadataValue,
    Nothing,
    OpExecutionContext,
    Out,
    Output,
    graph,
    op,
)
from pydantic import Field

from ...core.shards import balanced_shards
from ...fingerprints import code_version
from ...settings import IndexSettings
from ...stages.extraction import ShardDone, ShardWork, chunk_and_extract, work_of_corpus
from ..automation import FOLLOW_SOURCES
from ..checks import (
    EXTRACTION_CALLS_SUCCEEDED,
    TEXT_UNITS_BELONG_TO_DOCUMENTS,
    calls_succeeded,
    text_units_belong_to_documents,
)
from ..jobs import STEP_RETRIES
from ..metadata import markdown_preview, table_metadata, tables_metadata
from ..partitions import ALL_SOURCES, DUCKDB_POOL
from ..resources import IndexDatabase, LLMResource
from .shared import (
    CHUNKING_AND_EXTRACTION,
    CHUNKING_AND_EXTRACTION_PLAN,
    GRAPH_ASSET_OPTIONS,
    methods_of,
    retract_deleted_sources,
    why_redo_everything,
)

EXTRACTION_TABLES = ["extracted_entities", "extracted_relationships", "covariates"]


class ChunkingAndExtractionConfig(Config):
    """Run config of the plan step (``graphrag-index --rebuild chunking|extraction``)."""

    rebuild_chunking: bool = Field(default=False, description="Chunk every source of the corpus again.")
    rebuild_extraction: bool = Field(default=False, description="Extract every source of the corpus again.")


@op(
    name=CHUNKING_AND_EXTRACTION_PLAN,
    ins={"documents": In(Nothing)},
    out={"shards": DynamicOut(ShardWork), "done_here": Out(ShardDone)},
    pool=DUCKDB_POOL,
    retry_policy=STEP_RETRIES,
    description="Retract deleted sources, find what to chunk and extract, and do it here or hand out shards.",
)
def plan_chunking_and_extraction(
    context: OpExecutionContext,
    config: ChunkingAndExtractionConfig,
    settings: IndexSettings,
    database: IndexDatabase,
    llm: LLMResource,
):
    corpus = context.partition_key
    with database.store() as store:
        store.ensure_schema()
        retract_deleted_sources(context, store, corpus)
        work = work_of_corpus(
            store,
            corpus,
            bool(why_redo_everything(context, store, settings, "chunking", config.rebuild_chunking)),
            bool(why_redo_everything(context, store, settings, "extraction", config.rebuild_extraction)),
        )
        count = settings.shards_for(sum(work.characters.values()))
        if count == 1:
            done = chunk_and_extract(store, settings, methods_of(context, settings, llm).extraction, context.log, work)
            yield Output(done, "done_here")
            return
    chunk_set = set(work.to_chunk)
    sizes = pl.DataFrame(
        list(work.characters.items()), schema={"source_partition": pl.String, "characters": pl.Int64}, orient="row"
    )
    shards = balanced_shards(sizes, count)
    context.log.info(
        f"{len(work.to_chunk) + len(work.to_extract)} source(s) to chunk or extract in {len(shards)} shards"
    )
    for number, members in enumerate(shards):
        share = ShardWork(
            corpus,
            [s for s in members if s in chunk_set],
            [s for s in members if s not in chunk_set],
            {s: work.characters[s] for s in members},
        )
        yield DynamicOutput(share, output_name="shards", mapping_key=f"shard_{number}")
    yield Output(ShardDone(), "done_here")


@op(description="Chunk and extract one shard's sources and write their rows.", retry_policy=STEP_RETRIES)
def chunk_and_extract_shard(
    context: OpExecutionContext, work: ShardWork, settings: IndexSettings, database: IndexDatabase, llm: LLMResource
) -> ShardDone:
    with database.store() as store:
        # The shards share the machine's cores: DuckDB's threads (one per core by default)
        # would otherwise outnumber them and spin waiting for each other.
        threads = max(1, (os.cpu_count() or 1) // settings.parallel_shards())
        store.open_connection.execute(f"SET threads = {threads}")
        return chunk_and_extract(store, settings, methods_of(context, settings, llm).extraction, context.log, work)


@op(
    ins={"done_here": In(ShardDone), "shards_done": In(list[ShardDone])},
    out={
        "text_units": Out(Nothing),
        "extractions": Out(Nothing),
        "text_units_text_units_belong_to_documents": Out(Nothing),
        "extractions_extraction_calls_succeeded": Out(Nothing),
    },
    pool=DUCKDB_POOL,
    retry_policy=STEP_RETRIES,
    description="Check what the shards wrote and describe both assets.",
)
def record_text_units_and_extractions(
    context: OpExecutionContext, done_here: ShardDone, shards_done: list[ShardDone], database: IndexDatabase
):
    corpus = context.partition_key
    done = done_here
    for shard in shards_done:
        done = done.plus(shard)
    with database.store() as store:
        units_preview = store.read(
            "SELECT id, n_tokens, text FROM text_units WHERE corpus = ? ORDER BY human_readable_id DESC LIMIT 5",
            [corpus],
        )
        text_unit_rows = store.read("SELECT count(*) AS n FROM text_units WHERE corpus = ?", [corpus])["n"][0]
        # The asset is the corpus's extraction records, not only this run's.
        corpus_rows = {
            name: store.read(f"SELECT count(*) AS n FROM {name} WHERE corpus = ?", [corpus])["n"][0]
            for name in EXTRACTION_TABLES
        }
        entity_preview = store.read(
            "SELECT title, type, description FROM extracted_entities WHERE corpus = ? LIMIT 5", [corpus]
        )
        orphans = text_units_belong_to_documents(store, corpus)
    shards = {"shards": max(len(shards_done), 1)}
    yield Output(
        None,
        "text_units",
        metadata=table_metadata("text_units", units_preview, ["id", "n_tokens", "text"])
        | {
            "dagster/row_count": int(text_unit_rows),
            "sources_chunked": done.sources_chunked,
            "documents": done.documents,
            "tokens": done.tokens,
            "seconds": done.seconds,
        }
        | shards,
    )
    yield orphans
    yield Output(
        None,
        "extractions",
        metadata=(done.method or {"method": "nothing to extract", "llm_calls": 0})
        | tables_metadata(corpus_rows)
        | {
            "sources_extracted": done.sources_extracted,
            "sources_with_failures": done.failures["scope"].n_unique(),
            "entity_records": done.entity_records,
            "relationship_records": done.relationship_records,
            "claims": done.claims,
            "text_units": done.text_units_extracted,
            "failed_text_units": done.failures["item_id"].n_unique(),
            "seconds": done.seconds,
            "preview": MetadataValue.md(markdown_preview(entity_preview, ["title", "type", "description"])),
        }
        | shards,
    )
    yield calls_succeeded(EXTRACTION_CALLS_SUCCEEDED, done.failures)


CHECK_OUTPUTS = ("text_units_text_units_belong_to_documents", "extractions_extraction_calls_succeeded")


@graph(
    name=CHUNKING_AND_EXTRACTION,
    ins={"documents": GraphIn(description="The source files read.")},
    out={name: GraphOut() for name in ("text_units", "extractions", *CHECK_OUTPUTS)},
)
def chunking_and_extraction(documents):
    shards, done_here = plan_chunking_and_extraction(documents)
    shards_done = shards.map(chunk_and_extract_shard).collect()
    text_units, extractions, text_units_check, extractions_check = record_text_units_and_extractions(
        done_here, shards_done
    )
    return {
        "text_units": text_units,
        "extractions": extractions,
        "text_units_text_units_belong_to_documents": text_units_check,
        "extractions_extraction_calls_succeeded": extractions_check,
    }


KINDS = {"dagster/kind/duckdb": "", "dagster/kind/polars": ""}
text_units_and_extractions = AssetsDefinition.from_graph(
    chunking_and_extraction,
    keys_by_input_name={"documents": AssetKey("documents")},
    keys_by_output_name={"text_units": AssetKey("text_units"), "extractions": AssetKey("extractions")},
    internal_asset_deps={"text_units": {AssetKey("documents")}, "extractions": {AssetKey("text_units")}},
    partitions_def=GRAPH_ASSET_OPTIONS["partitions_def"],
    partition_mappings={"documents": ALL_SOURCES},
    group_name=GRAPH_ASSET_OPTIONS["group_name"],
    descriptions_by_output_name={
        "text_units": "Token chunks of the documents read since the last build (tiktoken cl100k_base, offline).",
        "extractions": (
            "Per-text-unit entity and relationship records of the sources not yet extracted: by the LLM "
            "when GRAPHRAG_LLM_MODEL is set (structured extraction plus gleaning), otherwise offline (proper "
            "nouns and noun phrases for English, jieba part-of-speech for Chinese). With GRAPHRAG_LLM_CLAIMS, "
            "also the claims of each text unit (table covariates). Marks each source fully indexed."
        ),
    },
    tags_by_output_name={"text_units": KINDS, "extractions": KINDS},
    automation_conditions_by_output_name={"text_units": FOLLOW_SOURCES, "extractions": FOLLOW_SOURCES},
    code_versions_by_output_name={
        "text_units": code_version("chunking", "text_units"),
        "extractions": code_version("extraction", "extractions"),
    },
    check_specs=[TEXT_UNITS_BELONG_TO_DOCUMENTS, EXTRACTION_CALLS_SUCCEEDED],
)
