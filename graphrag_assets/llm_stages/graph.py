"""The corpus graph on the LLM path: merge decisions on the names resolution proposes,
the merged entities and relationships, and their description summaries.

The model's merge decisions and the summaries are both LLM calls, and most summaries do
not depend on the decisions: an entity outside every proposed pair, or a relationship
between two such entities, has the same name and descriptions whatever is decided. Those
summaries are requested while the model decides; only the summaries of the names in a
proposed pair wait for the decisions.

Equal records give equal tables, whatever order the rows come in (a table read without
ORDER BY, an update appending a source's records) and whatever order the answers arrive
in: the records are put in an order given by their content before anything picks "the
first" of them (a merged entity's title among tied mentions, the order of its joined
descriptions), and every answer is used by its key, never by its arrival.
"""

from __future__ import annotations

import asyncio

import polars as pl

from ..core.graph import finalize, merge_extracted_graph
from ..core.resolution import apply_resolution, resolve, rule_decisions
from ..llm.client import ClientFactory, run_with
from ..llm.errors import failure_frame
from .merge_confirmation import confirm_merges
from .summaries import summarize, summarize_graph, summary_jobs


class EmptyGraph(RuntimeError):
    """The model's extraction gave no entity at all: an index of nothing is a failure, not
    a result (a model that answers ``{ }`` for every text unit)."""


def build_llm_graph(
    make_client: ClientFactory,
    records: pl.DataFrame,
    relationship_records: pl.DataFrame,
    text_units: pl.DataFrame,
    corpus: str,
    pairs: pl.DataFrame,
    confirm: bool,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(entities, relationships, merges, failures) from extracted records and the pairs
    resolution proposes (``core.resolution.candidate_pairs``). With ``confirm``
    the model decides on the pairs, otherwise the rule's proposals stand. Failures are
    those of merge decisions and of summaries."""
    if records.is_empty() and not text_units.is_empty():
        raise EmptyGraph(
            f"no entity extracted from any of the {text_units.height} text units of {corpus!r}: nothing is "
            "published and the index keeps what it had; see the extraction step's log and table llm_failures, "
            "and check GRAPHRAG_LLM_MODEL and GRAPHRAG_LLM_MODE (the README's model section)"
        )
    records = canonical_order(records, text_units, ["name_key"])
    relationship_records = canonical_order(relationship_records, text_units, ["source_key", "target_key"])
    decisions, failures, known = rule_decisions(pairs), failure_frame([]), {}
    if confirm and not pairs.is_empty():
        in_pairs = set(pairs["name_key_a"].to_list()) | set(pairs["name_key_b"].to_list())
        early_entities, early_relationships = merge_extracted_graph(records, relationship_records, text_units, corpus)
        undecided = summary_jobs(
            early_entities.filter(~pl.col("name_key").is_in(in_pairs)),
            early_relationships.filter(~pl.col("source_key").is_in(in_pairs) & ~pl.col("target_key").is_in(in_pairs)),
        )

        async def decide_and_summarize(client):
            return await asyncio.gather(
                confirm_merges(client, pairs, records), summarize(client, [key for _, key in undecided])
            )

        (decisions, failures), known = run_with(make_client, decide_and_summarize)
    mapping, merges = resolve(records, corpus, decisions=decisions)
    records, relationship_records = apply_resolution(records, relationship_records, mapping)
    entities, relationships = merge_extracted_graph(records, relationship_records, text_units, corpus)
    entities, relationships, summary_failures = summarize_graph(make_client, entities, relationships, known=known)
    entities, relationships = finalize(entities, relationships)
    return entities, relationships, merges, pl.concat([failures, summary_failures])


def canonical_order(records: pl.DataFrame, text_units: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Extraction records in an order given by their content alone: text units in document
    order (``document_id``, ``chunk_index``, as the graph merge ranks them), then ``keys``,
    then every other column. Rows equal in all of these are identical, so any two orders
    of the same rows give the same frame."""
    rank = (
        text_units.select("id", "document_id", "chunk_index")
        .sort("document_id", "chunk_index", "id")
        .with_row_index("_unit_rank")
        .select(pl.col("id").alias("text_unit_id"), "_unit_rank")
    )
    columns = ["_unit_rank", *keys, *(c for c in records.columns if c not in keys)]
    return records.join(rank, on="text_unit_id", how="left").sort(columns, nulls_last=True).drop("_unit_rank")
