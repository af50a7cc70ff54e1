"""Description summaries: an entity or relationship described differently in several text
units gets one LLM-written description; one with a single description keeps it (no call)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import polars as pl

from ..llm.client import ClientFactory, LLMClient, run_with
from ..llm.errors import LLMError, failure_frame
from ..llm.models import DescriptionSummary
from ..llm.prompts import load_prompt

MAX_SUMMARY_WORDS = 150

# What a summary depends on, and so what it is known by: (kind, name, sorted descriptions).
SummaryKey = tuple[str, str, tuple[str, ...]]
# (summary, None), or (None, error) for a call that failed after its retries.
SummaryResult = tuple[str | None, str | None]


async def _summarize(client: LLMClient, key: SummaryKey) -> str:
    kind, name, descriptions = key
    prompt = load_prompt("summarize_descriptions")
    listing = "\n".join(f"- {d}" for d in descriptions)
    message = prompt.render(kind=kind, name=name, max_words=MAX_SUMMARY_WORDS, descriptions=listing)
    result = await client.structured(
        "summary", prompt.version, [{"role": "user", "content": message}], DescriptionSummary
    )
    return result.summary


def summary_jobs(entities: pl.DataFrame, relationships: pl.DataFrame) -> list[tuple[str, SummaryKey]]:
    """(row id, summary key) of every entity and relationship with ``description_count`` >
    1 (relationships are named "source -> target"). Descriptions are sorted: the same set
    is the same request (and cache key) in any order."""
    named = relationships.with_columns(pl.concat_str("source", pl.lit(" -> "), "target").alias("label"))
    return [
        (row["id"], (kind, row[name], tuple(sorted(row["descriptions"]))))
        for frame, kind, name in ((entities, "entity", "title"), (named, "relationship", "label"))
        for row in frame.filter(pl.col("description_count") > 1).iter_rows(named=True)
    ]


async def summarize(client: LLMClient, keys: Iterable[SummaryKey]) -> dict[SummaryKey, SummaryResult]:
    """A result for each distinct key, all calls in flight together."""

    async def one(key: SummaryKey) -> tuple[SummaryKey, SummaryResult]:
        try:
            return key, (await _summarize(client, key), None)
        except LLMError as error:
            return key, (None, str(error))

    return dict(await asyncio.gather(*(one(key) for key in dict.fromkeys(keys))))


def summarize_graph(
    make_client: ClientFactory,
    entities: pl.DataFrame,
    relationships: pl.DataFrame,
    known: dict[SummaryKey, SummaryResult] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Entities and relationships with ``description`` summarised where
    ``description_count`` > 1, and the failures (their joined descriptions are kept, and
    the failure recorded). Entities and relationships share one client, so all their
    calls are in flight together; results in ``known`` (summaries requested earlier) are
    used as they are."""
    jobs = summary_jobs(entities, relationships)
    if not jobs:
        return entities, relationships, failure_frame([])
    results = dict(known or {})
    missing = [key for _, key in jobs if key not in results]
    if missing:
        results |= run_with(make_client, lambda client: summarize(client, missing))
    summaries, failures = {}, []
    for item_id, key in jobs:
        summary, error = results[key]
        if error is None:
            summaries[item_id] = summary
        else:
            failures.append({"item_id": item_id, "stage": "summary", "error": error})
    summarized = (
        pl.col("id")
        .replace_strict(summaries, default=None, return_dtype=pl.String)
        .fill_null(pl.col("description"))
        .alias("description")
    )
    return entities.with_columns(summarized), relationships.with_columns(summarized), failure_frame(failures)
