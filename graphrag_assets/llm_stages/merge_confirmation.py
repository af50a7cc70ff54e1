"""Model confirmation of the merges entity resolution proposes.

The rules in ``resolution`` propose pairs of names; with an LLM, every pair is put to the
model with both names, their types and what the extracted records say about each, and
the model answers per pair whether the two are one entity, with a short reason. Names
that differ only by normalisation (one ``name_key``) are one entity without asking.

Cost: pairs are asked in batches, not one call each. A batch holds whole candidate groups
(names linked by proposed pairs, so the model sees related names side by side), from
``MIN_PAIRS_PER_CALL`` to ``MAX_PAIRS_PER_CALL`` pairs. Past the minimum, a batch ends
where a group's own hash says (about every ``GROUPS_PER_CALL`` groups), not at a fixed
count, so a new name re-asks only the batch it lands in (and perhaps the next); every
other batch is answered from the cache.

A failed call never loses a merge: its pairs keep the rule's decision (decided by
``FALLBACK``) and each is returned as a failure to record.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

import polars as pl

from graphrag_common.ids import content_hash

from ..core.resolution import DECISION_COLUMNS, FALLBACK, UnionFind, name_stats, rule_decisions
from ..llm.errors import LLMError, failure_frame
from ..llm.models import MergeVerdict, MergeVerdicts
from ..llm.prompts import load_prompt

STAGE = "confirm_merges"
MIN_PAIRS_PER_CALL = 5
MAX_PAIRS_PER_CALL = 20
GROUPS_PER_CALL = 8  # on average, past the minimum
DESCRIPTIONS_PER_NAME = 3  # the most frequent distinct ones
DESCRIPTION_CHARS = 200


def name_profiles(records: pl.DataFrame) -> dict[str, dict]:
    """name_key -> title, type and most frequent distinct descriptions, from extracted
    entity records (name_key, title, type, description, mentions)."""
    descriptions = (
        records.filter(pl.col("description").fill_null("") != "")
        .group_by("name_key", "description")
        .len()
        .sort(["name_key", "len", "description"], descending=[False, True, False])
        .group_by("name_key", maintain_order=True)
        .agg(pl.col("description").head(DESCRIPTIONS_PER_NAME).alias("descriptions"))
    )
    profiles = name_stats(records).join(descriptions, on="name_key", how="left")
    return {row["name_key"]: row for row in profiles.iter_rows(named=True)}


def pair_batches(pairs: pl.DataFrame) -> list[list[dict]]:
    """The proposed pairs (PAIR_COLUMNS) in call-sized batches of whole candidate groups."""
    rows = pairs.sort("name_key_a", "name_key_b").to_dicts()
    groups = UnionFind()
    for row in rows:
        groups.union(row["name_key_a"], row["name_key_b"])
    grouped: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        grouped[groups.find(row["name_key_a"])].append(row)
    batches: list[list[dict]] = [[]]
    # Rows are sorted, so a group's first row starts with its alphabetically first name.
    for group in sorted(grouped.values(), key=lambda g: g[0]["name_key_a"]):
        for start in range(0, len(group), MAX_PAIRS_PER_CALL):
            piece = group[start : start + MAX_PAIRS_PER_CALL]
            if len(batches[-1]) + len(piece) > MAX_PAIRS_PER_CALL:
                batches.append([])
            batches[-1].extend(piece)
        if (
            len(batches[-1]) >= MIN_PAIRS_PER_CALL
            and int(content_hash(group[0]["name_key_a"])[:8], 16) % GROUPS_PER_CALL == 0
        ):
            batches.append([])
    return [batch for batch in batches if batch]


def _listing(batch: list[dict], profiles: dict[str, dict]) -> str:
    blocks = []
    for number, pair in enumerate(batch, 1):
        lines = [f"Pair {number} (proposed because of: {pair['reason']})"]
        for label, key in (("A", pair["name_key_a"]), ("B", pair["name_key_b"])):
            profile = profiles[key]
            said = (
                " / ".join(" ".join(d.split())[:DESCRIPTION_CHARS] for d in profile["descriptions"] or [])
                or "(no description)"
            )
            lines.append(f"{label}: {profile['title']} [{profile['type'] or 'no type'}]: {said}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


async def confirm_merges(client, pairs: pl.DataFrame, records: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The model's decisions (DECISION_COLUMNS) on the proposed pairs, and the failures
    (pairs that kept the rule's decision because no verdict came back). Runs on the
    caller's client, alongside its other calls."""
    if pairs.is_empty():
        return rule_decisions(pairs), failure_frame([])
    profiles = name_profiles(records)
    prompt = load_prompt("confirm_merges")
    batches = pair_batches(pairs)

    async def one(batch):
        message = prompt.render(pairs=_listing(batch, profiles))
        try:
            return await client.structured(
                STAGE, prompt.version, [{"role": "user", "content": message}], MergeVerdicts
            ), None
        except LLMError as error:
            return None, str(error)

    model = client.settings.model_for(STAGE)
    answers = await asyncio.gather(*(one(batch) for batch in batches))
    decisions, failures = [], []
    for batch, (answer, error) in zip(batches, answers):
        verdicts: dict[int, MergeVerdict] = {}
        for verdict in answer.verdicts if answer else []:
            verdicts.setdefault(verdict.pair, verdict)
        for number, pair in enumerate(batch, 1):
            verdict = verdicts.get(number)
            if verdict is None:
                pair_id = f"{pair['name_key_a']} ~ {pair['name_key_b']}"
                failures.append(
                    {
                        "item_id": pair_id,
                        "stage": STAGE,
                        "error": error or "the model's answer has no verdict for this pair",
                    }
                )
                decisions.append(pair | {"same": True, "decided_by": FALLBACK, "decision_reason": None})
            else:
                decisions.append(pair | {"same": verdict.same, "decided_by": model, "decision_reason": verdict.reason})
    return pl.DataFrame(decisions, schema=DECISION_COLUMNS), failure_frame(failures)
