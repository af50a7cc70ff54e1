"""The first stages of a corpus's graph build: chunking and extraction of the sources read
since the last build, a batch of bounded size at a time (what a step holds in memory is
bounded by its batch, not by the corpus), and the sources' status once done.

A shard (``ShardWork``) is the sources one process chunks and extracts: the whole work
on an index with one writer, a share of it otherwise (defs/assets/text_units_and_extractions.py
hands them out)."""

import time
from dataclasses import dataclass, field

import polars as pl

from graphrag_common.ids import keep_short_ids

from ..core.chunking import chunk_documents
from ..core.content import GRAPH_LIMIT, WRAPPING_COLUMNS, wrapping_by_document, wrapping_rows
from ..fingerprints import current_fingerprints
from ..settings import IndexSettings
from ..storage.duckdb_store import IndexStore
from ..storage.schema import LLM_FAILURE_COLUMNS, SOURCE_FAILED, SOURCE_READ, TABLES, conform
from .methods import Extraction, Log
from .records import extracted_source_rows, source_rows

# A step chunks and extracts at most this much text at a time (about 2M tokens), each batch
# written in its own transaction.
BATCH_CHARACTERS = 8_000_000


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


def source_sizes(store: IndexStore, corpus: str, sources: list[str]) -> pl.DataFrame:
    """(source_partition, characters) of these sources' documents."""
    return store.read(
        "SELECT source_partition, sum(length(text)) AS characters FROM documents "
        "WHERE corpus = ? AND source_partition IN (SELECT unnest(?)) GROUP BY 1",
        [corpus, sources],
    )


def work_of_corpus(store: IndexStore, corpus: str, rechunk_all: bool, reextract_all: bool) -> ShardWork:
    """What the corpus's build chunks (new and changed files; every one with
    ``rechunk_all``) and extracts (those, and sources with a failed text unit; every one
    with ``reextract_all``)."""
    waiting = store.sources_not_extracted(corpus)
    if rechunk_all:
        to_chunk = store.read("SELECT DISTINCT source_partition FROM documents WHERE corpus = ? ORDER BY 1", [corpus])[
            "source_partition"
        ].to_list()
    else:
        to_chunk = waiting.filter(pl.col("status") == SOURCE_READ)["source_partition"].to_list()
    if reextract_all:
        to_extract = store.read("SELECT source_partition FROM sources WHERE corpus = ? ORDER BY 1", [corpus])[
            "source_partition"
        ].to_list()
    else:
        to_extract = waiting.filter(pl.col("status") == SOURCE_FAILED)["source_partition"].to_list()
    to_extract = sorted(set(to_extract) - set(to_chunk))
    sizes = source_sizes(store, corpus, to_chunk + to_extract)
    return ShardWork(corpus, to_chunk, to_extract, {source: int(n or 0) for source, n in sizes.iter_rows()})


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


def chunk_and_extract_batch(
    store: IndexStore,
    settings: IndexSettings,
    extraction: Extraction,
    log: Log,
    corpus: str,
    sources: tuple[list[str], list[str]],
) -> ShardDone:
    """Chunk the first of ``sources``, then extract them and the second (chunked before),
    and write the batch's chunks and records in one transaction (rows of other shards'
    sources are not touched, so on a first index the shards' commits never conflict), then
    the sources' status. A source with a failed text unit is not marked extracted, so the
    next build extracts it again (only the failed calls: the others are cached)."""
    to_chunk, to_extract = sources
    batch = sorted(to_chunk + to_extract)
    docs = store.read_table("documents", "source_partition", batch)
    units = store.read_table("text_units", "source_partition", to_extract)
    rows = store.read_table("sources", "source_partition", to_extract)
    done = ShardDone()
    wrapping = pl.DataFrame(schema=WRAPPING_COLUMNS)
    if to_chunk:
        new_units, new_rows, wrapping, done = chunk_sources(store, settings, corpus, docs, to_chunk)
        units, rows = pl.concat([units, new_units]), pl.concat([rows, new_rows])
    extracted = extraction.extract(store, corpus, units, docs, log)
    # What extraction left out is replaced with the records; what chunking left out with the chunks.
    kept = store.read_table("document_wrapping", "source_partition", to_extract)
    wrapping = pl.concat([kept.filter(pl.col("kind") != GRAPH_LIMIT), wrapping, extracted.left_out])
    failed = set(extracted.failures["scope"].to_list())
    rows = extracted_source_rows(rows, failed, str(current_fingerprints(settings)["reading"]))
    with store.transaction() as tx:
        tx.replace("text_units", units.filter(pl.col("source_partition").is_in(to_chunk)), to_chunk)
        tx.replace("document_wrapping", wrapping, batch)
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
    return done.plus(
        ShardDone(
            sources_extracted=len(set(batch) - failed),
            entity_records=extracted.entities.height,
            relationship_records=extracted.relationships.height,
            claims=extracted.claims.height,
            text_units_extracted=units.height,
            failures=extracted.failures,
            method=extracted.method,
        )
    )


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
    store: IndexStore, settings: IndexSettings, extraction: Extraction, log: Log, work: ShardWork
) -> ShardDone:
    """Chunk then extract a shard's sources, a batch at a time."""
    started = time.perf_counter()
    done = ShardDone()
    chunk_set = set(work.to_chunk)
    for batch in batches(work.characters, sorted(set(work.to_chunk) | set(work.to_extract))):
        to_chunk = [source for source in batch if source in chunk_set]
        to_extract = [source for source in batch if source not in chunk_set]
        done = done.plus(chunk_and_extract_batch(store, settings, extraction, log, work.corpus, (to_chunk, to_extract)))
    done.seconds = time.perf_counter() - started
    return done
