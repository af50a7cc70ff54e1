"""The graph-wide stages of a corpus's build, after extraction: the graph merged from the
records (with entity resolution), its communities, their reports, the search index, and
the build record and publication that make the build done (``build_state``)."""

import datetime as dt
from dataclasses import dataclass

import polars as pl

from graphrag_common.ids import keep_short_ids
from graphrag_common.lexical import search_term_rows

from ..build_state import build_stamp, failure_rows, graph_failure_scope, record_build
from ..core.communities import detect_communities, ego_node, stabilize_numbers
from ..core.embedding import EMBEDDING_COLUMNS, embed_missing, embedding_inputs
from ..core.graph import link_text_units
from ..core.graph_pictures import GraphPictures, graph_pictures_dir, write_graph_pictures
from ..core.resolution import candidate_pairs, titled_as_entities
from ..fingerprints import current_fingerprints
from ..llm.session import chosen_embedder
from ..llm.settings import LLMSettings
from ..settings import IndexSettings
from ..storage.duckdb_store import IndexStore, Transaction
from ..storage.location import IndexLocation
from ..storage.snapshot import open_published, publish_snapshot
from .methods import Graph, GraphMerge, ReportWriting, SessionFactory


def replace_text_unit_links(tx: Transaction, corpus: str, links: pl.DataFrame) -> None:
    """Each text unit of the corpus lists the entities and relationships it supports
    (``links``: text_unit_id, entity_ids, relationship_ids); the others none."""
    tx.register("links", links)
    tx.execute("UPDATE text_units SET entity_ids = [], relationship_ids = [] WHERE corpus = ?", [corpus])
    tx.execute(
        "UPDATE text_units SET entity_ids = coalesce(links.entity_ids, []), "
        "relationship_ids = coalesce(links.relationship_ids, []) "
        "FROM links WHERE text_units.id = links.text_unit_id"
    )


def merge_graph(store: IndexStore, settings: IndexSettings, method: GraphMerge, corpus: str) -> Graph:
    """The corpus's entities and relationships merged from every source's records, written
    with the merges, the failed summary calls (scope ``<corpus>#summary``) and the text
    units' links in one transaction. Returns the graph as written (failures as rows)."""
    extracted = {
        name: store.read_table(name, "corpus", [corpus])
        for name in ("text_units", "extracted_entities", "extracted_relationships")
    }
    pairs = candidate_pairs(extracted["extracted_entities"], settings.resolution())
    graph = method.merge(store, corpus, extracted, pairs)
    merges = titled_as_entities(graph.merges, graph.entities)
    failed = failure_rows(graph.failures, corpus, step="summary")
    # Rows already indexed keep their short numbers, which kept reports cite.
    entities = keep_short_ids(graph.entities, store.short_ids("entities", [corpus]))
    relationships = keep_short_ids(graph.relationships, store.short_ids("relationships", [corpus]))
    with store.transaction() as tx:
        tx.replace("entities", entities, [corpus])
        tx.replace("relationships", relationships, [corpus])
        tx.replace("entity_merges", merges, [corpus])
        tx.replace("llm_failures", failed, [graph_failure_scope(corpus, "summary")])
        replace_text_unit_links(tx, corpus, link_text_units(entities, relationships))
    return Graph(entities, relationships, merges, failed, graph.usage)


@dataclass
class Communities:
    found: pl.DataFrame
    previous: pl.DataFrame
    pictures: GraphPictures
    excluded_ego_node: str | None


def find_communities(store: IndexStore, settings: IndexSettings, corpus: str) -> Communities:
    """The corpus's hierarchical communities, their numbers kept where the last build had
    them, written; and the pictures of every level beside the index."""
    relationships = store.read_table("relationships", "corpus", [corpus])
    previous = store.read_table("communities", "corpus", [corpus])
    found = stabilize_numbers(detect_communities(relationships, corpus, settings.communities()), previous)
    with store.transaction() as tx:
        tx.replace("communities", found, [corpus])
    pictures = write_graph_pictures(
        graph_pictures_dir(settings.db, corpus),
        store.read_table("entities", "corpus", [corpus]),
        relationships,
        found,
    )
    excluded = ego_node(relationships) if settings.communities().exclude_ego_node else None
    return Communities(found, previous, pictures, excluded)


