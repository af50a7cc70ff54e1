"""Views and table macros for SQL users, and the comments that describe the index.

They answer the common questions (an entity's text units and documents, its community
hierarchy, relationships between two names, nearest neighbours by embedding, the state of
each source file, LLM usage and cost) without knowing ids, ``list_contains`` or vector casts.
Entity titles in the views compare case-insensitively (``COLLATE NOCASE``):
``WHERE entity_a = 'scrooge'`` finds ``Scrooge``.

They are created in each published snapshot, not in the live file: the snapshot is what
users read, and made from the code that publishes it, the views always match the tables
of that snapshot (in a DuckLake, whose snapshots are versions of one catalog, they are
created again in the version being published). So they need no migration of their own: a new column, a changed
definition or a new view appears with the next build, and an incremental update
publishes them again like everything else.

Vectors are stored as ``FLOAT[]`` lists, their length set by the embedder (256 hashed,
384 MiniLM, whatever an embedding model returns). ``array_cosine_similarity`` needs a
fixed-size ``FLOAT[n]`` cast that would hard-code one embedder; ``list_cosine_similarity``
compares lists of any (equal) length, and the macros compare vectors of one model only.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from .schema import LLM_CALL_COLUMNS, column_description, comment_statements, duckdb_type, sql_string

# Queries record their LLM calls in a file beside the index (snapshot.query_calls_path),
# not in the read-only snapshot they read; the view of those calls reads the file as it
# is when queried. Its path is put in for this placeholder when a snapshot is published.
QUERY_CALLS_FILE = "$query_calls_file"
_QUERY_CALL_COLUMNS = ", ".join(f"{name}: '{duckdb_type(dtype)}'" for name, dtype in LLM_CALL_COLUMNS.items())


@dataclass(frozen=True)
class View:
    name: str
    description: str
    columns: dict[str, str]  # every column of the view, in order, with its description
    select: str


@dataclass(frozen=True)
class TableMacro:
    name: str
    parameters: tuple[str, ...]  # named so that no column of the tables it reads shadows them
    description: str
    select: str


def taken_from(table: str, **columns: str) -> dict[str, str]:
    """Descriptions of view columns copied from a table's columns (view name=table column)."""
    return {name: column_description(table, column) for name, column in columns.items()}


