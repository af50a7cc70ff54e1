"""The index tables: canonical columns and types, and which column scopes a partition.

Column names follow Microsoft GraphRAG 3.x's output tables, plus ``corpus`` (every
graph-wide table) and ``source_partition`` (every per-source table) that scope
Dagster partitions, and content hashes used for incremental work.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..core.chunking import TEXT_UNIT_COLUMNS
from ..core.claims import COVARIATE_COLUMNS
from ..core.communities import COMMUNITY_COLUMNS
from ..core.embedding import EMBEDDING_COLUMNS
from ..core.extraction.records import EXTRACTED_ENTITY_COLUMNS, EXTRACTED_RELATIONSHIP_COLUMNS
from ..core.graph import ENTITY_COLUMNS, RELATIONSHIP_COLUMNS
from ..core.inputs import DOCUMENT_COLUMNS
from ..core.lexical import SEARCH_TERM_COLUMNS
from ..core.reports import REPORT_COLUMNS
from ..core.resolution import MERGE_COLUMNS


@dataclass(frozen=True)
class Table:
    name: str
    columns: dict[str, pl.DataType]
    partition_column: str  # rows of one Dagster partition share this column's value
    primary_key: tuple[str, ...]
    description: str


SOURCE_COLUMNS = {
    "corpus": pl.String,
    "source_partition": pl.String,
    "source_path": pl.String,
    "source_hash": pl.String,
    "settings_hash": pl.String,
    "documents": pl.Int64,
    "text_units": pl.Int64,
    "indexed_at": pl.Datetime("us", "UTC"),
}
SOURCE_ERROR_COLUMNS = {
    "corpus": pl.String,
    "source_partition": pl.String,
    "source_path": pl.String,
    "error": pl.String,
    "recorded_at": pl.Datetime("us", "UTC"),
}
LLM_FAILURE_COLUMNS = {
    "scope": pl.String,  # a source partition, or "<corpus>#summary" / "<corpus>#report"
    "stage": pl.String,
    "item_id": pl.String,
    "error": pl.String,
    "recorded_at": pl.Datetime("us", "UTC"),
}
CORPUS_BUILD_COLUMNS = {
    "corpus": pl.String,
    "sources_hash": pl.String,
    "settings_hash": pl.String,
    "built_at": pl.Datetime("us", "UTC"),
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
        Table("extracted_entities", EXTRACTED_ENTITY_COLUMNS, "source_partition", ("text_unit_id", "name_key"), "Entity records per text unit, before merging."),
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
            "Claims per text unit (GRAPHRAG_LLM_CLAIMS), subject and object as extracted; readers resolve them to merged entities.",
        ),
        Table(
            "sources",
            SOURCE_COLUMNS,
            "source_partition",
            ("source_partition",),
            "Source files chunked (settings_hash NULL) or fully indexed (the settings they were indexed with), with their content hash.",
        ),
        Table("source_errors", SOURCE_ERROR_COLUMNS, "source_partition", ("source_partition",), "Source files that could not be read, and why."),
        Table("entities", ENTITY_COLUMNS, "corpus", ("id",), "Merged entities of a corpus."),
        Table("relationships", RELATIONSHIP_COLUMNS, "corpus", ("id",), "Merged relationships of a corpus."),
        Table(
            "entity_merges",
            MERGE_COLUMNS,
            "corpus",
            ("corpus", "name_key", "merged_into_key"),
            "Names merged by entity resolution, into which entity, why and who decided; pairs proposed but not applied have rejected = true.",
        ),
        Table("communities", COMMUNITY_COLUMNS, "corpus", ("id",), "Hierarchical Leiden communities, all levels."),
        Table("community_reports", REPORT_COLUMNS, "corpus", ("id",), "One report per community."),
        Table("embeddings", EMBEDDING_COLUMNS, "corpus", ("kind", "id"), "Vectors of text units, entity descriptions and reports."),
        Table(
            "search_terms",
            SEARCH_TERM_COLUMNS,
            "corpus",
            ("corpus", "kind", "id", "term"),
            "BM25 terms of text units and reports (folded, stemmed words; Chinese bigrams) with their counts (tf).",
        ),
        Table("llm_failures", LLM_FAILURE_COLUMNS, "scope", ("scope", "stage", "item_id"), "LLM calls that failed after retries; a rerun retries exactly these."),
        Table("corpus_builds", CORPUS_BUILD_COLUMNS, "corpus", ("corpus",), "Last complete graph build of each corpus: the sources and settings it saw."),
    ]
}


def duckdb_type(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.List):
        return f"{duckdb_type(dtype.inner)}[]"
    if isinstance(dtype, pl.Struct):
        return "STRUCT(" + ", ".join(f'"{f.name}" {duckdb_type(f.dtype)}' for f in dtype.fields) + ")"
    if isinstance(dtype, pl.Datetime):
        return "TIMESTAMPTZ" if dtype.time_zone else "TIMESTAMP"
    simple = {pl.String: "VARCHAR", pl.Int64: "BIGINT", pl.Float64: "DOUBLE", pl.Float32: "FLOAT", pl.Boolean: "BOOLEAN"}
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
        raise ValueError(f"frame for table {table.name!r} does not match its schema: missing {missing}, unexpected {extra}")
    return frame.select(list(table.columns)).cast(table.columns)
