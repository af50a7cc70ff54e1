"""The bookkeeping rows the stages write beside their tables: a source's status
(``sources``); the failed LLM calls a next build retries are ``build_state``'s."""

import datetime as dt

import polars as pl

from ..storage.schema import SOURCE_EXTRACTED, SOURCE_FAILED, SOURCE_READ, TABLES, conform


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def source_rows(docs: pl.DataFrame, text_units: pl.DataFrame | None = None) -> pl.DataFrame:
    """``sources`` rows of the files these documents were read from, status ``read``: with
    ``text_units`` (the files' chunks) their count, else NULL (not chunked yet)."""
    rows = docs.group_by("corpus", "source_partition").agg(
        pl.col("source_path").first(), pl.col("source_hash").first(), pl.col("id").n_unique().alias("documents")
    )
    if text_units is None:
        rows = rows.with_columns(pl.lit(None, pl.Int64).alias("text_units"))
    else:
        counts = text_units.group_by("source_partition").agg(pl.len().alias("text_units"))
        rows = rows.join(counts, on="source_partition", how="left").with_columns(pl.col("text_units").fill_null(0))
    return conform(
        TABLES["sources"],
        rows.with_columns(
            pl.lit(None, pl.String).alias("settings_hash"),
            pl.lit(utc_now()).alias("indexed_at"),
            pl.lit(SOURCE_READ).alias("status"),
        ),
    )


def extracted_source_rows(rows: pl.DataFrame, failed: set[str], reading: str) -> pl.DataFrame:
    """The sources' rows once extracted: ``extracted`` with the reading fingerprint they
    were indexed with, or ``failed`` (no fingerprint) when a text unit's call failed, so
    the next build extracts them again."""
    failing = pl.col("source_partition").is_in(sorted(failed))
    return rows.with_columns(
        pl.when(failing).then(pl.lit(None, pl.String)).otherwise(pl.lit(reading)).alias("settings_hash"),
        pl.when(failing).then(pl.lit(SOURCE_FAILED)).otherwise(pl.lit(SOURCE_EXTRACTED)).alias("status"),
        pl.lit(utc_now()).alias("indexed_at"),
    )
