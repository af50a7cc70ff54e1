"""The index tables: canonical columns and types, and which column scopes a partition.

Column names follow Microsoft GraphRAG 3.x's output tables, plus ``corpus`` (every
graph-wide table) and ``source_partition`` (every per-source table) that scope
Dagster partitions, and content hashes used for incremental work.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import polars as pl

from graphrag_common.lexical import SEARCH_TERM_COLUMNS

from ..core.chunking import TEXT_UNIT_COLUMNS
from ..core.claims import COVARIATE_COLUMNS
from ..core.communities import COMMUNITY_COLUMNS
from ..core.content import WRAPPING_COLUMNS
from ..core.embedding import EMBEDDING_COLUMNS
from ..core.evaluation import EVALUATION_COLUMNS
from ..core.extraction.records import EXTRACTED_ENTITY_COLUMNS, EXTRACTED_RELATIONSHIP_COLUMNS
from ..core.graph import ENTITY_COLUMNS, RELATIONSHIP_COLUMNS
from ..core.inputs import DOCUMENT_COLUMNS
from ..core.reports import REPORT_COLUMNS
from ..core.resolution import MERGE_COLUMNS


@dataclass(frozen=True)
class Table:
    name: str
    columns: dict[str, pl.DataType]
    partition_column: str | None  # rows of one Dagster partition share its value; None: rows are only added
    primary_key: tuple[str, ...]
    description: str
    # SQL that fills a column an older index does not have yet, when ensure_schema adds it
    # (other new columns are NULL).
    backfill: Mapping[str, str] = field(default_factory=dict)


# sources.status: how far a source file got. Read: its documents are stored, the corpus's
# graph build has not chunked it yet. Extracted: chunked and every text unit extracted (the
# file counts as indexed). Failed: chunked, and a text unit's LLM call failed; the next build
# extracts it again.
SOURCE_READ, SOURCE_EXTRACTED, SOURCE_FAILED = "read", "extracted", "failed"
SOURCE_COLUMNS = {
    "corpus": pl.String,
    "source_partition": pl.String,
    "source_path": pl.String,
    "source_hash": pl.String,
    "settings_hash": pl.String,
    "documents": pl.Int64,
    "text_units": pl.Int64,
    "indexed_at": pl.Datetime("us", "UTC"),
    "status": pl.String,
}
SOURCE_FOLDER_COLUMNS = {
    "corpus": pl.String,
    "source_partition": pl.String,
    "corpus_folder": pl.String,
}
SOURCE_ERROR_COLUMNS = {
    "corpus": pl.String,
    "source_partition": pl.String,
    "source_path": pl.String,
    "error": pl.String,
    "recorded_at": pl.Datetime("us", "UTC"),
}
LLM_FAILURE_COLUMNS = {
    "scope": pl.String,  # the rows a step replaces: its source partition, or "<corpus>#summary" / "<corpus>#report"
    "stage": pl.String,
    "item_id": pl.String,
    "error": pl.String,
    "recorded_at": pl.Datetime("us", "UTC"),
    "corpus": pl.String,
    "source_partition": pl.String,  # the source the next build extracts again; NULL for a graph stage's call
}
# The scope of a graph stage's failed calls ("<corpus>#summary"), for indexes made before
# the corpus and source_partition columns.
_GRAPH_SCOPE = r"'#(summary|report)$'"
CORPUS_BUILD_COLUMNS = {
    "corpus": pl.String,
    "sources_hash": pl.String,
    "stage_fingerprints": pl.String,  # JSON, stage -> code version and settings hash (graphrag_assets.fingerprints)
    "built_at": pl.Datetime("us", "UTC"),
}
LLM_CACHE_COLUMNS = {
    "key": pl.String,
    "stage": pl.String,
    "model": pl.String,
    "value": pl.String,
    "prompt_tokens": pl.Int64,
    "completion_tokens": pl.Int64,
    "created_at": pl.Datetime("us", "UTC"),
}
LLM_CALL_COLUMNS = {
    "called_at": pl.Datetime("us", "UTC"),
    "corpus": pl.String,
    "stage": pl.String,
    "run_id": pl.String,
    "model": pl.String,
    "cached": pl.Boolean,
    "prompt_tokens": pl.Int64,
    "completion_tokens": pl.Int64,
    "price_input_per_million": pl.Float64,
    "price_output_per_million": pl.Float64,
    "cost_usd": pl.Float64,
}

TABLES = {
    table.name: table
    for table in [
        Table("documents", DOCUMENT_COLUMNS, "source_partition", ("id",), "One row per input document."),
        Table(
            "text_units",
            TEXT_UNIT_COLUMNS | {"entity_ids": pl.List(pl.String), "relationship_ids": pl.List(pl.String)},
            "source_partition",
            ("id",),
            "Token chunks of documents; entity_ids/relationship_ids are filled by the graph build.",
        ),
        Table(
            "extracted_entities",
            EXTRACTED_ENTITY_COLUMNS,
            "source_partition",
            ("text_unit_id", "name_key"),
            "Entity records per text unit, before merging.",
        ),
        Table(
            "extracted_relationships",
            EXTRACTED_RELATIONSHIP_COLUMNS,
            "source_partition",
            ("text_unit_id", "source_key", "target_key"),
            "Same-sentence relationship evidence per text unit, before merging.",
        ),
        Table(
            "covariates",
            COVARIATE_COLUMNS,
            "source_partition",
            ("id",),
            (
                "Claims per text unit (GRAPHRAG_LLM_CLAIMS), subject and object as extracted; readers resolve them "
                "to merged entities."
            ),
        ),
        Table(
            "sources",
            SOURCE_COLUMNS,
            "source_partition",
            ("source_partition",),
            "Source files read, and how far each got (status), with their content hash.",
            # Indexes made before the column: a row was written once a file was chunked.
            backfill={
                "status": f"CASE WHEN settings_hash IS NULL THEN '{SOURCE_FAILED}' ELSE '{SOURCE_EXTRACTED}' END"
            },
        ),
        Table(
            "source_folders",
            SOURCE_FOLDER_COLUMNS,
            "source_partition",
            ("source_partition",),
            (
                "The corpus folder each source file was last found in: a pass deletes a missing file's rows only "
                "when its input holds that folder."
            ),
        ),
        Table(
            "document_wrapping",
            WRAPPING_COLUMNS,
            "source_partition",
            ("document_id", "start"),
            (
                "Text of each document left out of chunking, extraction, reports and retrieval because it is not the "
                "document's content (GRAPHRAG_KEEP_WRAPPING keeps it), or left out of the graph alone because the "
                "document had added as many names as one may (kind graph_limit): where, what kind, and how it begins."
            ),
        ),
        Table(
            "source_errors",
            SOURCE_ERROR_COLUMNS,
            "source_partition",
            ("source_partition",),
            "Source files that could not be read, and why.",
        ),
        Table("entities", ENTITY_COLUMNS, "corpus", ("id",), "Merged entities of a corpus."),
        Table("relationships", RELATIONSHIP_COLUMNS, "corpus", ("id",), "Merged relationships of a corpus."),
        Table(
            "entity_merges",
            MERGE_COLUMNS,
            "corpus",
            ("corpus", "name_key", "merged_into_key"),
            (
                "Names merged by entity resolution, into which entity, why and who decided; pairs proposed but not "
                "applied have rejected = true."
            ),
        ),
        Table("communities", COMMUNITY_COLUMNS, "corpus", ("id",), "Hierarchical Leiden communities, all levels."),
        Table("community_reports", REPORT_COLUMNS, "corpus", ("id",), "One report per community."),
        Table(
            "embeddings",
            EMBEDDING_COLUMNS,
            "corpus",
            ("kind", "id"),
            "Vectors of text units, entity descriptions and reports.",
        ),
        Table(
            "search_terms",
            SEARCH_TERM_COLUMNS,
            "corpus",
            ("corpus", "kind", "id", "term"),
            "BM25 terms of text units and reports (folded, stemmed words; Chinese bigrams) with their counts (tf).",
        ),
        Table(
            "llm_failures",
            LLM_FAILURE_COLUMNS,
            "scope",
            ("scope", "stage", "item_id"),
            "LLM calls that failed after retries; a rerun retries exactly these.",
            backfill={
                "corpus": f"CASE WHEN regexp_matches(scope, {_GRAPH_SCOPE}) "
                f"THEN regexp_replace(scope, {_GRAPH_SCOPE}, '') ELSE split_part(scope, '/', 1) END",
                "source_partition": f"CASE WHEN regexp_matches(scope, {_GRAPH_SCOPE}) THEN NULL ELSE scope END",
            },
        ),
        Table(
            "corpus_builds",
            CORPUS_BUILD_COLUMNS,
            "corpus",
            ("corpus",),
            "Last complete graph build of each corpus: the sources and the stage fingerprints it saw.",
        ),
        Table(
            "evaluations",
            EVALUATION_COLUMNS,
            "build_id",
            ("build_id", "mode", "question_id"),
            (
                "Answer quality of each build of a corpus with a questions file (GRAPHRAG_EVAL_QUESTIONS): one row "
                "per build, query mode and question. Joins corpus_builds on (corpus, built_at) while the build is "
                "the corpus's last."
            ),
        ),
        # Declared here although only the LLM client writes it, so that every index has it
        # (the SQL views of LLM usage read it, offline indexes included).
        Table(
            "llm_cache",
            LLM_CACHE_COLUMNS,
            None,
            ("key",),
            (
                "Every answered LLM and embedding call, by a key of model, prompt and parameters: a rerun asks nothing "
                "twice."
            ),
        ),
        Table(
            "llm_calls",
            LLM_CALL_COLUMNS,
            None,
            ("called_at", "stage", "model"),
            (
                "Every LLM and embedding call of indexing, answered by the endpoint or the cache, with the price "
                "it was made at."
            ),
        ),
    ]
}


# What each column means: the one source of the comments on the tables of every published
# snapshot (COMMENT ON COLUMN) and of the assets' column schemas in the Dagster UI. A column
# name means the same in every table unless the table describes it itself.
SHARED_COLUMN_DESCRIPTIONS = {
    "id": "Stable identifier, a hash of the row's content or location (never random).",
    "human_readable_id": (
        "Short number of the row within its corpus, kept across updates; reports cite rows by it ([Data: Entities "
        "(3)])."
    ),
    "corpus": (
        "Corpus of the row: a folder of the input directory ('default' for files directly in it). Filter every query "
        "on one."
    ),
    "source_partition": "The source file's Dagster partition, '<corpus>/<path inside the corpus>'.",
    "source_path": "Path of the source file inside its corpus folder.",
    "source_hash": "sha256 of the source file's bytes when it was read.",
    "content_hash": "Hash of the row's content: incremental updates reuse work whose hash is unchanged.",
    "text_unit_id": "The text unit (text_units.id) this row was extracted from.",
    "text_unit_ids": "Text units (text_units.id) this row was found in.",
    "description": "Description written by the extraction (or the LLM summary of all of them).",
    "weight": "Strength of the relationship: co-occurrence weighted by NPMI offline, the model's strength with an LLM.",
    "community": "Community number, unique within the corpus across all levels.",
    "level": "Hierarchy level: 0 is the coarsest partition of the graph, each level below splits its parent.",
    "parent": "Community number of the parent one level up (-1 at level 0).",
    "children": "Community numbers of the communities that split this one, one level down.",
    "period": "Date the community was built (YYYY-MM-DD).",
    "size": "Number of entities in the community.",
    "stage": "The step that made the LLM call, e.g. extraction, claims, summary, report or embedding.",
    "recorded_at": "When the error was recorded.",
}
COLUMN_DESCRIPTIONS = {
    "documents": {
        "title": "Document title: the file name, or the title column of a CSV/JSONL/Parquet row.",
        "text": "Full text of the document.",
    },
    "text_units": {
        "text": "Text of the chunk.",
        "n_tokens": "Length of the chunk in tokens.",
        "document_id": "The document (documents.id) the chunk was cut from.",
        "chunk_index": "Position of the chunk in its document, from 0.",
        "entity_ids": (
            "Entities (entities.id) mentioned in the chunk; written by the graph build. Membership: "
            "list_contains(entity_ids, "
            "id)."
        ),
        "relationship_ids": "Relationships (relationships.id) evidenced by the chunk; written by the graph build.",
    },
    "extracted_entities": {
        "name_key": "Normalised name the graph build merges records by (entities.name_key).",
        "title": "Name as extracted from the text unit.",
        "type": "Entity type as extracted (PERSON, ORGANIZATION, GEO, EVENT, CONCEPT, ...).",
        "description": "What the text unit says about the entity.",
        "mentions": "Times the name occurs in the text unit.",
        "document_title": (
            "True when the name is the document's own title: the graph keeps it however rarely mentioned (NULL from "
            "the LLM and older records)."
        ),
    },
    "extracted_relationships": {
        "source_key": "name_key of one end.",
        "target_key": "name_key of the other end.",
        "description": "What the text unit says about the pair.",
        "weight": "Evidence of the pair in this text unit.",
    },
    "covariates": {
        "covariate_type": "Always 'claim'.",
        "type": "Claim type, e.g. FUNDING or MEETING.",
        "description": "The claim in words.",
        "subject_id": "Subject entity's name as extracted (resolve through entity_merges and entities.name_key).",
        "object_id": "Object entity's name as extracted, or NULL.",
        "status": "TRUE, FALSE or SUSPECTED.",
        "start_date": "Start of the claim's period (ISO date), if stated.",
        "end_date": "End of the claim's period (ISO date), if stated.",
        "source_text": "Quotation from the text unit that supports the claim.",
    },
    "sources": {
        "settings_hash": "Reading fingerprint the file was indexed with; NULL until every text unit is extracted.",
        "documents": "Number of documents read from the file.",
        "text_units": "Number of text units cut from the file (NULL until chunked).",
        "indexed_at": "When the file's row was last written.",
        "status": (
            "read (documents stored, chunking and extraction pending), extracted (every text unit extracted: "
            "indexed) or failed (a text unit's LLM call failed; the next build extracts it again)."
        ),
    },
    "document_wrapping": {
        "document_id": "documents.id of the document the text was left out of.",
        "kind": (
            "distributor_header, distributor_licence and credits (an e-book's Project Gutenberg header, licence and "
            "producers), contents (a table of contents or list of illustrations), illustration, transcriber_note, "
            "end_mark, page_furniture (page numbers, running heads), imprint (publisher's front matter); or "
            "graph_limit: the rest of a document from its first text unit whose names would pass "
            "GRAPHRAG_MAX_DOCUMENT_PAIRS (chunked and searchable, but not extracted into the graph)."
        ),
        "start": "Offset of the first character left out, in documents.text.",
        "end": "Offset after the last character left out, in documents.text.",
        "characters": "Characters left out (end - start).",
        "excerpt": "The beginning of the text left out, whitespace folded, at most 120 characters.",
    },
    "source_folders": {
        "corpus_folder": (
            "Absolute path of the corpus's folder the file was found in: <input>/<corpus>, or the input folder itself "
            "for loose files and a forced corpus."
        ),
    },
    "source_errors": {
        "error": (
            "Why the file could not be read (empty, binary, not UTF-8, a missing column, ...); its earlier rows are "
            "kept."
        ),
    },
    "entities": {
        "title": "Entity name, as most often written.",
        "type": "Entity type (PERSON, ORGANIZATION, GEO, EVENT, CONCEPT, ...).",
        "description": "Merged description of the entity (an LLM summary when descriptions were many).",
        "frequency": "Number of text units mentioning the entity.",
        "degree": "Number of relationships of the entity.",
        "name_key": "Normalised name: lower case, without punctuation or honorifics; what merging compares.",
    },
    "relationships": {
        "source": "Title of one end (entities.title); the direction has no meaning.",
        "target": "Title of the other end (entities.title).",
        "combined_degree": "Sum of the degrees of both ends.",
        "source_id": "entities.id of source.",
        "target_id": "entities.id of target.",
    },
    "entity_merges": {
        "name_key": "The name merged away (or proposed to be).",
        "title": "That name as written.",
        "merged_into_key": "name_key of the entity it was merged into.",
        "merged_into_title": "Title of the entity it was merged into.",
        "reason": "Evidence that proposed the merge (abbreviation, honorific dropped, spelling variant, ...).",
        "score": "Strength of that evidence, 0 to 1.",
        "decided_by": "'rule', the confirming model's name, or 'rule (LLM failed)'.",
        "rejected": "True when proposed but not applied: the name stays its own entity.",
        "decision_reason": "The model's reason, or why the pair was not applied.",
    },
    "communities": {
        "title": "'Community <number>' (the report has a descriptive title).",
        "entity_ids": "Member entities (entities.id).",
        "relationship_ids": "Relationships (relationships.id) between members.",
        "text_unit_ids": "Text units (text_units.id) mentioning members.",
    },
    "community_reports": {
        "title": "Report title naming the community's main entities.",
        "summary": "Executive summary of the report.",
        "full_content": "The whole report as markdown, with [Data: ...] citations of rows by human_readable_id.",
        "rank": "Importance of the community, 0 to 10.",
        "rating_explanation": "Why the rank was given.",
        "findings": "Findings, each a summary and an explanation.",
        "full_content_json": "The report as the JSON document it was written as.",
        "generated_by": "'extractive' (offline) or the model that wrote the report.",
        "input_hash": (
            "Hash of what the model read (model reports only): an unchanged input keeps the report without a call."
        ),
    },
    "embeddings": {
        "id": "Id of the embedded row: text_units.id, entities.id or community_reports.id, depending on kind.",
        "kind": (
            "What was embedded: 'text_unit_text', 'entity_description' (title: description) or "
            "'community_full_content'."
        ),
        "model": (
            "Embedder: 'hashed-ngram-crc32-<dimensions>', a MiniLM model or the embedding model; vectors of different "
            "models are not comparable."
        ),
        "text": "The text that was embedded.",
        "vector": (
            "The embedding; its length depends on the model. Compare with list_cosine_similarity (no cast needed)."
        ),
    },
    "search_terms": {
        "kind": "'text_unit_text' or 'community_full_content'.",
        "id": "text_units.id or community_reports.id, depending on kind.",
        "term": "A term as the query side tokenizes: folded, plural-stemmed word or Chinese bigram.",
        "tf": "Times the term occurs in the text.",
    },
    "llm_failures": {
        "scope": "What the call was for: a source partition, or '<corpus>#summary' / '<corpus>#report'.",
        "corpus": "The corpus of the call.",
        "source_partition": "The source the next build extracts again; NULL for a call of the graph or reports stage.",
        "item_id": "The item whose call failed: a text unit, entity or community.",
        "error": "The last error after retries.",
    },
    "corpus_builds": {
        "sources_hash": "Fingerprint of the corpus's sources and how far each was indexed, as the build saw them.",
        "stage_fingerprints": (
            "JSON: stage -> code version and hash of the settings it read (graphrag_assets.fingerprints)."
        ),
        "built_at": "When the build completed.",
    },
    "evaluations": {
        "build_id": "The build evaluated: '<corpus>@<corpus_builds.built_at in epoch microseconds>'.",
        "built_at": "corpus_builds.built_at of the build evaluated.",
        "mode": "Query mode asked: basic, local, global, drift or auto.",
        "question_id": "The question's id in the questions file (its line number when it has none).",
        "question": "The question as asked.",
        "kind": "The question's kind in the questions file, if it gives one (e.g. local, multihop, global).",
        "method": "The mode that answered (for auto, the one it routed to).",
        "answer": "The answer a user would have read.",
        "generated_by": "'extractive' (offline) or the model that wrote the answer.",
        "answer_contains": (
            "The answer states one of the question's expected answers or aliases, as whole words (case, accents and "
            "punctuation ignored); NULL when the question has none."
        ),
        "refused": "The answer is the no-data answer.",
        "gold_documents": (
            "Gold documents the question names: gold_titles, and gold_ids (documents.id or the source file's path "
            "in the corpus); NULL when none."
        ),
        "gold_present_2k": (
            "Share of the gold documents with a text unit in the context the mode builds offline at 2,000 tokens; "
            "NULL without gold documents, or for a mode whose context holds no text units."
        ),
        "gold_present_4k": "As gold_present_2k, at 4,000 tokens.",
        "gold_present_8k": "As gold_present_2k, at 8,000 tokens.",
        "context_tokens": "Context tokens of the answer's search.",
        "seconds": "Wall time of the answer's search.",
        "evaluated_at": "When the evaluation ran.",
    },
    "llm_cache": {
        "key": "Hash of model, messages, parameters, schema and prompt version.",
        "model": "Model that answered.",
        "value": "The answer (JSON for structured outputs, a vector for embeddings).",
        "prompt_tokens": "Prompt tokens the endpoint reported for the call.",
        "completion_tokens": "Completion tokens the endpoint reported (0 for embeddings).",
        "created_at": "When the answer came back.",
    },
    "llm_calls": {
        "called_at": "When the call was answered.",
        "corpus": "Corpus the call was made for (NULL for work outside one corpus).",
        "stage": (
            "Where the call was made: an indexing stage (extraction, glean, claims, summary, confirm_merges, report, "
            "embedding) or a query mode (global_search, local_search, drift_search, basic_search, query_embedding)."
        ),
        "run_id": "Dagster run that made the call (NULL for queries and runs outside Dagster).",
        "model": "Model asked.",
        "cached": (
            "True when the answer came from the cache: no tokens, no cost. For embeddings, one row stands for "
            "the texts "
            "of one request found in the cache."
        ),
        "prompt_tokens": "Prompt tokens the endpoint reported (0 when cached).",
        "completion_tokens": "Completion tokens the endpoint reported (0 when cached, and for embeddings).",
        "price_input_per_million": (
            "USD per million prompt tokens of this model when the call was made (GRAPHRAG_LLM_PRICES, else "
            "GRAPHRAG_LLM_PRICE_INPUT)."
        ),
        "price_output_per_million": (
            "USD per million completion tokens of this model when the call was made (GRAPHRAG_LLM_PRICES, "
            "else GRAPHRAG_LLM_PRICE_OUTPUT)."
        ),
        "cost_usd": "What the call cost at those prices, in USD (0 when cached).",
    },
}


def column_description(table_name: str, column: str) -> str:
    described = COLUMN_DESCRIPTIONS[table_name].get(column) or SHARED_COLUMN_DESCRIPTIONS.get(column)
    if described is None:
        raise KeyError(
            f"column {table_name}.{column} has no description: add it to COLUMN_DESCRIPTIONS in storage/schema.py"
        )
    return described


def sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def comment_statements() -> list[str]:
    """COMMENT ON every table and column of the index, from the descriptions above."""
    statements = []
    for table in TABLES.values():
        statements.append(f'COMMENT ON TABLE "{table.name}" IS {sql_string(table.description)}')
        statements += [
            f'COMMENT ON COLUMN "{table.name}"."{column}" IS {sql_string(column_description(table.name, column))}'
            for column in table.columns
        ]
    return statements


def duckdb_type(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.List):
        return f"{duckdb_type(dtype.inner)}[]"
    if isinstance(dtype, pl.Struct):
        return "STRUCT(" + ", ".join(f'"{f.name}" {duckdb_type(f.dtype)}' for f in dtype.fields) + ")"
    if isinstance(dtype, pl.Datetime):
        return "TIMESTAMPTZ" if dtype.time_zone else "TIMESTAMP"
    simple = {
        pl.String: "VARCHAR",
        pl.Int64: "BIGINT",
        pl.Float64: "DOUBLE",
        pl.Float32: "FLOAT",
        pl.Boolean: "BOOLEAN",
    }
    for polars_type, sql_type in simple.items():
        if dtype == polars_type:
            return sql_type
    raise TypeError(f"no DuckDB type for {dtype}")


def create_statement(table: Table) -> str:
    columns = ",\n  ".join(f'"{name}" {duckdb_type(dtype)}' for name, dtype in table.columns.items())
    return f'CREATE TABLE IF NOT EXISTS "{table.name}" (\n  {columns}\n)'


def conform(table: Table, frame: pl.DataFrame) -> pl.DataFrame:
    """The frame in the table's canonical column order and types; a missing or unknown
    column is an error (never a silent positional shift)."""
    missing = [c for c in table.columns if c not in frame.columns]
    extra = [c for c in frame.columns if c not in table.columns]
    if missing or extra:
        raise ValueError(
            f"frame for table {table.name!r} does not match its schema: missing {missing}, unexpected {extra}"
        )
    return frame.select(list(table.columns)).cast(table.columns)
