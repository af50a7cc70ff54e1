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
import time
from dataclasses import dataclass, field

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

from graphrag_common.ids import keep_short_ids

from ...core.chunking import chunk_documents
from ...core.content import WRAPPING_COLUMNS, wrapping_by_document, wrapping_rows
from ...core.extraction.offline import extract_offline
from ...core.inputs import given_title
from ...core.shards import balanced_shards
from ...fingerprints import code_version, current_fingerprints
from ...llm.errors import failure_frame
from ...llm_stages.extraction import LLMExtraction, extract_with_llm
from ...settings import IndexSettings
from ...storage.duckdb_store import IndexStore
from ...storage.schema import (
    LLM_FAILURE_COLUMNS,
    SOURCE_EXTRACTED,
    SOURCE_FAILED,
    SOURCE_READ,
    TABLES,
    conform,
)
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
    failure_rows,
    retract_deleted_sources,
    source_rows,
    utc_now,
    why_redo_everything,
)

EXTRACTION_TABLES = ["extracted_entities", "extracted_relationships", "covariates"]
# A step chunks and extracts at most this much text at a time (about 2M tokens), each batch
# written in its own transaction.
BATCH_CHARACTERS = 8_000_000


class ChunkingAndExtractionConfig(Config):
    """Run config of the plan step (``graphrag-index --rebuild chunking|extraction``)."""

    rebuild_chunking: bool = Field(default=False, description="Chunk every source of the corpus again.")
    rebuild_extraction: bool = Field(default=False, description="Extract every source of the corpus again.")


@dataclass
class ShardWork:
    """Sources of one shard: those to chunk (then extract), and those only to extract, with
    the characters of each (what its batches are cut by)."""

    corpus: str
    to_chunk: list[str]
    to_extract: list[str]
    characters: dict[str, int]


@dataclass
class ShardDone:
    """What a shard (or the plan step doing the work itself) chunked and extracted."""

    sources_chunked: int = 0
    documents: int = 0
    tokens: int = 0
    sources_extracted: int = 0
    entity_records: int = 0
    relationship_records: int = 0
    claims: int = 0
    text_units_extracted: int = 0
    failures: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=LLM_FAILURE_COLUMNS))
    method: dict = field(default_factory=dict)
    seconds: float = 0.0

    def plus(self, other: "ShardDone") -> "ShardDone":
        counts = {
            name: getattr(self, name) + getattr(other, name)
            for name in (
                "sources_chunked",
                "documents",
                "tokens",
                "sources_extracted",
                "entity_records",
                "relationship_records",
                "claims",
                "text_units_extracted",
            )
        }
        return ShardDone(
            **counts,
            failures=pl.concat([self.failures, other.failures]),
            method=summed(self.method, other.method),
            seconds=max(self.seconds, other.seconds),
        )


def summed(first: dict, second: dict) -> dict:
    """Two shards' metadata in one: numbers added (LLM calls, tokens, cost), nested counts
    too, other values as the first has them."""
    merged = dict(second) | dict(first)
    for key, value in second.items():
        if key in first and isinstance(value, dict) and isinstance(first[key], dict):
            merged[key] = summed(first[key], value)
        elif key in first and isinstance(value, int | float) and not isinstance(value, bool):
            merged[key] = first[key] + value
    return merged


def chunk_sources(
    store: IndexStore, settings: IndexSettings, corpus: str, docs: pl.DataFrame, sources: list[str]
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, ShardDone]:
    """The text units of these sources' documents (``docs``), the sources' rows saying so,
    and what was left out of them as not their content (``document_wrapping`` rows)."""
    docs = docs.filter(pl.col("source_partition").is_in(sources))
    spans = None if settings.keep_wrapping else wrapping_by_document(docs)  # found once, for both
    wrapping = pl.DataFrame(schema=WRAPPING_COLUMNS) if spans is None else wrapping_rows(docs, spans)
    units = chunk_documents(docs, settings.chunking(), spans).with_columns(
        pl.lit([], pl.List(pl.String)).alias("entity_ids"), pl.lit([], pl.List(pl.String)).alias("relationship_ids")
    )
    units = conform(TABLES["text_units"], keep_short_ids(units, store.short_ids("text_units", [corpus])))
    done = ShardDone(sources_chunked=len(sources), documents=docs.height, tokens=int(units["n_tokens"].sum() or 0))
    return units, source_rows(docs, units), wrapping, done


@dataclass
class Extracted:
    entities: pl.DataFrame
    relationships: pl.DataFrame
    claims: pl.DataFrame
    failures: pl.DataFrame  # llm_failures rows, scoped by source partition