VIEWS = [
    View(
        "entity_text_units",
        "One row per entity and text unit mentioning it, with the document and source file the text unit was cut from.",
        taken_from("entities", corpus="corpus", entity_id="id")
        | {"entity_title": "Entity name (compares case-insensitively)."}
        | taken_from("entities", entity_type="type")
        | taken_from(
            "text_units", text_unit_id="id", chunk_index="chunk_index", text_unit_text="text", document_id="document_id"
        )
        | taken_from(
            "documents", document_title="title", source_path="source_path", source_partition="source_partition"
        ),
        """
        SELECT e.corpus, e.id AS entity_id, e.title COLLATE NOCASE AS entity_title, e.type AS entity_type,
               t.id AS text_unit_id, t.chunk_index, t.text AS text_unit_text, t.document_id,
               d.title AS document_title, d.source_path, d.source_partition
        FROM (SELECT *, unnest(text_unit_ids) AS text_unit_id FROM entities) e
        JOIN text_units t ON t.id = e.text_unit_id
        JOIN documents d ON d.id = t.document_id
        """,
    ),
    View(
        "entity_communities",
        (
            "The community hierarchy of each entity: one row per level it is clustered at, from level 0 (coarsest) "
            "down, with each community's report."
        ),
        taken_from("entities", corpus="corpus", entity_id="id")
        | {"entity_title": "Entity name (compares case-insensitively)."}
        | taken_from(
            "communities", level="level", community="community", parent_community="parent", community_size="size"
        )
        | taken_from("community_reports", report_title="title", report_rank="rank", report_summary="summary"),
        """
        SELECT c.corpus, e.id AS entity_id, e.title COLLATE NOCASE AS entity_title,
               c.level, c.community, c.parent AS parent_community, c.size AS community_size,
               r.title AS report_title, r.rank AS report_rank, r.summary AS report_summary
        FROM (SELECT *, unnest(entity_ids) AS entity_id FROM communities) c
        JOIN entities e ON e.id = c.entity_id
        LEFT JOIN community_reports r ON r.corpus = c.corpus AND r.community = c.community
        ORDER BY c.corpus, entity_title, c.level
        """,
    ),
    View(
        "reports_by_level_and_rank",
        "Community reports per level, most important first (rank_in_level 1 is the highest rank of its level).",
        taken_from("community_reports", corpus="corpus", level="level")
        | {"rank_in_level": "Position of the report in its level by rank, from 1."}
        | taken_from(
            "community_reports",
            rank="rank",
            community="community",
            parent_community="parent",
            title="title",
            summary="summary",
            community_size="size",
            generated_by="generated_by",
            report_id="id",
        ),
        """
        SELECT corpus, level, row_number() OVER (PARTITION BY corpus, level ORDER BY rank DESC, community) AS
        rank_in_level,
               rank, community, parent AS parent_community, title, summary, size AS community_size, generated_by, id AS
               report_id
        FROM community_reports
        ORDER BY corpus, level, rank_in_level
        """,
    ),
    View(
        "relationships_between_entities",
        (
            "Every relationship twice, once from each end: filter entity_a and entity_b on two titles, in any order "
            "and any case."
        ),
        taken_from("relationships", corpus="corpus")
        | {
            "entity_a": "Title of one end (compares case-insensitively).",
            "entity_b": "Title of the other end (compares case-insensitively).",
        }
        | taken_from(
            "relationships",
            description="description",
            weight="weight",
            combined_degree="combined_degree",
            text_unit_ids="text_unit_ids",
            relationship_id="id",
        )
        | {"entity_a_id": "entities.id of entity_a.", "entity_b_id": "entities.id of entity_b."},
        """
        SELECT corpus, source COLLATE NOCASE AS entity_a, target COLLATE NOCASE AS entity_b, description, weight,
               combined_degree, text_unit_ids, id AS relationship_id, source_id AS entity_a_id, target_id AS entity_b_id
        FROM relationships
        UNION ALL
        SELECT corpus, target COLLATE NOCASE, source COLLATE NOCASE, description, weight,
               combined_degree, text_unit_ids, id, target_id, source_id
        FROM relationships
        """,
    ),
    View(
        "source_file_status",
        (
            "Every source file seen: how far it was indexed, its documents and text units, failed LLM calls and read "
            "errors."
        ),
        taken_from("sources", corpus="corpus", source_partition="source_partition", source_path="source_path")
        | {
            "status": (
                "'indexed'; 'LLM calls failed' (the next build retries them); 'graph build pending' (read, not yet "
                "chunked); 'unreadable' (see error). The table sources holds the same as its status column."
            ),
            "documents": "Number of documents of the file in the index.",
            "document_titles": "Titles of those documents.",
            "text_units": "Number of text units of the file in the index.",
            "failed_llm_calls": "LLM calls for the file's text units that failed after retries (llm_failures).",
        }
        | taken_from("source_errors", error="error", error_recorded_at="recorded_at")
        | taken_from("sources", indexed_at="indexed_at", source_hash="source_hash"),
        """
        WITH files AS (
            SELECT corpus, source_partition, source_path FROM sources
            UNION SELECT corpus, source_partition, source_path FROM source_errors
            UNION SELECT corpus, source_partition, source_path FROM documents
        ),
        file_documents AS (
            SELECT source_partition, count(*) AS documents, list(title ORDER BY human_readable_id) AS document_titles
            FROM documents GROUP BY source_partition
        ),
        file_text_units AS (SELECT source_partition, count(*) AS text_units FROM text_units GROUP BY source_partition),
        file_failures AS (SELECT scope AS source_partition, count(*) AS failed_llm_calls FROM llm_failures GROUP BY
        scope)
        SELECT f.corpus, f.source_partition, f.source_path,
               CASE
                   WHEN e.error IS NOT NULL THEN 'unreadable'
                   WHEN s.status = 'extracted' THEN 'indexed'
                   WHEN s.status = 'failed' THEN 'LLM calls failed'
                   ELSE 'graph build pending'
               END AS status,
               coalesce(fd.documents, 0) AS documents, fd.document_titles, coalesce(ft.text_units, 0) AS text_units,
               coalesce(ff.failed_llm_calls, 0) AS failed_llm_calls, e.error, e.recorded_at AS error_recorded_at,
               s.indexed_at, s.source_hash
        FROM files f
        LEFT JOIN sources s ON s.source_partition = f.source_partition
        LEFT JOIN source_errors e ON e.source_partition = f.source_partition
        LEFT JOIN file_documents fd ON fd.source_partition = f.source_partition
        LEFT JOIN file_text_units ft ON ft.source_partition = f.source_partition
        LEFT JOIN file_failures ff ON ff.source_partition = f.source_partition
        ORDER BY f.corpus, f.source_partition
        """,
    ),
    View(
        "llm_usage_by_stage_and_model",
        (
            "LLM and embedding calls answered, and their tokens, per stage and model: every call the index file has "
            "paid for (llm_cache), all corpora and all runs together; a call answered from the cache is not counted "
            "again."
        ),
        taken_from("llm_cache", stage="stage", model="model")
        | {
            "answered_calls": "Calls answered (each counted once, however often its answer was reused).",
            "prompt_tokens": "Prompt tokens of those calls.",
            "completion_tokens": "Completion tokens of those calls.",
            "total_tokens": "prompt_tokens + completion_tokens.",
            "first_call_at": "When the first of those calls was answered.",
            "last_call_at": "When the last of those calls was answered.",
        },
        """
        SELECT stage, model, count(*) AS answered_calls, sum(prompt_tokens) AS prompt_tokens,
               sum(completion_tokens) AS completion_tokens, sum(prompt_tokens + completion_tokens) AS total_tokens,
               min(created_at) AS first_call_at, max(created_at) AS last_call_at
        FROM llm_cache
        GROUP BY stage, model
        ORDER BY total_tokens DESC, stage, model
        """,
    ),
    View(
        "query_llm_calls",
        (
            "LLM and embedding calls made by queries (graphrag_query), one row each as llm_calls records those of "
            "indexing: read from the file every query appends its calls to (<index>.query_calls.jsonl beside "
            "the index), "
            "as it is now."
        ),
        taken_from("llm_calls", **{column: column for column in LLM_CALL_COLUMNS}),
        # ignore_errors: a line cut off by a killed query process reads as NULLs, dropped here.
        f"""
        SELECT * FROM read_json(
            {QUERY_CALLS_FILE}, format = 'newline_delimited', columns = {{{_QUERY_CALL_COLUMNS}}}, ignore_errors = true
        )
        WHERE called_at IS NOT NULL
        """,
    ),
    View(
        "evaluation_trend",
        (
            "Answer quality per build and query mode, oldest build first (table evaluations): the shares of answers "
            "stating an expected answer and of gold documents in the context, refusals, latency, and the change "
            "since the corpus's previous build."
        ),
        taken_from("evaluations", corpus="corpus", build_id="build_id", built_at="built_at", mode="mode")
        | {
            "questions": "Questions asked.",
            "answer_contains": "Share of the questions with expected answers whose answer states one.",
            "refusals": "Answers that were the no-data answer.",
            "gold_present_2k": "Share of gold documents in the context at 2,000 tokens (questions with gold).",
            "gold_present_4k": "As gold_present_2k, at 4,000 tokens.",
            "gold_present_8k": "As gold_present_2k, at 8,000 tokens.",
            "median_seconds": "Median wall time of an answer.",
            "answer_contains_change": "answer_contains minus the previous build's (NULL for the first).",
            "gold_present_4k_change": "gold_present_4k minus the previous build's (NULL for the first).",
        },
        """
        WITH per_build AS (
            SELECT corpus, build_id, any_value(built_at) AS built_at, mode, count(*) AS questions,
                   avg(answer_contains::INTEGER) AS answer_contains, count(*) FILTER (WHERE refused) AS refusals,
                   avg(gold_present_2k) AS gold_present_2k, avg(gold_present_4k) AS gold_present_4k,
                   avg(gold_present_8k) AS gold_present_8k, median(seconds) AS median_seconds
            FROM evaluations
            GROUP BY corpus, build_id, mode
        )
        SELECT *,
               answer_contains - lag(answer_contains) OVER build_order AS answer_contains_change,
               gold_present_4k - lag(gold_present_4k) OVER build_order AS gold_present_4k_change
        FROM per_build
        WINDOW build_order AS (PARTITION BY corpus, mode ORDER BY built_at)
        ORDER BY corpus, built_at, mode
        """,
    ),
    View(
        "llm_cost_by_corpus_stage_and_model",
        (
            "What LLM and embedding calls cost, per corpus, indexing stage or query mode, and model: the calls of "
            "indexing (llm_calls) and of queries (query_llm_calls), each at the price of its model when it was made."
        ),
        taken_from("llm_calls", corpus="corpus", stage="stage", model="model")
        | {
            "calls": "Calls made, answered by the endpoint or the cache.",
            "cached_calls": "Of those, calls answered from the cache (no tokens, no cost).",
            "prompt_tokens": "Prompt tokens sent to the endpoint.",
            "completion_tokens": "Completion tokens the endpoint wrote.",
            "cost_usd": "What the calls cost, in USD, each at its price when made.",
            "first_call_at": "When the first of those calls was made.",
            "last_call_at": "When the last of those calls was made.",
        },
        """
        SELECT corpus, stage, model, count(*) AS calls, count(*) FILTER (WHERE cached) AS cached_calls,
               sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens, sum(cost_usd) AS
               cost_usd,
               min(called_at) AS first_call_at, max(called_at) AS last_call_at
        FROM (SELECT * FROM llm_calls UNION ALL SELECT * FROM query_llm_calls)
        GROUP BY corpus, stage, model
        ORDER BY corpus, cost_usd DESC, stage, model
        """,
    ),
]

