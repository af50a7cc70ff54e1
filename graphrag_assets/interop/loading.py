"""Moving a corpus between the index and graphrag's output folder: the shell around
``graphrag_parquet``'s conversions (files, the DuckDB write path, LanceDB, the published
snapshot)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl

from ..build_state import graph_failure_scope, last_build, record_build
from ..core.inputs import check_corpus_name
from ..fingerprints import current_fingerprints
from ..llm.settings import LLMSettings
from ..settings import IndexSettings
from ..storage.duckdb_store import IndexStore
from ..storage.schema import TABLES
from .graphrag_parquet import (
    GRAPHRAG_COLUMNS,
    graphrag_to_tables,
    read_graphrag_folder,
    search_index,
    tables_to_graphrag,
    write_graphrag_folder,
)


def source_partitions_of(store: IndexStore, corpus: str) -> list[str]:
    """Every source partition that has rows of the corpus in a per-source table."""
    selects = " UNION ".join(
        f'SELECT source_partition FROM "{table.name}" WHERE corpus = $1'
        for table in TABLES.values()
        if table.partition_column == "source_partition"
    )
    return store.read(selects, [corpus])["source_partition"].to_list()


def import_graphrag(folder: Path, corpus: str, settings: IndexSettings) -> dict[str, int]:
    """Replace the corpus in the index by graphrag's output in ``folder``, as a graph build
    would leave it (search index, build record, LanceDB mirror), and publish a snapshot
    for readers. Returns rows per table. Everything is read, checked and embedded before
    the index is touched, and written in one transaction: an input that cannot be imported
    (``GraphragFormatError``) changes nothing. Other corpora are left as they are."""
    check_corpus_name(corpus, "--corpus")
    imported_at = dt.datetime.now(dt.UTC)
    tables = graphrag_to_tables(read_graphrag_folder(folder), corpus, imported_at)
    with settings.store() as store:
        store.ensure_schema()
        # The embedder the embeddings step uses; questions are embedded with the same one.
        # Imported here: the LLM resources bring Dagster, which export does not need.
        from ..llm.session import chosen_embedder
        from ..stages.graph import mirror_build, publish
        from ..stages.methods import plain_sessions

        endpoint = LLMSettings.from_env()
        sessions = plain_sessions(endpoint)
        with chosen_embedder(endpoint, settings.make_embedder, lambda: sessions(store, corpus)) as (embedder, _):
            tables["embeddings"], tables["search_terms"] = search_index(tables, corpus, embedder)
        # The corpus's sources of before go, whatever they were (files indexed, or another import).
        sources = sorted(set(source_partitions_of(store, corpus)) | set(tables["sources"]["source_partition"]))
        with store.transaction() as tx:
            for name, frame in tables.items():
                tx.replace(name, frame, sources if TABLES[name].partition_column == "source_partition" else [corpus])
            tx.replace("source_errors", pl.DataFrame(schema=TABLES["source_errors"].columns), sources)
            tx.replace(
                "llm_failures",
                pl.DataFrame(schema=TABLES["llm_failures"].columns),
                [*sources, graph_failure_scope(corpus, "summary"), graph_failure_scope(corpus, "report")],
            )
            # Only the embeddings stage ran here: indexing this corpus from files later redoes every other stage.
            fingerprints = {"embeddings": current_fingerprints(settings)["embeddings"]}
            record_build(tx, store, corpus, fingerprints, imported_at)
        # The mirror records the build as readers of corpus_builds see it (build_state.corpus_work).
        stamp = last_build(store, corpus)["stamp"]
    mirror_build(settings, corpus, tables["embeddings"], stamp)
    publish(settings.location(), settings.vectors, corpus, ())
    return {name: frame.height for name, frame in tables.items()}


def export_graphrag(database: str | None, corpus: str, folder: Path) -> dict[str, int]:
    """Write the corpus, as the published snapshot holds it, to ``folder`` in graphrag
    3.x's layout. Returns rows per file."""
    from graphrag_assets.storage.published_tables import IndexNotFound, PublishedTables

    reader = PublishedTables(database, corpus)
    tables = {name: reader.table(name) for name in GRAPHRAG_COLUMNS}
    if tables["documents"].is_empty():
        raise IndexNotFound(f"corpus {corpus!r} has no documents in {reader.source}")
    frames = tables_to_graphrag(tables)
    write_graphrag_folder(frames, folder)
    return {name: frame.height for name, frame in frames.items()}