def screening_report(context: OpExecutionContext, extraction: LLMExtraction, answered_units: int) -> dict:
    """The names the screening left out or retyped, logged by reason with examples, and a
    warning when most answered units gave no entity (a model too weak for the task, or a
    structured mode the server does not follow); as metadata."""
    by_reason = extraction.rejections.group_by("reason").agg(pl.len(), pl.col("name").head(3)).sort("reason")
    for reason, count, examples in by_reason.iter_rows():
        context.log.info(f"extraction left out or retyped {count} name(s), {reason}: e.g. {', '.join(examples)}")
    empty = extraction.units_without_entities
    if answered_units and empty > answered_units / 2:
        context.log.warning(
            f"the model gave no entity for {empty} of {answered_units} text units: check GRAPHRAG_LLM_MODEL and "
            "GRAPHRAG_LLM_MODE (see the README's model section)"
        )
    return {
        "names_screened_out": {reason: count for reason, count, _ in by_reason.iter_rows()},
        "text_units_without_entities": empty,
    }


def extract_units(
    context: OpExecutionContext,
    store: IndexStore,
    llm: LLMResource,
    corpus: str,
    units: pl.DataFrame,
    docs: pl.DataFrame,
) -> tuple[Extracted, ShardDone]:
    """The records of these text units (their documents: ``docs``), by the LLM or offline."""
    llm_settings = llm.get_settings()
    failures = failure_rows(failure_frame([]), "")
    claims = pl.DataFrame(schema=TABLES["covariates"].columns)
    if llm_settings.enabled:
        with llm.session(store, corpus, context.run.run_id) as session:
            extraction = extract_with_llm(
                session.client,
                units,
                llm_settings.entity_type_list(),
                llm_settings.gleanings,
                llm_settings.claim_description if llm_settings.claims else None,
            )
        entities, relationships, claims, failed = extraction[:4]
        answered = units.height - failed.filter(pl.col("stage") == "extraction").height
        screening = screening_report(context, extraction, answered)
        # Claims already indexed keep their short numbers (reports and answers cite them).
        claims = keep_short_ids(claims, store.short_ids("covariates", [corpus]))
        scopes = dict(zip(units["id"], units["source_partition"]))
        failures = failure_rows(failed, pl.col("item_id").replace_strict(scopes, return_dtype=pl.String))
        for failure in failures.iter_rows(named=True):
            context.log.error(
                f"LLM {failure['stage']} failed for text unit {failure['item_id']} of {failure['scope']}: "
                f"{failure['error']}"
            )
        method = {"method": f"llm ({llm_settings.model_for('extraction')})"} | session.usage.metadata() | screening
    else:
        # A document's given title is an entity of each of its text units.
        titles = {
            row["id"]: title
            for row in docs.select("id", "title", "source_path").iter_rows(named=True)
            if (title := given_title(row["title"], row["source_path"]))
        }
        entities, relationships = extract_offline(units, titles)
        method = {"method": "offline (rule-based English, jieba Chinese); no LLM calls", "llm_calls": 0}
    done = ShardDone(
        entity_records=entities.height,
        relationship_records=relationships.height,
        claims=claims.height,
        text_units_extracted=units.height,
        failures=failures,
        method=method,
    )
    return Extracted(entities, relationships, claims, failures), done


def chunk_and_extract_batch(
    context: OpExecutionContext,
    store: IndexStore,
    settings: IndexSettings,
    llm: LLMResource,
    corpus: str,
    to_chunk: list[str],
    to_extract: list[str],
) -> ShardDone:
    """Chunk ``to_chunk``, then extract them and ``to_extract`` (chunked before), and write
    the batch's chunks and records in one transaction (rows of other shards' sources are
    not touched, so on a first index the shards' commits never conflict), then the
    sources' status. A source with a failed text unit is not marked extracted, so the next
    build extracts it again (only the failed calls: the others are cached)."""
    batch = sorted(to_chunk + to_extract)
    docs = store.read_table("documents", "source_partition", batch)
    units = store.read_table("text_units", "source_partition", to_extract)
    rows = store.read_table("sources", "source_partition", to_extract)
    done = ShardDone()
    wrapping = pl.DataFrame(schema=WRAPPING_COLUMNS)
    if to_chunk:
        new_units, new_rows, wrapping, done = chunk_sources(store, settings, corpus, docs, to_chunk)
        units, rows = pl.concat([units, new_units]), pl.concat([rows, new_rows])
    extracted, extraction = extract_units(context, store, llm, corpus, units, docs)
    failed = set(extracted.failures["scope"].to_list())
    reading = str(current_fingerprints(settings)["reading"])
    failing = pl.col("source_partition").is_in(sorted(failed))
    rows = rows.with_columns(
        pl.when(failing).then(pl.lit(None, pl.String)).otherwise(pl.lit(reading)).alias("settings_hash"),
        pl.when(failing).then(pl.lit(SOURCE_FAILED)).otherwise(pl.lit(SOURCE_EXTRACTED)).alias("status"),
        pl.lit(utc_now()).alias("indexed_at"),
    )
    with store.transaction() as tx:
        tx.replace("text_units", units.filter(pl.col("source_partition").is_in(to_chunk)), to_chunk)
        tx.replace("document_wrapping", wrapping, to_chunk)
        tx.replace("extracted_entities", extracted.entities, batch)
        tx.replace("extracted_relationships", extracted.relationships, batch)
        tx.replace("covariates", extracted.claims, batch)
        tx.replace("llm_failures", extracted.failures, batch)
    # Then the sources' status, in a commit of its own: every shard replaces rows of this
    # one table (the reading step wrote them), and on a lake such commits conflict; applied
    # again, this one is small. A crash in between leaves the batch's sources pending, and the
    # next build redoes them (the writes above replace, so nothing doubles).
    with store.transaction() as tx:
        tx.replace("sources", rows, batch)
    extraction.sources_extracted = len(set(batch) - failed)
    return done.plus(extraction)


