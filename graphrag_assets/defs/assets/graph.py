"""Graph-wide assets, one partition per corpus:
(text_units -> extractions ->) entities + relationships -> communities -> community_reports
-> embeddings.

They read the per-source tables of their corpus from DuckDB (every source partition feeds
the corpus: ``text_units`` depends on ``documents`` through ``ALL_SOURCES``) and replace
the corpus's rows in one transaction each.
"""

import time

import polars as pl
from dagster import (
    AssetExecutionContext,
    AssetSpec,
    Failure,
    MaterializeResult,
    MetadataValue,
    asset,
    multi_asset,
)

from ...build_state import against_published_build
from ...configuration import value_of
from ...fingerprints import code_version
from ...settings import IndexSettings
from ...stages.graph import embed_and_record, find_communities, merge_graph, publish, write_reports
from ..automation import FOLLOW_SOURCES
from ..checks import (
    ENDPOINTS_ARE_ENTITIES,
    EVERY_COMMUNITY_HAS_A_REPORT,
    MEMBERS_EXIST,
    REPORT_CALLS_SUCCEEDED,
    SUMMARY_CALLS_SUCCEEDED,
    VECTOR_DIMENSIONS_CONSISTENT,
    calls_succeeded,
    endpoints_are_entities,
    every_community_has_a_report,
    members_exist,
    regressed_listing,
    vector_dimensions_consistent,
)
from ..metadata import (
    CORPUS_TABLES,
    distribution_markdown,
    kept_and_changed,
    picture_metadata,
    table_metadata,
    tables_metadata,
)
from ..resources import EmbeddingResource, IndexDatabase, LLMResource
from .shared import (
    GRAPH_ASSET_OPTIONS,
    RebuildConfig,
    frame_version,
    methods_of,
    retract_deleted_sources,
    why_redo_everything,
)


@multi_asset(
    specs=[
        AssetSpec(
            "entities",
            deps=["extractions", "text_units"],
            code_version=code_version("graph", "entities"),
            description=(
                "Entities merged across every source of the corpus, with frequency, degree and supporting text units."
            ),
            kinds={"duckdb", "polars"},
            automation_condition=FOLLOW_SOURCES,
        ),
        AssetSpec(
            "relationships",
            deps=["extractions", "text_units"],
            code_version=code_version("graph", "relationships"),
            description=(
                "Relationships: offline, co-occurrence weighted by a PMI variant and pruned; with an LLM, as "
                "extracted, "
                "strengths summed."
            ),
            kinds={"duckdb", "polars"},
            automation_condition=FOLLOW_SOURCES,
        ),
    ],
    check_specs=[ENDPOINTS_ARE_ENTITIES, SUMMARY_CALLS_SUCCEEDED],
    **GRAPH_ASSET_OPTIONS,
)
def entities_and_relationships(
    context: AssetExecutionContext, settings: IndexSettings, database: IndexDatabase, llm: LLMResource
):
    started = time.perf_counter()
    corpus = context.partition_key
    with database.store() as store:
        store.ensure_schema()
        retract_deleted_sources(context, store, corpus)
        graph = merge_graph(store, settings, methods_of(context, settings, llm).graph, corpus)
        entities, relationships, merges = graph.entities, graph.relationships, graph.merges
        seconds = time.perf_counter() - started
        graph_stats = {
            "nodes": entities.height,
            "edges": relationships.height,
            "entity_types": {t: n for t, n in entities["type"].value_counts().iter_rows()},
            "mean_degree": round(float(entities["degree"].mean() or 0), 2),
            "degree_distribution": MetadataValue.md(
                distribution_markdown({"entities": entities["degree"].to_list()}, "degree")
            ),
            "names_merged_by_resolution": int((~merges["rejected"]).sum()),
            "merges_rejected": int(merges["rejected"].sum()),
            "seconds": seconds,
        } | graph.usage
        yield MaterializeResult(
            asset_key="entities",
            metadata=table_metadata("entities", entities, ["title", "type", "frequency", "degree", "description"])
            | graph_stats,
            data_version=frame_version(entities, ["id", "title", "type", "description", "text_unit_ids", "degree"]),
            check_results=[calls_succeeded(SUMMARY_CALLS_SUCCEEDED, graph.failures)],
        )
        yield MaterializeResult(
            asset_key="relationships",
            metadata=table_metadata("relationships", relationships, ["source", "target", "weight", "description"])
            | graph_stats,
            data_version=frame_version(relationships, ["id", "weight", "description", "text_unit_ids"]),
            check_results=[endpoints_are_entities(store, corpus)],
        )


