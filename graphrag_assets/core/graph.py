"""Merging per-text-unit records into the corpus graph: entities and relationships.

Entities merge by normalised name. Relationships are co-occurrences inside a text unit,
weighted by a PMI variant so that an edge between two names that are everywhere (and so
meet everywhere) counts for less than one between names that seek each other out:

    weight = n_ab * max(npmi(a, b), 0) + s_ab

where n_ab is the number of text units holding both, npmi the normalised pointwise
mutual information of the two names over text units, and s_ab the number of sentences
naming both. Pruning then removes rare names (single-word proper names mentioned fewer than
twice, noun phrases in fewer than three text units or in one document only: a phrase
that only one document repeats, such as a novel's "the plump sister", is its way of
describing, not a term of the collection), weak edges (below a percentile of the
weights) and names left without edges. A document's given title and a proper name of two or
more words (or with a number: "Apollo 11") are kept however rarely mentioned and even
without edges: such a name is seldom noise, and a name said once is often the bridge
between two documents that a multi-hop question crosses. The edges of a name said only
once need a common sentence: its npmi with any other name of its text unit is high
whatever joins them, so bare co-occurrence would outweigh every real association (and in
an encyclopaedia make up half the edges).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from graphrag_common.ids import stable_id
from graphrag_common.relationships import cooccurrence_description

from ..configuration import check, default_of
from .extraction.records import majority_type

ENTITY_COLUMNS = {
    "id": pl.String,
    "human_readable_id": pl.Int64,
    "title": pl.String,
    "type": pl.String,
    "description": pl.String,
    "text_unit_ids": pl.List(pl.String),
    "frequency": pl.Int64,
    "degree": pl.Int64,
    "corpus": pl.String,
    "name_key": pl.String,
}
RELATIONSHIP_COLUMNS = {
    "id": pl.String,
    "human_readable_id": pl.Int64,
    "source": pl.String,
    "target": pl.String,
    "description": pl.String,
    "weight": pl.Float64,
    "combined_degree": pl.Int64,
    "text_unit_ids": pl.List(pl.String),
    "corpus": pl.String,
    "source_id": pl.String,
    "target_id": pl.String,
}


@dataclass(frozen=True)
class GraphSettings:
    # A single-word proper name must be mentioned at least this often.
    min_name_mentions: int = default_of("GRAPHRAG_MIN_NAME_MENTIONS")
    # Lower-case noun phrases, the noisier kind: text units.
    min_concept_frequency: int = default_of("GRAPHRAG_MIN_CONCEPT_FREQUENCY")
    min_edge_weight_pct: float = default_of("GRAPHRAG_MIN_EDGE_WEIGHT_PCT")
    min_node_degree: int = 1
    max_description_sentences: int = 4

    def __post_init__(self):
        check("GRAPHRAG_MIN_NAME_MENTIONS", self.min_name_mentions)
        check("GRAPHRAG_MIN_CONCEPT_FREQUENCY", self.min_concept_frequency)
        check("GRAPHRAG_MIN_EDGE_WEIGHT_PCT", self.min_edge_weight_pct)


def _join_descriptions(descriptions: list[str], limit: int) -> str:
    """Distinct evidence in order, at most ``limit`` records."""
    return " ".join(list(dict.fromkeys(d for d in descriptions if d))[:limit])


def _npmi(n_ab: int, n_a: int, n_b: int, n: int) -> float:
    if n_ab >= n:
        return 1.0
    p_ab = n_ab / n
    return math.log(p_ab / ((n_a / n) * (n_b / n))) / -math.log(p_ab)


def _with_endpoints(pairs: pl.DataFrame, entities: pl.DataFrame, corpus: str, *description: pl.Expr) -> pl.DataFrame:
    """Relationship rows from (source_key, target_key, weight, ...) pairs: endpoint titles
    and ids, a stable id, combined degree, the given description columns, and
    human-readable ids in weight order."""
    ends = entities.select("name_key", "title", "id", "degree")
    return (
        pairs.join(
            ends.rename({"name_key": "source_key", "title": "source", "id": "source_id", "degree": "d_s"}),
            on="source_key",
        )
        .join(
            ends.rename({"name_key": "target_key", "title": "target", "id": "target_id", "degree": "d_t"}),
            on="target_key",
        )
        .with_columns(
            pl.struct("source_key", "target_key")
            .map_elements(
                lambda row: stable_id(corpus, "relationship", row["source_key"], row["target_key"]),
                return_dtype=pl.String,
            )
            .alias("id"),
            (pl.col("d_s") + pl.col("d_t")).cast(pl.Int64).alias("combined_degree"),
            *description,
            pl.lit(corpus).alias("corpus"),
        )
        .sort(["weight", "source", "target"], descending=[True, False, False])
        .with_row_index("human_readable_id")
        .with_columns(pl.col("human_readable_id").cast(pl.Int64))
    )


def build_graph(
    extracted_entities: pl.DataFrame,
    extracted_relationships: pl.DataFrame,
    text_units: pl.DataFrame,
    corpus: str,
    settings: GraphSettings = GraphSettings(),
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(entities, relationships) of a corpus from its extraction records.

    ``text_units`` needs ``id``, ``document_id`` and ``chunk_index``: it fixes the order of
    evidence and the unit count used by PMI."""
    unit_order = (
        text_units.sort("document_id", "chunk_index")
        .with_row_index("unit_rank")
        .select(pl.col("id").alias("text_unit_id"), "unit_rank", "document_id")
    )
    # Row order within a text unit is whatever the table returned: break ties by content.
    records = extracted_entities.join(unit_order, on="text_unit_id").sort(
        "unit_rank", "name_key", "title", "description"
    )
    kept = _kept_names(records, settings)
    evidence = (
        extracted_relationships.join(unit_order, on="text_unit_id")
        .sort("unit_rank", "source_key", "target_key", "description")
        .group_by("source_key", "target_key")
        .agg(pl.col("weight").sum().alias("s_ab"), pl.col("description").alias("descriptions"))
    )
    pairs = _weighted_pairs(records, kept, evidence, max(unit_order.height, 1), settings)
    kept, pairs = _connected(kept, pairs, settings)
    limit = settings.max_description_sentences
    entities = (
        kept.with_columns(
            pl.col("name_key")
            .map_elements(lambda key: stable_id(corpus, "entity", key), return_dtype=pl.String)
            .alias("id"),
            pl.col("description").map_elements(
                lambda d: _join_descriptions(d.to_list(), limit), return_dtype=pl.String
            ),
            pl.lit(corpus).alias("corpus"),
            pl.col("frequency").cast(pl.Int64),
        )
        .sort(["frequency", "degree", "title"], descending=[True, True, False])
        .with_row_index("human_readable_id")
        .with_columns(pl.col("human_readable_id").cast(pl.Int64))
        .select(list(ENTITY_COLUMNS))
        .cast(ENTITY_COLUMNS)
    )
    relationships = (
        _with_endpoints(
            pairs,
            entities,
            corpus,
            pl.struct("source", "target", "descriptions", "n_ab")
            .map_elements(lambda row: _relationship_description(row, limit), return_dtype=pl.String)
            .alias("description"),
        )
        .select(list(RELATIONSHIP_COLUMNS))
        .cast(RELATIONSHIP_COLUMNS)
    )
    if entities.is_empty():
        relationships = relationships.clear()
    return entities, relationships


