"""Microsoft GraphRAG 3.x's parquet output and our tables, both ways.

graphrag writes one parquet file per table (``documents``, ``text_units``, ``entities``,
``relationships``, ``communities``, ``community_reports`` and, when it extracts claims,
``covariates``), with the columns of ``GRAPHRAG_COLUMNS``. Our tables use the same names
and add the columns that scope partitions and drive incremental work.

Import (``graphrag_to_tables``) maps graphrag's rows onto ours and derives what graphrag
does not write but our query side reads, with the functions the indexer uses: name keys,
chunk order, source partitions, relationship endpoint ids, and the names each text unit
mentions (the offline extractor's records, which link text units in local search's graph
walk). The vectors and BM25 terms come from ``search_index``.

Export (``tables_to_graphrag``) maps our rows back onto graphrag's layout. What does not
round-trip: ``documents.creation_date`` and ``documents.raw_data`` have no column in our
index and are exported null; row order is by ``human_readable_id`` (graphrag writes
community reports in the order it wrote them).

Plain functions over Polars frames; reading files and writing the index are the
caller's (``interop.loading``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl

from graphrag_common.ids import content_hash
from graphrag_common.lexical import search_term_rows

from ..core.communities import COMMUNITY_COLUMNS
from ..core.embedding import EMBEDDING_COLUMNS, Embedder, embed_missing, embedding_inputs
from ..core.extraction.names import name_key
from ..core.extraction.offline import extract_offline
from ..core.graph import ENTITY_COLUMNS, RELATIONSHIP_COLUMNS
from ..core.reports import REPORT_COLUMNS
from ..storage.schema import SOURCE_EXTRACTED, TABLES

_IDS = pl.List(pl.String)
_FINDING_FIELDS = ("explanation", "summary")  # graphrag's order of a finding's fields


def _graphrags(ours: dict[str, pl.DataType]) -> dict[str, pl.DataType]:
    """graphrag's columns of a table whose layout ours extends: ours up to ``corpus``, from
    which on our tables add the columns that scope partitions and drive incremental work."""
    names = list(ours)
    return {name: ours[name] for name in names[: names.index("corpus")]}


# graphrag 3.x's output tables, columns in its order with its types (as graphrag 3.1 writes them;
# tests/test_graphrag_interop.py compares them with a real graphrag index).
GRAPHRAG_COLUMNS: dict[str, dict[str, pl.DataType]] = {
    "documents": {
        "id": pl.String,
        "human_readable_id": pl.Int64,
        "title": pl.String,
        "text": pl.String,
        "text_unit_ids": _IDS,
        "creation_date": pl.String,
        "raw_data": pl.Null,  # the input row of a CSV/JSON document; null for text files
    },
    "text_units": {
        "id": pl.String,
        "human_readable_id": pl.Int64,
        "text": pl.String,
        "n_tokens": pl.Int64,
        "document_id": pl.String,
        "entity_ids": _IDS,
        "relationship_ids": _IDS,
        "covariate_ids": _IDS,
    },
    "entities": _graphrags(ENTITY_COLUMNS),
    "relationships": _graphrags(RELATIONSHIP_COLUMNS),
    "communities": _graphrags(COMMUNITY_COLUMNS),
    # A finding's fields in graphrag's order (the dict update keeps the column's place).
    "community_reports": _graphrags(REPORT_COLUMNS)
    | {"findings": pl.List(pl.Struct({field: pl.String for field in _FINDING_FIELDS}))},
    "covariates": {
        "id": pl.String,
        "human_readable_id": pl.Int64,
        "covariate_type": pl.String,
        "type": pl.String,
        "description": pl.String,
        "subject_id": pl.String,
        "object_id": pl.String,
        "status": pl.String,
        "start_date": pl.String,
        "end_date": pl.String,
        "source_text": pl.String,
        "text_unit_id": pl.String,
    },
}
# graphrag writes covariates only when it extracts claims.
OPTIONAL_TABLES = ("covariates",)
# Columns graphrag computes from other tables: import does not need them, export computes them.
RECOMPUTED_COLUMNS = {"documents": ("text_unit_ids",), "text_units": ("covariate_ids",)}
# Columns our index has no place for: import drops them, export writes them null.
NOT_KEPT_COLUMNS = {"documents": ("creation_date", "raw_data")}
# ``generated_by`` of imported reports: graphrag's output does not say which model wrote them.
IMPORTED_REPORTS = "graphrag (imported)"
# ``sources.settings_hash`` of imported sources: indexed (not pending extraction), but not
# with any reading fingerprint of ours, so indexing the corpus from files reads them again.
IMPORTED_SOURCES = "graphrag-import"


class GraphragFormatError(ValueError):
    """A graphrag output folder, file or column that cannot be imported; the message names it."""


def imported_columns(table: str) -> dict[str, pl.DataType]:
    """The columns of a graphrag table that import reads (each one required)."""
    skipped = RECOMPUTED_COLUMNS.get(table, ()) + NOT_KEPT_COLUMNS.get(table, ())
    return {name: dtype for name, dtype in GRAPHRAG_COLUMNS[table].items() if name not in skipped}


def checked_graphrag_table(table: str, frame: pl.DataFrame, origin: str) -> pl.DataFrame:
    """``frame`` (graphrag's ``table``, read from ``origin``) with the columns import reads,
    in our types; a missing column, a value of another type or a repeated id is a
    ``GraphragFormatError`` naming ``origin`` and the column."""
    wanted = imported_columns(table)
    missing = [name for name in wanted if name not in frame.columns]
    if missing:
        raise GraphragFormatError(
            f"{origin}: missing column(s) {', '.join(missing)} "
            f"(graphrag 3.x {table} has {', '.join(GRAPHRAG_COLUMNS[table])})"
        )
    columns = []
    for name, dtype in wanted.items():
        # A struct casts only to its own field order: findings are put in graphrag's by name.
        column = _findings(_FINDING_FIELDS) if name == "findings" else pl.col(name)
        try:
            columns.append(frame.select(column.cast(dtype, strict=True)).to_series())
        except (
            pl.exceptions.InvalidOperationError,
            pl.exceptions.ComputeError,
            pl.exceptions.SchemaError,
            pl.exceptions.StructFieldNotFoundError,
        ) as error:
            raise GraphragFormatError(
                f"{origin}: column {name} is {frame.schema[name]}, expected {dtype} ({error})"
            ) from None
    checked = pl.DataFrame(columns)
    repeated = checked.filter(pl.col("id").is_duplicated())["id"].unique().to_list()
    if repeated:
        raise GraphragFormatError(
            f"{origin}: column id has {len(repeated)} value(s) on more than one row, e.g. {repeated[0]!r}"
        )
    return checked


def _findings(fields: tuple[str, str]) -> pl.Expr:
    """The findings column with its struct fields in the order ``fields``."""
    return pl.col("findings").list.eval(pl.struct(*(pl.element().struct.field(f) for f in fields)))


def _unknown_references(frame: pl.DataFrame, column: str, known: pl.Series, table: str, target: str) -> None:
    dangling = frame.filter(~pl.col(column).is_in(known.implode()))[column].unique().to_list()
    if dangling:
        raise GraphragFormatError(
            f"{table}.parquet: {len(dangling)} {column} value(s) name no row of {target}.parquet, e.g. {dangling[0]!r}"
        )


def _ours(table: str, frame: pl.DataFrame) -> pl.DataFrame:
    columns = TABLES[table].columns
    return frame.select(list(columns)).cast(columns)


def graphrag_to_tables(
    frames: dict[str, pl.DataFrame], corpus: str, imported_at: dt.datetime
) -> dict[str, pl.DataFrame]:
    """Our tables of ``corpus`` from graphrag's (``checked_graphrag_table`` frames; covariates
    may be empty): every table but the search index and the build record. A document's
    rows form the source partition ``<corpus>/<document title>``, as a text file's do."""
    documents = _imported_documents(frames["documents"], corpus)
    units = _imported_text_units(frames["text_units"], documents, corpus)
    entities, relationships = _imported_graph(frames["entities"], frames["relationships"], corpus)
    covariates = frames["covariates"]
    _unknown_references(covariates, "text_unit_id", units["id"], "covariates", "text_units")
    covariates = covariates.join(
        units.select(pl.col("id").alias("text_unit_id"), "source_partition"), on="text_unit_id"
    ).with_columns(pl.lit(corpus).alias("corpus"))
    # What each text unit mentions by name, as an index of ours records it: the graph walk
    # of local search links text units through these, beyond graphrag's entity lists.
    extracted_entities, extracted_relationships = extract_offline(units)
    return {
        "documents": _ours("documents", documents),
        "text_units": _ours("text_units", units),
        "extracted_entities": extracted_entities,
        "extracted_relationships": extracted_relationships,
        "covariates": _ours("covariates", covariates),
        "sources": _ours("sources", _imported_sources(documents, units, corpus, imported_at)),
        "entities": _ours("entities", entities),
        "relationships": _ours("relationships", relationships),
        "entity_merges": pl.DataFrame(schema=TABLES["entity_merges"].columns),  # graphrag records no merges
        "communities": _ours("communities", frames["communities"].with_columns(pl.lit(corpus).alias("corpus"))),
        "community_reports": _ours("community_reports", _imported_reports(frames["community_reports"], corpus)),
    }


