"""LLM extraction: one structured call per text unit, plus gleaning passes that ask only
for what was missed, turned into the same per-unit records as the offline method. With
claims on, a claim call per text unit runs alongside (``core.claims``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import NamedTuple, TypeVar

import polars as pl

from ..core.claims import COVARIATE_COLUMNS, claim_records
from ..core.embedding import text_unit_inputs
from ..core.extraction.names import name_key
from ..core.extraction.records import EXTRACTED_ENTITY_COLUMNS, EXTRACTED_RELATIONSHIP_COLUMNS
from ..core.extraction.screening import Rejection, screen_extraction
from ..llm.client import ClientFactory, LLMClient, completion_key, run_with, structured_parameters
from ..llm.errors import LLMError, failure_frame
from ..llm.models import ClaimExtraction, GraphExtraction, schema_of
from ..llm.prompts import load_prompt
from ..llm.settings import LLMSettings

T = TypeVar("T")


def _summary_of(extraction: GraphExtraction) -> str:
    names = [f"- {e.name} ({e.type})" for e in extraction.entities]
    links = [f"- {r.source} -> {r.target}" for r in extraction.relationships]
    return "\n".join(names + links) or "(nothing)"


def extraction_request(text: str, entity_types: list[str]) -> tuple[str, list[dict]]:
    """The prompt version and messages of a text unit's extraction call."""
    prompt = load_prompt("extract_graph")
    return prompt.version, [{"role": "user", "content": prompt.render(entity_types=", ".join(entity_types), text=text)}]


def extraction_cached(settings: LLMSettings, cached: Callable[[list[str]], set[str]], texts: list[str]) -> list[bool]:
    """Whether each text unit's extraction call is answered by the cache (``cached``: the
    keys of those given that are in ``llm_cache``); its gleaning passes were cached with it."""
    model, schema = settings.model_for("extraction"), schema_of(GraphExtraction)
    keys = [
        completion_key(
            model, *extraction_request(text, settings.entity_type_list()), structured_parameters(settings), schema
        )
        for text in texts
    ]
    found = cached(keys)
    return [key in found for key in keys]


async def extract_unit(client: LLMClient, text: str, entity_types: list[str], gleanings: int) -> GraphExtraction:
    glean = load_prompt("glean")
    types = ", ".join(entity_types)
    version, messages = extraction_request(text, entity_types)
    found = await client.structured("extraction", version, messages, GraphExtraction)
    for _ in range(gleanings):
        more = await client.structured(
            "glean",  # counted apart: its cost shows what gleaning adds to extraction
            glean.version,
            [{"role": "user", "content": glean.render(entity_types=types, extracted=_summary_of(found), text=text)}],
            GraphExtraction,
        )
        if not more.entities and not more.relationships:
            break  # nothing was missed: no further passes
        found = GraphExtraction(
            entities=found.entities + more.entities, relationships=found.relationships + more.relationships
        )
    return found


def records_from(
    unit: dict, extraction: GraphExtraction, entity_types: list[str]
) -> tuple[list[dict], list[dict], list[Rejection]]:
    """The unit's entity and relationship records from the model's extraction, screened
    (``core.extraction.screening``), and the names left out or retyped, why."""
    base = {"text_unit_id": unit["id"], "corpus": unit["corpus"], "source_partition": unit["source_partition"]}
    screened_entities, screened_relationships, rejections = screen_extraction(
        unit["text"],
        [e.model_dump() for e in extraction.entities],
        [r.model_dump() for r in extraction.relationships],
        entity_types,
    )
    entities: dict[str, dict] = {}
    for entity in screened_entities:
        key = name_key(entity["name"])  # never empty: screening left out empty names
        row = entities.setdefault(
            key,
            base
            | {
                "name_key": key,
                "title": entity["name"].strip(),
                "type": entity["type"],
                "description": "",
                "mentions": 0,
            },
        )
        row["mentions"] += 1
        row["type"] = row["type"] or entity["type"]  # a later mention (a gleaning) may know the type
        description = entity["description"]
        if description and description not in row["description"]:
            row["description"] = f"{row['description']} {description}".strip()
    relationships: dict[tuple[str, str], dict] = {}
    for relationship in screened_relationships:
        ends = sorted([name_key(relationship["source"]), name_key(relationship["target"])])
        if ends[0] == ends[1]:
            continue
        for key, name in zip(ends, sorted([relationship["source"], relationship["target"]], key=name_key)):
            # An endpoint the model did not list as an entity still becomes one.
            entities.setdefault(
                key, base | {"name_key": key, "title": name.strip(), "type": "", "description": "", "mentions": 1}
            )
        row = relationships.setdefault(
            tuple(ends), base | {"source_key": ends[0], "target_key": ends[1], "description": "", "weight": 0.0}
        )
        row["weight"] += float(relationship["strength"])
        description = relationship["description"]
        if description not in row["description"]:
            row["description"] = f"{row['description']} {description}".strip()
    return list(entities.values()), list(relationships.values()), rejections