def _kept_names(records: pl.DataFrame, settings: GraphSettings) -> pl.DataFrame:
    """The names of the records (ordered by ``unit_rank``) that pass the frequency pruning,
    one row each with its units, counts, majority type and evidence."""
    candidates = records.group_by("name_key").agg(
        pl.col("text_unit_id").unique(maintain_order=True).alias("text_unit_ids"),
        pl.col("text_unit_id").n_unique().alias("frequency"),
        pl.col("document_id").n_unique().alias("documents"),
        pl.col("title").sort_by("mentions", "title", descending=[True, False]).first().alias("title"),
        pl.col("type"),
        pl.col("mentions"),
        pl.col("mentions").sum().alias("total_mentions"),
        pl.col("description"),
        pl.col("document_title").fill_null(False).any().alias("document_title"),
    )
    candidates = candidates.with_columns(
        pl.struct("type", "mentions").map_elements(_majority_type, return_dtype=pl.String).alias("type")
        if candidates.height
        else pl.lit(None, pl.String).alias("type")
    )
    # Titles and full names are kept whatever their counts (see the module docstring).
    full_name = (pl.col("type") != "CONCEPT") & (pl.col("document_title") | pl.col("title").str.contains(r"\s|\d"))
    candidates = candidates.with_columns(full_name.alias("full_name"))
    return candidates.filter(
        pl.when(pl.col("type") == "CONCEPT")
        .then((pl.col("frequency") >= settings.min_concept_frequency) & (pl.col("documents") >= 2))
        .otherwise((pl.col("total_mentions") >= settings.min_name_mentions) | pl.col("full_name"))
    )