def batches(characters: dict[str, int], sources: list[str], limit: int = BATCH_CHARACTERS) -> list[list[str]]:
    """``sources`` in partition order, cut into runs of at most ``limit`` characters (a
    larger source is a batch of its own)."""
    cut, current, total = [], [], 0
    for source in sorted(sources):
        size = int(characters.get(source) or 0)
        if current and total + size > limit:
            cut.append(current)
            current, total = [], 0
        current.append(source)
        total += size
    return cut + ([current] if current else [])


def chunk_and_extract(
    context: OpExecutionContext,
    store: IndexStore,
    settings: IndexSettings,
    llm: LLMResource,
    work: ShardWork,
) -> ShardDone:
    """Chunk then extract a shard's sources, a batch at a time."""
    started = time.perf_counter()
    done = ShardDone()
    chunk_set = set(work.to_chunk)
    for batch in batches(work.characters, sorted(set(work.to_chunk) | set(work.to_extract))):
        to_chunk = [source for source in batch if source in chunk_set]
        to_extract = [source for source in batch if source not in chunk_set]
        done = done.plus(chunk_and_extract_batch(context, store, settings, llm, work.corpus, to_chunk, to_extract))
    done.seconds = time.perf_counter() - started
    return done


def source_sizes(store: IndexStore, corpus: str, sources: list[str]) -> pl.DataFrame:
    """(source_partition, characters) of these sources' documents."""
    return store.read(
        "SELECT source_partition, sum(length(text)) AS characters FROM documents "
        "WHERE corpus = ? AND source_partition IN (SELECT unnest(?)) GROUP BY 1",
        [corpus, sources],
    )


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
        waiting = store.sources_not_extracted(corpus)
        if why_redo_everything(context, store, settings, "chunking", config.rebuild_chunking):
            to_chunk = store.read(
                "SELECT DISTINCT source_partition FROM documents WHERE corpus = ? ORDER BY 1", [corpus]
            )["source_partition"].to_list()
        else:
            to_chunk = waiting.filter(pl.col("status") == SOURCE_READ)["source_partition"].to_list()
        if why_redo_everything(context, store, settings, "extraction", config.rebuild_extraction):
            to_extract = store.read("SELECT source_partition FROM sources WHERE corpus = ? ORDER BY 1", [corpus])[
                "source_partition"
            ].to_list()
        else:
            to_extract = waiting.filter(pl.col("status") == SOURCE_FAILED)["source_partition"].to_list()
        to_extract = sorted(set(to_extract) - set(to_chunk))
        sizes = source_sizes(store, corpus, to_chunk + to_extract)
        characters = {source: int(n or 0) for source, n in sizes.iter_rows()}
        count = settings.shards_for(sum(characters.values()))
        if count == 1:
            work = ShardWork(corpus, to_chunk, to_extract, characters)
            yield Output(chunk_and_extract(context, store, settings, llm, work), "done_here")
            return
    chunk_set = set(to_chunk)
    shards = balanced_shards(sizes, count)
    context.log.info(f"{len(to_chunk) + len(to_extract)} source(s) to chunk or extract in {len(shards)} shards")
    for number, members in enumerate(shards):
        work = ShardWork(
            corpus,
            [s for s in members if s in chunk_set],
            [s for s in members if s not in chunk_set],
            {s: characters[s] for s in members},
        )
        yield DynamicOutput(work, output_name="shards", mapping_key=f"shard_{number}")
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
        return chunk_and_extract(context, store, settings, llm, work)


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