async def extract_claims(client: LLMClient, text: str, entity_types: list[str], description: str) -> ClaimExtraction:
    prompt = load_prompt("extract_claims")
    message = prompt.render(entity_types=", ".join(entity_types), claim_description=description, text=text)
    return await client.structured("claims", prompt.version, [{"role": "user", "content": message}], ClaimExtraction)


async def _attempt(call: Awaitable[T]) -> tuple[T | None, str | None]:
    """(result, None), or (None, error) for a call that failed after its retries."""
    try:
        return await call, None
    except LLMError as error:
        return None, str(error)


async def _extract_all(
    client: LLMClient, units: pl.DataFrame, entity_types: list[str], gleanings: int, claim_description: str | None
):
    async def one(unit: dict):
        calls = [_attempt(extract_unit(client, unit["text"], entity_types, gleanings))]
        if claim_description is not None:
            calls.append(_attempt(extract_claims(client, unit["text"], entity_types, claim_description)))
        return unit, await asyncio.gather(*calls)

    return await asyncio.gather(*(one(u) for u in units.iter_rows(named=True)))


class LLMExtraction(NamedTuple):
    entities: pl.DataFrame  # EXTRACTED_ENTITY_COLUMNS
    relationships: pl.DataFrame  # EXTRACTED_RELATIONSHIP_COLUMNS
    claims: pl.DataFrame  # COVARIATE_COLUMNS, numbered in text unit order
    failures: pl.DataFrame  # llm.errors.FAILURE_COLUMNS
    rejections: pl.DataFrame  # REJECTION_COLUMNS: names the screening left out or retyped
    units_without_entities: int  # units the model answered with no entity kept


REJECTION_COLUMNS = {"text_unit_id": pl.String, "name": pl.String, "reason": pl.String}


def extract_with_llm(
    make_client: ClientFactory,
    units: pl.DataFrame,
    entity_types: list[str],
    gleanings: int,
    claim_description: str | None = None,
) -> LLMExtraction:
    """Records and failures for the text units; claims too when ``claim_description`` is
    given (None: claims off, no claim call). Each unit's graph and claim calls run
    concurrently; a failed call contributes a failure row (stage "extraction" or
    "claims"), never a silent gap. With an embedding model the units' texts are embedded
    meanwhile (``LLMClient.embed_ahead``). Units are taken in document order (``document_id``,
    ``chunk_index``) whatever order they are given in, so records, claim numbers and
    failures do not depend on how the rows were read; answers are matched to their unit,
    never taken in the order they arrive."""
    units = units.sort("document_id", "chunk_index", "id")

    async def run(client):
        client.embed_ahead(text_unit_inputs(units)["text"].to_list(), flush=True)
        return await _extract_all(client, units, entity_types, gleanings, claim_description)

    entity_rows, relationship_rows, claim_rows, failures, rejections = [], [], [], [], []
    without_entities = 0
    for unit, ((extraction, error), *claimed) in run_with(make_client, run):
        titles: dict[str, str] = {}
        if error is not None:
            failures.append({"item_id": unit["id"], "stage": "extraction", "error": error})
        else:
            entities, relationships, rejected = records_from(unit, extraction, entity_types)
            entity_rows += entities
            relationship_rows += relationships
            rejections += [{"text_unit_id": unit["id"]} | r._asdict() for r in rejected]
            without_entities += not entities
            titles = {row["name_key"]: row["title"] for row in entities}
        for found, claim_error in claimed:
            if claim_error is not None:
                failures.append({"item_id": unit["id"], "stage": "claims", "error": claim_error})
            else:
                claim_rows += claim_records(unit, [c.model_dump() for c in found.claims], titles)
    claims = pl.DataFrame(
        [row | {"human_readable_id": number} for number, row in enumerate(claim_rows)], schema=COVARIATE_COLUMNS
    )
    return LLMExtraction(
        pl.DataFrame(entity_rows, schema=EXTRACTED_ENTITY_COLUMNS),
        pl.DataFrame(relationship_rows, schema=EXTRACTED_RELATIONSHIP_COLUMNS),
        claims,
        failure_frame(failures),
        pl.DataFrame(rejections, schema=REJECTION_COLUMNS),
        without_entities,
    )