def _weighted_pairs(
    records: pl.DataFrame, kept: pl.DataFrame, evidence: pl.DataFrame, n_units: int, settings: GraphSettings
) -> pl.DataFrame:
    """The co-occurrence pairs of the kept names, weighted (see the module docstring) with
    their same-sentence ``evidence``, the weak ones pruned."""
    mentions = (
        records.filter(pl.col("name_key").is_in(kept["name_key"].implode()))
        .select("text_unit_id", "name_key", "unit_rank")
        .unique(["text_unit_id", "name_key"])
    )
    pairs = (
        mentions.join(mentions, on="text_unit_id", suffix="_b")
        .filter(pl.col("name_key") < pl.col("name_key_b"))
        .sort("unit_rank")
        .group_by(pl.col("name_key").alias("source_key"), pl.col("name_key_b").alias("target_key"))
        .agg(pl.len().alias("n_ab"), pl.col("text_unit_id").alias("text_unit_ids"))
    )
    frequency = dict(zip(kept["name_key"], kept["frequency"]))
    pairs = pairs.join(evidence, on=["source_key", "target_key"], how="left").with_columns(pl.col("s_ab").fill_null(0))
    pairs = pairs.with_columns(
        pl.struct("n_ab", "source_key", "target_key", "s_ab")
        .map_elements(
            lambda row: round(
                row["n_ab"]
                * max(_npmi(row["n_ab"], frequency[row["source_key"]], frequency[row["target_key"]], n_units), 0.0)
                + row["s_ab"],
                6,
            ),
            return_dtype=pl.Float64,
        )
        .alias("weight")
        if pairs.height
        else pl.lit(None, pl.Float64).alias("weight")
    )
    # A name said once relates only to the names of its own sentence (see the module docstring).
    once = kept.filter((pl.col("frequency") == 1) & (pl.col("total_mentions") < settings.min_name_mentions))[
        "name_key"
    ].implode()
    said_once = pl.col("source_key").is_in(once) | pl.col("target_key").is_in(once)
    pairs = pairs.filter((pl.col("weight") > 0) & ~(said_once & (pl.col("s_ab") == 0)))
    if pairs.height:
        threshold = pairs["weight"].quantile(settings.min_edge_weight_pct / 100, "lower")
        pairs = pairs.filter(pl.col("weight") >= threshold)
    return pairs