@asset(
    deps=["relationships", "entities"],
    code_version=code_version("clustering", "communities"),
    description=(
        "Hierarchical Leiden communities (graspologic-native), every level, with parent/children links; "
        "draws a map of each level's communities (SVG) and writes the graph as GraphML for Gephi, beside the index."
    ),
    kinds={"duckdb", "polars"},
    check_specs=[MEMBERS_EXIST],
    automation_condition=FOLLOW_SOURCES,
    **GRAPH_ASSET_OPTIONS,
)
def communities(context: AssetExecutionContext, settings: IndexSettings, database: IndexDatabase) -> MaterializeResult:
    started = time.perf_counter()
    corpus = context.partition_key
    with database.store() as store:
        store.ensure_schema()
        made = find_communities(store, settings, corpus)
        found, previous, excluded = made.found, made.previous, made.excluded_ego_node
        return MaterializeResult(
            metadata=table_metadata("communities", found, ["community", "level", "parent", "size", "title"])
            | {
                "levels": found["level"].n_unique() if found.height else 0,
                "largest_community": int(found["size"].max() or 0) if found.height else 0,
                "communities_per_level": {
                    str(level): n for level, n in found["level"].value_counts().sort("level").iter_rows()
                },
                "community_sizes": MetadataValue.md(
                    distribution_markdown(
                        {
                            f"level {level}": sizes
                            for level, sizes in found.group_by("level").agg("size").sort("level").iter_rows()
                        },
                        "entities",
                    )
                ),
                # A community is kept when its level and members are unchanged (its id hashes them).
                "communities_vs_last_build": kept_and_changed(previous["id"], found["id"]),
                "ego_node_excluded_from_clustering": excluded or "none",
                "seconds": time.perf_counter() - started,
            }
            | picture_metadata(made.pictures),
            data_version=frame_version(found, ["id", "parent", "children", "relationship_ids"]),
            check_results=[members_exist(store, corpus)],
        )


