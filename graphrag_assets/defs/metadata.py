"""Materialization metadata users read in the Dagster UI."""

from __future__ import annotations

import polars as pl
from dagster import MetadataValue, TableColumn, TableSchema

from ..storage.schema import TABLES, column_description, duckdb_type

PREVIEW_ROWS = 5
PREVIEW_CELL_CHARS = 80


def _cell(value) -> str:
    text = str(value).replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= PREVIEW_CELL_CHARS else text[: PREVIEW_CELL_CHARS - 1] + "…"


def markdown_preview(frame: pl.DataFrame, columns: list[str]) -> str:
    shown = frame.select([c for c in columns if c in frame.columns]).head(PREVIEW_ROWS)
    header = "| " + " | ".join(shown.columns) + " |\n|" + "---|" * len(shown.columns)
    rows = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in shown.iter_rows()]
    return "\n".join([header, *rows])


def table_metadata(table_name: str, frame: pl.DataFrame, preview_columns: list[str]) -> dict:
    table = TABLES[table_name]
    return {
        "dagster/row_count": frame.height,
        "dagster/column_schema": TableSchema(
            columns=[
                TableColumn(name, duckdb_type(dtype), description=column_description(table_name, name))
                for name, dtype in table.columns.items()
            ]
        ),
        "dagster/table_name": table_name,
        "preview": MetadataValue.md(markdown_preview(frame, preview_columns)),
    }
