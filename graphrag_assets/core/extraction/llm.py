"""LLM extraction: one structured call per text unit, plus gleaning passes that ask only
for what was missed, turned into the same per-unit records as the offline method."""

from __future__ import annotations

import asyncio

import polars as pl

from ...llm.client import LLMClient, LLMError
from ...llm.models import GraphExtraction
from ...llm.prompts import load_prompt
from .names import name_key
from .records import EXTRACTED_ENTITY_COLUMNS, EXTRACTED_RELATIONSHIP_COLUMNS

FAILURE_COLUMNS = {"item_id": pl.String, "stage": pl.String, "error": pl.String}


def _summary_of(extraction: GraphExtraction) -> str:
    names = [f"- {e.name} ({e.type})" for e in extraction.entities]
    links = [f"- {r.source} -> {r.target}" for r in extraction.relationships]
    return "\n".join(names + links) or "(nothing)"


async def extract_unit(client: LLMClient, text: str, entity_types: list[str], gleanings: int) -> GraphExtraction:
    prompt, glean = load_prompt("extract_graph"), load_prompt("glean")
    types = ", ".join(entity_types)
    found = await client.structured(
        "extraction", prompt.version, [{"role": "user", "content": prompt.render(entity_types=types, text=text)}], GraphExtraction
    )
    for _ in range(gleanings):
        more = await client.structured(
            "extraction",
            glean.version,
            [{"role": "user", "content": glean.render(entity_types=types, extracted=_summary_of(found), text=text)}],
            GraphExtraction,
        )
        if not more.entities and not more.relationships:
            break  # nothing was missed: no further passes
        found = GraphExtraction(entities=found.entities + more.entities, relationships=found.relationships + more.relationships)
    return found


def records_from(unit: dict, extraction: GraphExtraction) -> tuple[list[dict], list[dict]]:
    base = {"text_unit_id": unit["id"], "corpus": unit["corpus"], "source_partition": unit["source_partition"]}
    entities: dict[str, dict] = {}
    for entity in extraction.entities:
        key = name_key(entity.name)
        if not key:
            continue
        row = entities.setdefault(key, base | {"name_key": key, "title": entity.name.strip(), "type": entity.type.strip().upper(), "description": "", "mentions": 0})
        row["mentions"] += 1
        if entity.description and entity.description not in row["description"]:
            row["description"] = f"{row['description']} {entity.description}".strip()
    relationships: dict[tuple[str, str], dict] = {}
    for relationship in extraction.relationships:
        ends = sorted([name_key(relationship.source), name_key(relationship.target)])
        if not all(ends) or ends[0] == ends[1]:
            continue
        for key, name in zip(ends, sorted([relationship.source, relationship.target], key=name_key)):
            # An endpoint the model did not list as an entity still becomes one.
            entities.setdefault(key, base | {"name_key": key, "title": name.strip(), "type": "", "description": "", "mentions": 1})
        row = relationships.setdefault(tuple(ends), base | {"source_key": ends[0], "target_key": ends[1], "description": "", "weight": 0.0})
        row["weight"] += float(relationship.strength)
        if relationship.description not in row["description"]:
            row["description"] = f"{row['description']} {relationship.description}".strip()
    return list(entities.values()), list(relationships.values())


async def _extract_all(client: LLMClient, units: pl.DataFrame, entity_types: list[str], gleanings: int):
    async def one(unit: dict):
        try:
            return unit, await extract_unit(client, unit["text"], entity_types, gleanings), None
        except LLMError as error:
            return unit, None, str(error)

    return await asyncio.gather(*(one(u) for u in units.iter_rows(named=True)))


def extract_with_llm(
    make_client, units: pl.DataFrame, entity_types: list[str], gleanings: int
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(entity records, relationship records, failures) for the text units. A unit whose
    call failed contributes a failure row, never a silent gap."""

    async def run():
        return await _extract_all(make_client(), units, entity_types, gleanings)

    entity_rows, relationship_rows, failures = [], [], []
    for unit, extraction, error in asyncio.run(run()):
        if error is not None:
            failures.append({"item_id": unit["id"], "stage": "extraction", "error": error})
            continue
        entities, relationships = records_from(unit, extraction)
        entity_rows += entities
        relationship_rows += relationships
    return (
        pl.DataFrame(entity_rows, schema=EXTRACTED_ENTITY_COLUMNS),
        pl.DataFrame(relationship_rows, schema=EXTRACTED_RELATIONSHIP_COLUMNS),
        pl.DataFrame(failures, schema=FAILURE_COLUMNS),
    )