def _connected(kept: pl.DataFrame, pairs: pl.DataFrame, settings: GraphSettings) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The names with enough edges (and the full names, with or without) and the edges
    between them, each name with its degree on those edges."""
    kept = _with_degrees(kept, pairs)
    kept = kept.filter((pl.col("degree") >= settings.min_node_degree) | pl.col("full_name"))
    surviving = kept["name_key"].implode()
    pairs = pairs.filter(pl.col("source_key").is_in(surviving) & pl.col("target_key").is_in(surviving))
    # Dropping names can lower the degree of their neighbours: recount on the final edges.
    return _with_degrees(kept.drop("degree"), pairs), pairs


def _with_degrees(names: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    """``names`` with their degree in ``pairs`` (0: at no end of one)."""
    return names.join(_degrees(pairs), on="name_key", how="left").with_columns(pl.col("degree").fill_null(0))


def _degrees(pairs: pl.DataFrame) -> pl.DataFrame:
    """(name_key, degree) of every name at an end of the (source_key, target_key) pairs."""
    return (
        pl.concat(
            [pairs.select(pl.col("source_key").alias("name_key")), pairs.select(pl.col("target_key").alias("name_key"))]
        )
        .group_by("name_key")
        .agg(pl.len().cast(pl.Int64).alias("degree"))
    )


def _majority_type(row: dict) -> str:
    counts: dict[str, int] = {}
    for entity_type, mentions in zip(row["type"], row["mentions"]):
        counts[entity_type] = counts.get(entity_type, 0) + mentions
    return majority_type(counts)


def _relationship_description(row: dict, limit: int) -> str:
    described = _join_descriptions(row["descriptions"] or [], limit)
    if described:
        return described
    return cooccurrence_description(row["source"], row["target"], row["n_ab"])


def link_text_units(entities: pl.DataFrame, relationships: pl.DataFrame) -> pl.DataFrame:
    """text_unit_id -> entity_ids, relationship_ids (graphrag's text_units columns)."""
    by_entity = entities.select(pl.col("id").alias("entity_id"), "text_unit_ids").explode("text_unit_ids")
    by_relationship = relationships.select(pl.col("id").alias("relationship_id"), "text_unit_ids").explode(
        "text_unit_ids"
    )
    entity_links = by_entity.group_by(pl.col("text_unit_ids").alias("text_unit_id")).agg(
        pl.col("entity_id").sort().alias("entity_ids")
    )
    relationship_links = by_relationship.group_by(pl.col("text_unit_ids").alias("text_unit_id")).agg(
        pl.col("relationship_id").sort().alias("relationship_ids")
    )
    return entity_links.join(relationship_links, on="text_unit_id", how="full", coalesce=True)


def merge_extracted_graph(
    extracted_entities: pl.DataFrame, extracted_relationships: pl.DataFrame, text_units: pl.DataFrame, corpus: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(entities, relationships) from LLM-extracted records: the model already chose the
    relationships, so there is no co-occurrence weighting or pruning. Weights add up the
    strengths; descriptions are the distinct ones, joined; ``description_count`` tells
    which need an LLM summary."""
    unit_order = (
        text_units.sort("document_id", "chunk_index")
        .with_row_index("unit_rank")
        .select(pl.col("id").alias("text_unit_id"), "unit_rank")
    )
    # Row order within a text unit is whatever the table returned: break ties by content.
    records = extracted_entities.join(unit_order, on="text_unit_id").sort(
        "unit_rank", "name_key", "title", "description"
    )
    entities = records.group_by("name_key").agg(
        pl.col("title").sort_by("mentions", "title", descending=[True, False]).first(),
        pl.col("type").filter(pl.col("type") != "").mode().sort().first().alias("type"),
        pl.col("description").filter(pl.col("description") != "").unique(maintain_order=True).alias("descriptions"),
        pl.col("text_unit_id").unique(maintain_order=True).alias("text_unit_ids"),
        pl.col("text_unit_id").n_unique().cast(pl.Int64).alias("frequency"),
    )
    relationship_records = extracted_relationships.join(unit_order, on="text_unit_id").sort(
        "unit_rank", "source_key", "target_key", "description"
    )
    pairs = relationship_records.group_by("source_key", "target_key").agg(
        pl.col("weight").sum(),
        pl.col("description").filter(pl.col("description") != "").unique(maintain_order=True).alias("descriptions"),
        pl.col("text_unit_id").unique(maintain_order=True).alias("text_unit_ids"),
    )
    entities = (
        _with_degrees(entities, pairs)
        .with_columns(
            pl.col("type").fill_null(""),
            pl.col("name_key")
            .map_elements(lambda key: stable_id(corpus, "entity", key), return_dtype=pl.String)
            .alias("id"),
            pl.col("descriptions").list.join(" ").alias("description"),
            pl.col("descriptions").list.len().alias("description_count"),
            pl.lit(corpus).alias("corpus"),
        )
        .sort(["frequency", "degree", "title"], descending=[True, True, False])
        .with_row_index("human_readable_id")
        .with_columns(pl.col("human_readable_id").cast(pl.Int64))
    )
    relationships = _with_endpoints(
        pairs,
        entities,
        corpus,
        pl.col("descriptions").list.join(" ").alias("description"),
        pl.col("descriptions").list.len().alias("description_count"),
    )
    return entities, relationships


def finalize(entities: pl.DataFrame, relationships: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The canonical table columns (drops working columns such as description lists)."""
    return entities.select(list(ENTITY_COLUMNS)).cast(ENTITY_COLUMNS), relationships.select(
        list(RELATIONSHIP_COLUMNS)
    ).cast(RELATIONSHIP_COLUMNS)
