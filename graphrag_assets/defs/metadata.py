"""Materialization metadata users read in the Dagster UI."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence

import polars as pl
from dagster import MetadataValue, TableColumn, TableSchema

from ..core.graph_pictures import GraphPictures
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


def table_schema_metadata(table_name: str) -> dict:
    """The table's columns, for an asset whose row counts are given elsewhere (per partition)."""
    table = TABLES[table_name]
    return {
        "dagster/column_schema": TableSchema(
            columns=[
                TableColumn(name, duckdb_type(dtype), description=column_description(table_name, name))
                for name, dtype in table.columns.items()
            ]
        ),
        "dagster/table_name": table_name,
    }


def table_metadata(table_name: str, frame: pl.DataFrame, preview_columns: list[str]) -> dict:
    return table_schema_metadata(table_name) | {
        "dagster/row_count": frame.height,
        "preview": MetadataValue.md(markdown_preview(frame, preview_columns)),
    }


# The tables of a published snapshot that hold a corpus's rows (all but the LLM cache and failures).
CORPUS_TABLES = [name for name, table in TABLES.items() if "corpus" in table.columns]


def tables_metadata(rows: Mapping[str, int]) -> dict:
    """An asset of several tables (a snapshot, the extraction records): every table's
    columns as ``table.column``, rows per table, and (``dagster/row_count``) their sum."""
    return {
        "dagster/row_count": sum(rows.values()),
        "dagster/column_schema": TableSchema(
            columns=[
                TableColumn(f"{name}.{column}", duckdb_type(dtype), description=column_description(name, column))
                for name in rows
                for column, dtype in TABLES[name].columns.items()
            ]
        ),
        "rows_per_table": dict(rows),
    }


def _bin_label(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


BAR_WIDTH = 20


def distribution_markdown(values: Mapping[str, Sequence[int]], value_name: str) -> str:
    """Counts of ``values`` (one column per key) in doubling bins (1, 2-3, 4-7, ...), as a
    markdown table with a bar per count: the shape of a distribution in the UI, where
    inline HTML and scripts are not rendered."""
    largest = max((v for column in values.values() for v in column), default=0)
    bins = [(0, 0)] if any(0 in column for column in values.values()) else []
    low = 1
    while low <= largest:
        bins.append((low, 2 * low - 1))
        low *= 2
    counts = {name: [sum(low <= v <= high for v in column) for low, high in bins] for name, column in values.items()}
    header = f"| {value_name} | " + " | ".join(values) + " |\n|---|" + "---|" * len(values)
    rows = []
    for i, (low, high) in enumerate(bins):
        cells = []
        for name in values:
            peak = max(counts[name]) or 1
            count = counts[name][i]
            cells.append(f"{count} {'█' * round(BAR_WIDTH * count / peak)}" if count else "")
        rows.append(f"| {_bin_label(low, high)} | " + " | ".join(cells) + " |")
    return "\n".join([header, *rows])


def kept_and_changed(before: pl.Series, after: pl.Series) -> dict[str, int]:
    """How many of ``after`` (ids or content hashes) the previous build already had, how
    many are new or changed, and how many of the previous build's are gone."""
    kept = int(after.is_in(before.implode()).sum())
    return {"kept": kept, "new_or_changed": after.len() - kept, "gone": int((~before.is_in(after.implode())).sum())}


def svg_image(svg: str, title: str, caption: str = "") -> MetadataValue:
    """An SVG picture shown in the UI: a markdown image with a data: URI."""
    encoded = base64.b64encode(svg.encode()).decode()
    return MetadataValue.md(f"![{title}](data:image/svg+xml;base64,{encoded})" + (f"\n\n{caption}" if caption else ""))


def picture_metadata(pictures: GraphPictures) -> dict:
    """Links to the community maps and the GraphML, and the coarsest map inline: Dagster's
    UI renders a markdown image with a data: URI (the files need access to this machine)."""
    metadata = {
        f"community_map_level_{level}": MetadataValue.path(str(path)) for level, (path, _) in pictures.maps.items()
    }
    if pictures.maps:
        level = min(pictures.maps)
        path, caption = pictures.maps[level]
        metadata["community_map"] = svg_image(path.read_text(), f"Communities, level {level}", caption)
    return metadata | {"graphml_for_gephi": MetadataValue.path(str(pictures.graphml))}
