"""The per-text-unit records every extraction method writes (offline or LLM), so that the
graph merge and incremental rebuilds read one format."""

from collections.abc import Mapping

import polars as pl

UNTYPED = ("OTHER", "CONCEPT")


def majority_type(counts: Mapping[str, int]) -> str:
    """The most frequent type, preferring a specific one (person, place...) over OTHER,
    CONCEPT and unknown (""); ties by name, so the choice is deterministic."""
    typed = {t: n for t, n in counts.items() if t and t not in UNTYPED}
    pool = typed or counts
    return sorted(pool.items(), key=lambda item: (-item[1], item[0]))[0][0]


EXTRACTED_ENTITY_COLUMNS = {
    "text_unit_id": pl.String,
    "corpus": pl.String,
    "source_partition": pl.String,
    "name_key": pl.String,
    "title": pl.String,
    "type": pl.String,
    "description": pl.String,
    "mentions": pl.Int64,
    # The name is the given title of the unit's document: the graph keeps it however rarely
    # it is mentioned (null in records written before this column existed, and by the LLM).
    "document_title": pl.Boolean,
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