def _imported_documents(documents: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """graphrag's documents with their source: one partition per document title."""
    documents = documents.with_columns(
        pl.lit(corpus).alias("corpus"),
        pl.coalesce("title", "id").alias("source_path"),
        pl.col("text").map_elements(content_hash, return_dtype=pl.String).alias("content_hash"),
    ).with_columns((pl.lit(f"{corpus}/") + pl.col("source_path")).alias("source_partition"))
    # The source's hash stands for its file's: the content of its documents.
    return documents.with_columns(
        pl.col("content_hash")
        .sort()
        .str.join("")
        .over("source_partition")
        .map_elements(content_hash, return_dtype=pl.String)
        .alias("source_hash")
    )


def _imported_text_units(units: pl.DataFrame, documents: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """graphrag's text units in the source partitions of their documents, numbered in each."""
    _unknown_references(units, "document_id", documents["id"], "text_units", "documents")
    return units.join(
        documents.select(pl.col("id").alias("document_id"), "source_partition"), on="document_id"
    ).with_columns(
        pl.lit(corpus).alias("corpus"),
        # graphrag numbers text units in document order.
        (pl.col("human_readable_id").rank("ordinal").over("document_id") - 1).alias("chunk_index"),
        pl.col("text").map_elements(content_hash, return_dtype=pl.String).alias("content_hash"),
    )


def _imported_graph(
    entities: pl.DataFrame, relationships: pl.DataFrame, corpus: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """graphrag's entities with their name keys, and its relationships with their ends' ids."""
    entities = entities.with_columns(
        pl.lit(corpus).alias("corpus"), pl.col("title").map_elements(name_key, return_dtype=pl.String).alias("name_key")
    )
    # graphrag keeps relationships to names it did not keep as entities: their ids stay null.
    ends = entities.select("title", "id")
    relationships = (
        relationships.join(ends.rename({"title": "source", "id": "source_id"}), on="source", how="left")
        .join(ends.rename({"title": "target", "id": "target_id"}), on="target", how="left")
        .with_columns(pl.lit(corpus).alias("corpus"))
    )
    return entities, relationships


def _imported_reports(reports: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """graphrag's reports, marked as imported: no input hash, so a build of ours writes its own."""
    return reports.with_columns(
        _findings(("summary", "explanation")),
        pl.lit(corpus).alias("corpus"),
        pl.lit(IMPORTED_REPORTS).alias("generated_by"),
        pl.col("full_content").map_elements(content_hash, return_dtype=pl.String).alias("content_hash"),
        pl.lit(None, pl.String).alias("input_hash"),
    )


def _imported_sources(
    documents: pl.DataFrame, units: pl.DataFrame, corpus: str, imported_at: dt.datetime
) -> pl.DataFrame:
    """A source per partition, extracted already (with the imported reading fingerprint)."""
    sources = (
        documents.group_by("source_partition", maintain_order=True)
        .agg(pl.col("source_path").first(), pl.col("source_hash").first(), pl.len().cast(pl.Int64).alias("documents"))
        .join(
            units.group_by("source_partition").agg(pl.len().cast(pl.Int64).alias("text_units")),
            on="source_partition",
            how="left",
        )
    )
    return sources.with_columns(
        pl.lit(corpus).alias("corpus"),
        pl.lit(IMPORTED_SOURCES).alias("settings_hash"),
        pl.col("text_units").fill_null(0),
        pl.lit(imported_at).alias("indexed_at"),
        pl.lit(SOURCE_EXTRACTED).alias("status"),
    )


def search_index(tables: dict[str, pl.DataFrame], corpus: str, embedder: Embedder) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(embeddings, search_terms) of a corpus's tables: the texts the embeddings asset
    embeds, embedded by ``embedder``, and their BM25 terms."""
    wanted = embedding_inputs(tables["text_units"], tables["entities"], tables["community_reports"])
    vectors, _ = embed_missing(wanted, pl.DataFrame(schema=EMBEDDING_COLUMNS), embedder, corpus)
    return vectors, search_term_rows(wanted, corpus)


def tables_to_graphrag(tables: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """graphrag 3.x's tables (``GRAPHRAG_COLUMNS``) from our tables of one corpus, rows in
    ``human_readable_id`` order; covariates only when the corpus has claims, as graphrag."""
    units = tables["text_units"]
    covariates = tables["covariates"].sort("human_readable_id")
    unit_covariates = covariates.group_by("text_unit_id").agg(pl.col("id").alias("covariate_ids"))
    units = units.join(unit_covariates.rename({"text_unit_id": "id"}), on="id", how="left").with_columns(
        pl.col("covariate_ids").fill_null([]),
        pl.col("entity_ids").fill_null([]),
        pl.col("relationship_ids").fill_null([]),
    )
    document_units = units.sort("chunk_index").group_by("document_id").agg(pl.col("id").alias("text_unit_ids"))
    documents = (
        tables["documents"]
        .join(document_units.rename({"document_id": "id"}), on="id", how="left")
        .with_columns(
            pl.col("text_unit_ids").fill_null([]), *(pl.lit(None).alias(name) for name in NOT_KEPT_COLUMNS["documents"])
        )
    )
    reports = tables["community_reports"].with_columns(_findings(_FINDING_FIELDS))
    frames = {
        "documents": documents,
        "text_units": units,
        "entities": tables["entities"],
        "relationships": tables["relationships"],
        "communities": tables["communities"],
        "community_reports": reports,
        "covariates": covariates,
    }
    exported = {
        table: frame.select(list(GRAPHRAG_COLUMNS[table])).cast(GRAPHRAG_COLUMNS[table]).sort("human_readable_id")
        for table, frame in frames.items()
    }
    if exported["covariates"].is_empty():
        del exported["covariates"]
    return exported


def read_graphrag_folder(folder: Path) -> dict[str, pl.DataFrame]:
    """graphrag's tables from its output folder, checked (``checked_graphrag_table``); a
    missing folder, file or column is a ``GraphragFormatError`` naming it."""
    if not folder.is_dir():
        raise GraphragFormatError(
            f"{folder}: no such folder (expected graphrag's output folder, holding {', '.join(GRAPHRAG_COLUMNS)} "
            f".parquet files)"
        )
    frames = {}
    for table in GRAPHRAG_COLUMNS:
        path = folder / f"{table}.parquet"
        if not path.is_file():
            if table not in OPTIONAL_TABLES:
                raise GraphragFormatError(f"{path}: missing (a graphrag 3.x output folder has {table}.parquet)")
            frames[table] = pl.DataFrame(schema=imported_columns(table))
            continue
        try:
            frame = pl.read_parquet(path)
        except (pl.exceptions.PolarsError, OSError) as error:
            raise GraphragFormatError(f"{path}: not a readable parquet file ({error})") from None
        frames[table] = checked_graphrag_table(table, frame, str(path))
    return frames


def write_graphrag_folder(frames: dict[str, pl.DataFrame], folder: Path) -> None:
    """One parquet file per table; a table not written (covariates of a corpus without
    claims) loses the file an earlier export may have left, so graphrag reads no stale rows."""
    folder.mkdir(parents=True, exist_ok=True)
    for table in GRAPHRAG_COLUMNS:
        path = folder / f"{table}.parquet"
        if table in frames:
            frames[table].write_parquet(path)
        else:
            path.unlink(missing_ok=True)