MACROS = [
    TableMacro(
        "nearest_entities",
        ("entity", "k"),
        (
            "nearest_entities(entity, k): the k entities whose description embeddings are most similar (cosine) to the "
            "entity titled `entity` (any case), itself first, per corpus holding that title."
        ),
        """
        WITH target AS (
            SELECT v.corpus, v.model, v.vector
            FROM entities e JOIN embeddings v ON v.kind = 'entity_description' AND v.id = e.id
            WHERE lower(e.title) = lower(entity)
        )
        SELECT e.corpus, e.title AS entity_title, e.type AS entity_type,
               list_cosine_similarity(v.vector, target.vector) AS similarity, e.description, e.id AS entity_id
        FROM target
        JOIN embeddings v ON v.corpus = target.corpus AND v.kind = 'entity_description' AND v.model = target.model
        JOIN entities e ON e.id = v.id
        QUALIFY row_number() OVER (PARTITION BY e.corpus ORDER BY similarity DESC, e.title) <= k
        ORDER BY e.corpus, similarity DESC, e.title
        """,
    ),
    TableMacro(
        "nearest_text_units",
        ("text_unit", "k"),
        (
            "nearest_text_units(text_unit, k): the k text units most similar (cosine of their embeddings) to the text "
            "unit with id `text_unit`, itself first, with their documents."
        ),
        """
        WITH target AS (SELECT corpus, model, vector FROM embeddings WHERE kind = 'text_unit_text' AND id = text_unit)
        SELECT t.corpus, t.id AS text_unit_id, list_cosine_similarity(v.vector, target.vector) AS similarity,
               d.title AS document_title, d.source_path, t.text AS text_unit_text
        FROM target
        JOIN embeddings v ON v.corpus = target.corpus AND v.kind = 'text_unit_text' AND v.model = target.model
        JOIN text_units t ON t.id = v.id
        JOIN documents d ON d.id = t.document_id
        ORDER BY similarity DESC, t.id
        LIMIT k
        """,
    ),
]


