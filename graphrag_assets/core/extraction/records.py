"""The per-text-unit records every extraction method writes (offline or LLM), so that the
graph merge and incremental rebuilds read one format."""

import polars as pl

EXTRACTED_ENTITY_COLUMNS = {
    "text_unit_id": pl.String,
    "corpus": pl.String,
    "source_partition": pl.String,
    "name_key": pl.String,
    "title": pl.String,
    "type": pl.String,
    "description": pl.String,
    "mentions": pl.Int64,
}
EXTRACTED_RELATIONSHIP_COLUMNS = {
    "text_unit_id": pl.String,
    "corpus": pl.String,
    "source_partition": pl.String,
    "source_key": pl.String,
    "target_key": pl.String,
    "description": pl.String,
    "weight": pl.Float64,
}
