"""Description summaries: an entity or relationship described differently in several text
units gets one LLM-written description; one with a single description keeps it (no call)."""

from __future__ import annotations

import asyncio

import polars as pl

from ..llm.client import LLMClient, LLMError, run_with
from ..llm.models import DescriptionSummary
from ..llm.prompts import load_prompt

MAX_SUMMARY_WORDS = 150


async def _summarize(client: LLMClient, kind: str, name: str, descriptions: list[str]) -> str:
    prompt = load_prompt("summarize_descriptions")
    # Sorted: the same set of descriptions is the same request (and cache key) in any order.
    listing = "\n".join(f"- {d}" for d in sorted(descriptions))
    message = prompt.render(kind=kind, name=name, max_words=MAX_SUMMARY_WORDS, descriptions=listing)
    result = await client.structured("summary", prompt.version, [{"role": "user", "content": message}], DescriptionSummary)
    return result.summary


def summarize_graph(make_client, entities: pl.DataFrame, relationships: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, list[dict]]:
    """Entities and relationships with ``description`` summarised where
    ``description_count`` > 1 (relationships are named "source -> target"), and the
    failures (their joined descriptions are kept, and the failure recorded). Both kinds
    share one client, so all their calls are in flight together."""
    named = relationships.with_columns(pl.concat_str("source", pl.lit(" -> "), "target").alias("label"))
    todo = [
        (kind, row, name)
        for frame, kind, name in ((entities, "entity", "title"), (named, "relationship", "label"))
        for row in frame.filter(pl.col("description_count") > 1).iter_rows(named=True)
    ]
    if not todo:
        return entities, relationships, []

    async def run(client):
        async def one(kind, row, name):
            try:
                return row["id"], await _summarize(client, kind, row[name], row["descriptions"]), None
            except LLMError as error:
                return row["id"], None, str(error)

        return await asyncio.gather(*(one(*job) for job in todo))

    summaries, failures = {}, []
    for item_id, summary, error in run_with(make_client, run):
        if error is None:
            summaries[item_id] = summary
        else:
            failures.append({"item_id": item_id, "stage": "summary", "error": error})
    summarized = pl.col("id").replace_strict(summaries, default=None, return_dtype=pl.String).fill_null(pl.col("description")).alias("description")
    return entities.with_columns(summarized), relationships.with_columns(summarized), failures