@asset(
    deps=["communities", "entities", "relationships"],
    code_version=code_version("reports", "community_reports"),
    description=(
        "One report per community: written by the LLM bottom-up within an input token budget when "
        "GRAPHRAG_LLM_MODEL is set (with the claims about its members, when claims are extracted); "
        "offline, extractive (title, summary, 5-10 findings quoting evidence), marked generated_by='extractive'."
    ),
    kinds={"duckdb", "polars"},
    check_specs=[EVERY_COMMUNITY_HAS_A_REPORT, REPORT_CALLS_SUCCEEDED],
    automation_condition=FOLLOW_SOURCES,
    **GRAPH_ASSET_OPTIONS,
)
def community_reports(
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
        # Rewriting every report asks the model again; the cache answers each whose prompt is unchanged.
        redo = why_redo_everything(context, store, settings, "reports", config.rebuild)
        written = write_reports(store, methods_of(context, settings, llm).reports, corpus, bool(redo))
        reports, previous, failed, usage = written.reports, written.previous, written.failed, written.usage
        return MaterializeResult(
            metadata=table_metadata("community_reports", reports, ["community", "level", "title", "rank", "summary"])
            | usage
            | {
                # By text: a report kept word for word, or new or rewritten (its community changed, or its writer).
                "reports_vs_last_build": kept_and_changed(previous["content_hash"], reports["content_hash"]),
                "seconds": time.perf_counter() - started,
            },
            data_version=frame_version(reports, ["id", "content_hash"]),
            check_results=[
                every_community_has_a_report(store, corpus),
                calls_succeeded(REPORT_CALLS_SUCCEEDED, failed),
            ],
        )


@asset(
    deps=["text_units", "entities", "community_reports"],
    code_version=code_version("embeddings", "embeddings"),
    description=(
        "The search index: vectors of text units, entity descriptions ('title: description') and report full content, "
        "in DuckDB and LanceDB, and the BM25 terms of text units and reports (table search_terms)."
    ),
    kinds={"duckdb", "lancedb"},
    check_specs=[VECTOR_DIMENSIONS_CONSISTENT],
    automation_condition=FOLLOW_SOURCES,
    **GRAPH_ASSET_OPTIONS,
)
def embeddings(
    context: AssetExecutionContext,
    config: RebuildConfig,
    settings: IndexSettings,
    database: IndexDatabase,
    embedding: EmbeddingResource,
) -> MaterializeResult:
    started = time.perf_counter()
    corpus = context.partition_key
    with database.store() as store:
        store.ensure_schema()
        # Embedding every text again asks an endpoint again; its cache answers each text it embedded.
        redo = why_redo_everything(context, store, settings, "embeddings", config.rebuild)
        endpoint = (
            embedding.get_settings(),
            lambda store, corpus: embedding.session(store, corpus, context.run.run_id),
        )
        index = embed_and_record(store, settings, corpus, endpoint, bool(redo))
        rows, embedded, terms = index.rows, index.embedded, index.terms
        dimensions = rows.select(pl.col("vector").list.len().unique()).to_series().to_list()
        by_kind = {k: n for k, n in rows["kind"].value_counts().iter_rows()}
        return MaterializeResult(
            metadata=table_metadata(
                "embeddings",
                rows.drop("vector").with_columns(pl.lit(None, pl.List(pl.Float32)).alias("vector")),
                ["kind", "id", "model", "text"],
            )
            | {
                "model": index.embedder,
                "dimensions": dimensions[0] if dimensions else 0,
                "by_kind": by_kind,
                "search_terms": terms.height,
                "newly_embedded": embedded,
                "reused": rows.height - embedded,
                "seconds": time.perf_counter() - started,
            }
            | index.usage,
            data_version=frame_version(rows, ["kind", "id", "content_hash", "model"]),
            check_results=[vector_dimensions_consistent(rows, index.mirrored)],
        )


@asset(
    deps=["evaluations", "embeddings", "community_reports", "communities", "entities", "relationships"],
    code_version="published_index-v2",
    description=(
        "A read-only snapshot of the index after a complete graph build, swapped in atomically "
        "for readers (graphrag_query), with the LanceDB table versions of the same moment; with "
        "GRAPHRAG_EVAL_BLOCKS_PUBLISHING, not for a build whose answers regressed (evaluations)."
    ),
    kinds={"duckdb"},
    automation_condition=FOLLOW_SOURCES,
    **GRAPH_ASSET_OPTIONS,
)
def published_index(
    context: AssetExecutionContext, settings: IndexSettings, database: IndexDatabase
) -> MaterializeResult:
    corpus = context.partition_key
    if value_of("GRAPHRAG_EVAL_BLOCKS_PUBLISHING"):
        with database.store() as store:
            verdict = against_published_build(store, settings, corpus)
        if verdict is not None and not verdict.comparison.passed:
            raise Failure(
                f"build of corpus {corpus!r} not published: its answers regressed against {verdict.previous_build} "
                f"({'; '.join(verdict.comparison.drops)}; questions that got worse: "
                f"{', '.join(verdict.comparison.regressed['question_id'].unique(maintain_order=True))}); readers "
                "keep the build they have. Unset "
                "GRAPHRAG_EVAL_BLOCKS_PUBLISHING to publish it anyway.",
                metadata={"regressed_questions": regressed_listing(verdict.comparison)},
                allow_retries=False,
            )
    pointer, rows = publish(database.location, settings.vectors, corpus, tuple(CORPUS_TABLES))
    return MaterializeResult(
        metadata=tables_metadata(rows)
        | {key: pointer[key] for key in ("snapshot", "snapshot_version") if pointer.get(key) is not None}
        | {"lancedb_versions": pointer["lancedb_versions"]}
    )
