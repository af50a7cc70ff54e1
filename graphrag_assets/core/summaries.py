"""Description summaries: an entity or relationship described differently in several text
units gets one LLM-written description; one with a single description keeps it (no call)."""

from __future__ import annotations

import asyncio

import polars as pl

from ..llm.client import LLMClient, LLMError
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


def summarize_descriptions(make_client, frame: pl.DataFrame, kind: str, name_column: str) -> tuple[pl.DataFrame, list[dict]]:
    """The frame with ``description`` summarised where ``description_count`` > 1, and the
    failures (their joined descriptions are kept, and the failure recorded)."""
    todo = frame.filter(pl.col("description_count") > 1)
    if todo.is_empty():
        return frame, []

    async def run():
        client = make_client()

        async def one(row):
            try:
                return row["id"], await _summarize(client, kind, row[name_column], row["descriptions"]), None
            except LLMError as error:
                return row["id"], None, str(error)

        return await asyncio.gather(*(one(row) for row in todo.iter_rows(named=True)))

    summaries, failures = {}, []
    for item_id, summary, error in asyncio.run(run()):
        if error is None:
            summaries[item_id] = summary
        else:
            failures.append({"item_id": item_id, "stage": "summary", "error": error})
    updated = frame.with_columns(
        pl.col("id").replace_strict(summaries, default=None, return_dtype=pl.String).fill_null(pl.col("description")).alias("description")
    )
    return updated, failures