@dataclass
class Reports:
    reports: pl.DataFrame
    previous: pl.DataFrame
    failed: pl.DataFrame  # llm_failures rows, scope "<corpus>#report"
    usage: dict


def write_reports(store: IndexStore, method: ReportWriting, corpus: str, redo: bool) -> Reports:
    """A report per community of the corpus, written; those whose input is unchanged kept
    unless ``redo``."""
    graph = {name: store.read_table(name, "corpus", [corpus]) for name in ("communities", "entities", "relationships")}
    previous = store.read_table("community_reports", "corpus", [corpus])
    reports, failures, usage = method.write(store, corpus, graph, None if redo else previous)
    failed = failure_rows(failures, corpus, step="report")
    with store.transaction() as tx:
        tx.replace("community_reports", reports, [corpus])
        tx.replace("llm_failures", failed, [graph_failure_scope(corpus, "report")])
    return Reports(reports, previous, failed, usage)


@dataclass
class SearchIndex:
    rows: pl.DataFrame  # embeddings
    terms: pl.DataFrame
    embedded: int
    embedder: str
    mirrored: dict[str, int]  # what the vector store holds now (checks.vector_dimensions_consistent)
    usage: dict


def embed_and_record(
    store: IndexStore,
    settings: IndexSettings,
    corpus: str,
    endpoint: tuple[LLMSettings, SessionFactory],
    redo: bool,
) -> SearchIndex:
    """Vectors of the texts not embedded yet (every text with ``redo``) and the BM25 terms,
    written with the row that says the corpus's build is complete (``build_state``), by the
    last stage that changes the index's tables, in one transaction: a build killed at any
    earlier point has no new row, so the next pass redoes what is missing. Then the vectors
    are mirrored to the vector store."""
    wanted = embedding_inputs(
        store.read_table("text_units", "corpus", [corpus]),
        store.read_table("entities", "corpus", [corpus]),
        store.read_table("community_reports", "corpus", [corpus]),
    )
    existing = pl.DataFrame(schema=EMBEDDING_COLUMNS) if redo else store.read_table("embeddings", "corpus", [corpus])
    settings_of_endpoint, sessions = endpoint
    with chosen_embedder(settings_of_endpoint, settings.make_embedder, lambda: sessions(store, corpus)) as (
        embedder,
        endpoint_usage,
    ):
        rows, embedded = embed_missing(wanted, existing, embedder, corpus)
    built_at = dt.datetime.now(dt.UTC)
    terms = search_term_rows(wanted, corpus)
    with store.transaction() as tx:
        tx.replace("embeddings", rows, [corpus])
        tx.replace("search_terms", terms, [corpus])
        record_build(tx, store, corpus, current_fingerprints(settings), built_at)
    mirrored = mirror_build(settings, corpus, rows, build_stamp(built_at))
    usage = endpoint_usage.metadata() if endpoint_usage is not None else {"llm_calls": 0}
    return SearchIndex(rows, terms, embedded, embedder.name, mirrored, usage)


def mirror_build(settings: IndexSettings, corpus: str, rows: pl.DataFrame, stamp: int) -> dict[str, int]:
    """Mirror the corpus's vectors (``rows``: embeddings) to the vector store as those of the
    build ``stamp``: a complete build is done once also mirrored and published
    (build_state.corpus_work). Returns what the vector store holds now."""
    return settings.vector_store().replace_corpus(corpus, rows, build=stamp)


def publish(location: IndexLocation, vectors: str, corpus: str, tables: tuple[str, ...]) -> tuple[dict, dict]:
    """Swap in a snapshot of the index for readers; returns its pointer and the rows per
    table of the corpus it holds (counted in the snapshot: what readers see)."""
    pointer = publish_snapshot(location, vectors, corpus)
    with open_published(pointer) as snapshot:
        rows = {
            name: snapshot.execute(f'SELECT count(*) FROM "{name}" WHERE corpus = ?', [corpus]).fetchone()[0]
            for name in tables
        }
    return pointer, rows
