"""Graph-wide assets, one partition per corpus:
(text_units -> extractions ->) entities + relationships -> communities -> community_reports
-> embeddings.

They read the per-source tables of their corpus from DuckDB (every source partition feeds
the corpus: ``text_units`` depends on ``documents`` through ``ALL_SOURCES``) and replace
the corpus's rows in one transaction each.
"""

import datetime as dt
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

from graphrag_common.ids import keep_short_ids
from graphrag_common.lexical import search_term_rows

from ...configuration import value_of
from ...core.claims import resolve_claims
from ...core.communities import detect_communities, ego_node, stabilize_numbers
from ...core.embedding import EMBEDDING_COLUMNS, embed_missing, embedding_inputs, entity_inputs
from ...core.graph import build_graph, link_text_units
from ...core.graph_pictures import graph_pictures_dir, write_graph_pictures
from ...core.reports import extractive_reports
from ...core.resolution import apply_resolution, candidate_pairs, resolve, rule_decisions, titled_as_entities
from ...fingerprints import code_version, current_fingerprints, dump_fingerprints
from ...llm.errors import failure_frame
from ...llm.session import chosen_embedder
from ...llm_stages.graph import build_llm_graph
from ...llm_stages.reports import llm_reports
from ...settings import IndexSettings
from ...storage.schema import CORPUS_BUILD_COLUMNS
from ...storage.snapshot import open_published, publish_snapshot
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
from .evaluations import against_published_build
from .shared import (
    EPOCH,
    GRAPH_ASSET_OPTIONS,
    RebuildConfig,
    failure_rows,
    frame_version,
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
        units = store.read_table("text_units", "corpus", [corpus])
        extracted_entities = store.read_table("extracted_entities", "corpus", [corpus])
        extracted_relationships = store.read_table("extracted_relationships", "corpus", [corpus])
        llm_settings = llm.get_settings()
        failures = failure_frame([])
        usage: dict = {"llm_calls": 0}
        pairs = candidate_pairs(extracted_entities, settings.resolution())
        if llm_settings.enabled:
            with llm.session(store, corpus, context.run.run_id) as session:
                entities, relationships, merges, failures = build_llm_graph(
                    session.client,
                    extracted_entities,
                    extracted_relationships,
                    units,
                    corpus,
                    pairs,
                    llm_settings.confirm_merges,
                )
            usage = session.usage.metadata()
        else:
            mapping, merges = resolve(extracted_entities, corpus, decisions=rule_decisions(pairs))
            extracted_entities, extracted_relationships = apply_resolution(
                extracted_entities, extracted_relationships, mapping
            )
            entities, relationships = build_graph(
                extracted_entities, extracted_relationships, units, corpus, settings.graph()
            )
        merges = titled_as_entities(merges, entities)
        failed = failure_rows(failures, f"{corpus}#summary")
        # Rows already indexed keep their short numbers, which kept reports cite.
        entities = keep_short_ids(entities, store.short_ids("entities", [corpus]))
        relationships = keep_short_ids(relationships, store.short_ids("relationships", [corpus]))
        links = link_text_units(entities, relationships)
        with store.transaction() as tx:
            tx.replace("entities", entities, [corpus])
            tx.replace("relationships", relationships, [corpus])
            tx.replace("entity_merges", merges, [corpus])
            tx.replace("llm_failures", failed, [f"{corpus}#summary"])
            tx.register("links", links)
            tx.execute("UPDATE text_units SET entity_ids = [], relationship_ids = [] WHERE corpus = ?", [corpus])
            tx.execute(
                "UPDATE text_units SET entity_ids = coalesce(links.entity_ids, []), "
                "relationship_ids = coalesce(links.relationship_ids, []) "
                "FROM links WHERE text_units.id = links.text_unit_id"
            )
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
        } | usage
        yield MaterializeResult(
            asset_key="entities",
            metadata=table_metadata("entities", entities, ["title", "type", "frequency", "degree", "description"])
            | graph_stats,
            data_version=frame_version(entities, ["id", "title", "type", "description", "text_unit_ids", "degree"]),
            check_results=[calls_succeeded(SUMMARY_CALLS_SUCCEEDED, failed)],
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
            | picture_metadata(pictures),
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
        found = store.read_table("communities", "corpus", [corpus])
        entities = store.read_table("entities", "corpus", [corpus])
        relationships = store.read_table("relationships", "corpus", [corpus])
        previous = store.read_table("community_reports", "corpus", [corpus])
        llm_settings = llm.get_settings()
        failures = failure_frame([])
        if llm_settings.enabled:
            # Rewriting every report asks the model again; the cache answers each whose prompt is unchanged.
            redo = why_redo_everything(context, store, settings, "reports", config.rebuild)
            kept = None if redo else previous
            # Claims name entities as extracted; here they meet the entities they were merged into.
            claims = resolve_claims(
                store.read_table("covariates", "corpus", [corpus]),
                entities,
                store.read_table("entity_merges", "corpus", [corpus]),
            )
            with llm.session(store, corpus, context.run.run_id) as session:
                reports, failures, context_tokens = llm_reports(
                    session.client,
                    found,
                    entities,
                    relationships,
                    corpus,
                    report_max_input_tokens=llm_settings.report_max_input_tokens,
                    model=llm_settings.model_for("report"),
                    previous=kept,
                    claims=claims,
                    embed_ahead=entity_inputs(entities)["text"].to_list(),
                )
            usage = session.usage.metadata() | {
                "max_context_tokens": max(context_tokens, default=0),
                "generated_by": llm_settings.model_for("report"),
                "reports_written": len(context_tokens),
                "reports_kept_unchanged": reports.height - len(context_tokens),
                "claims_of_entities": int(claims["subject_entity_id"].is_not_null().sum()),
            }
        else:
            reports = extractive_reports(found, entities, relationships, corpus)
            usage = {"generated_by": "extractive (no LLM)", "llm_calls": 0}
        failed = failure_rows(failures, f"{corpus}#report")
        with store.transaction() as tx:
            tx.replace("community_reports", reports, [corpus])
            tx.replace("llm_failures", failed, [f"{corpus}#report"])
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
        wanted = embedding_inputs(
            store.read_table("text_units", "corpus", [corpus]),
            store.read_table("entities", "corpus", [corpus]),
            store.read_table("community_reports", "corpus", [corpus]),
        )
        # Embedding every text again asks an endpoint again; its cache answers each text it embedded.
        redo = why_redo_everything(context, store, settings, "embeddings", config.rebuild)
        existing = (
            pl.DataFrame(schema=EMBEDDING_COLUMNS) if redo else store.read_table("embeddings", "corpus", [corpus])
        )
        with chosen_embedder(
            embedding.get_settings(),
            settings.make_embedder,
            lambda: embedding.session(store, corpus, context.run.run_id),
        ) as (embedder, endpoint_usage):
            rows, embedded = embed_missing(wanted, existing, embedder, corpus)
        usage = endpoint_usage.metadata() if endpoint_usage is not None else {"llm_calls": 0}
        # The bookkeeping row that says this corpus's build is complete (``corpus_builds``,
        # read by build_state.corpus_work) is written here, by the last step that changes
        # the index's tables, in the same transaction as the vectors: a build killed at any
        # earlier point has no new row, so the next pass redoes what is missing.
        built_at = dt.datetime.now(dt.UTC)
        build = pl.DataFrame(
            [
                {
                    "corpus": corpus,
                    "sources_hash": store.sources_fingerprint(corpus),
                    "stage_fingerprints": dump_fingerprints(current_fingerprints(settings)),
                    "built_at": built_at,
                }
            ],
            schema=CORPUS_BUILD_COLUMNS,
        )
        terms = search_term_rows(wanted, corpus)
        with store.transaction() as tx:
            tx.replace("embeddings", rows, [corpus])
            tx.replace("search_terms", terms, [corpus])
            tx.replace("corpus_builds", build, [corpus])
        # Complete, the build is done once also mirrored and published (build_state.corpus_work).
        mirrored = settings.vector_store().replace_corpus(
            corpus, rows, build=(built_at - EPOCH) // dt.timedelta(microseconds=1)
        )
        dimensions = rows.select(pl.col("vector").list.len().unique()).to_series().to_list()
        by_kind = {k: n for k, n in rows["kind"].value_counts().iter_rows()}
        return MaterializeResult(
            metadata=table_metadata(
                "embeddings",
                rows.drop("vector").with_columns(pl.lit(None, pl.List(pl.Float32)).alias("vector")),
                ["kind", "id", "model", "text"],
            )
            | {
                "model": embedder.name,
                "dimensions": dimensions[0] if dimensions else 0,
                "by_kind": by_kind,
                "search_terms": terms.height,
                "newly_embedded": embedded,
                "reused": rows.height - embedded,
                "seconds": time.perf_counter() - started,
            }
            | usage,
            data_version=frame_version(rows, ["kind", "id", "content_hash", "model"]),
            check_results=[vector_dimensions_consistent(rows, mirrored)],
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
    pointer = publish_snapshot(database.location, settings.vectors, corpus)
    # Counted in the snapshot itself: what readers see, not what the index holds by now.
    with open_published(pointer) as snapshot:
        rows = {
            name: snapshot.execute(f'SELECT count(*) FROM "{name}" WHERE corpus = ?', [corpus]).fetchone()[0]
            for name in CORPUS_TABLES
        }
    return MaterializeResult(
        metadata=tables_metadata(rows)
        | {key: pointer[key] for key in ("snapshot", "snapshot_version") if pointer.get(key) is not None}
        | {"lancedb_versions": pointer["lancedb_versions"]}
    )