def view_statements(query_calls_file: str, in_lake: bool = False) -> list[str]:
    """The views and macros with their comments. ``in_lake``: without the comments a
    DuckLake catalog cannot hold (on a view's columns, on a macro); the view itself keeps its
    description, and each column's is that of the table column it comes from."""
    statements = []
    for view in VIEWS:
        select = view.select.strip().replace(QUERY_CALLS_FILE, sql_string(query_calls_file))
        statements += [
            f'CREATE OR REPLACE VIEW "{view.name}" AS {select}',
            f'COMMENT ON VIEW "{view.name}" IS {sql_string(view.description)}',
        ]
        if not in_lake:
            statements += [
                f'COMMENT ON COLUMN "{view.name}"."{column}" IS {sql_string(text)}'
                for column, text in view.columns.items()
            ]
    for macro in MACROS:
        statements.append(
            f'CREATE OR REPLACE MACRO "{macro.name}"({", ".join(macro.parameters)}) AS TABLE {macro.select.strip()}'
        )
        if not in_lake:
            statements.append(f'COMMENT ON MACRO TABLE "{macro.name}" IS {sql_string(macro.description)}')
    return statements


def describe_for_sql_users(connection: duckdb.DuckDBPyConnection, query_calls_file: str, in_lake: bool = False) -> None:
    """Comment every table and column, and create the views and macros (in a snapshot
    being published, or in a DuckLake as it is published; the tables must exist, and the
    file of query calls too)."""
    connection.execute("BEGIN TRANSACTION")  # one commit, not one per statement (~200 of them)
    for statement in [*comment_statements(), *view_statements(query_calls_file, in_lake)]:
        connection.execute(statement)
    connection.execute("COMMIT")
