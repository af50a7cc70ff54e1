"""Screening a model's extraction of one text unit before it becomes records: a small or
badly prompted model lists the prompt's own words ("Entity", "Sentence"), URLs, whole
sentences and names the text never mentions, and types of its own ("BAND, NORTHERN
LIGHTS"). Each name left out is reported with its reason, and a type outside the
configured list is mapped onto one of them when it says the same ("LOCATION" for "GEO"),
else cleared and reported."""

from __future__ import annotations

import re
from typing import NamedTuple

from .names import name_key

# Words that name a kind of thing rather than a thing: a model that lists them is
# repeating the prompt's or the schema's vocabulary.
PLACEHOLDERS = frozenset(
    {
        "entity",
        "entities",
        "entity name",
        "name",
        "names",
        "sentence",
        "text",
        "word",
        "type",
        "description",
        "source",
        "target",
        "relationship",
        "example",
        "unknown",
        "none",
        "null",
        "n a",
        "na",
        "other",
        "thing",
        "person",
        "organization",
        "organisation",
        "geo",
        "location",
        "event",
    }
)
_URL = re.compile(r"https?://|www\.|\b[\w-]+\.(?:com|org|net|io|gov|edu)\b", re.IGNORECASE)
SENTENCE_WORDS = 8  # a name longer than this is a sentence or a phrase, not a name
# Types a model writes for one of the usual configured ones.
TYPE_SYNONYMS = {
    "GEO": ("LOCATION", "PLACE", "COUNTRY", "CITY", "TOWN", "REGION", "GPE", "GEOGRAPHY", "ADDRESS"),
    "ORGANIZATION": ("ORG", "ORGANISATION", "COMPANY", "INSTITUTION", "GROUP", "BUSINESS", "FIRM"),
    "PERSON": ("PEOPLE", "CHARACTER", "HUMAN", "INDIVIDUAL"),
    "EVENT": ("INCIDENT", "OCCASION"),
}


class Rejection(NamedTuple):
    name: str
    reason: str


def rejection_reason(name: str, text_key: str, type_names: frozenset[str]) -> str | None:
    """Why ``name`` is no entity of the text whose ``name_key`` is ``text_key``, or None.
    ``type_names``: the configured types' keys, placeholders too."""
    key = name_key(name)
    if not key:
        return "empty name"
    if key in PLACEHOLDERS or key in type_names:
        return "placeholder"
    if _URL.search(name):
        return "url"
    words = len(key.split())
    stripped = name.strip()
    if words > SENTENCE_WORDS or re.search(r"[.!?]\s+\S", stripped) or (words >= 4 and stripped[-1] in ".!?"):
        return "sentence"
    # At the start of a word of the text ("Fezziwig" in "the Fezziwigs"); in Chinese,
    # written without spaces, anywhere. A name ending in a digit ends where the number does
    # ("1" is not in "1998").
    end = "(?![0-9])" if key[-1].isdigit() else ""
    if not re.search(rf"(?<![a-z0-9]){re.escape(key)}{end}", text_key):
        return "not in the text"
    return None


def configured_type(written: str, entity_types: list[str]) -> str | None:
    """The configured type the model's ``written`` type stands for, or None."""
    for part in re.split(r"[,/|;]", written.strip().upper()):
        part = part.strip().replace(" ", "_")
        for candidate in (part, part.removesuffix("S")):
            if candidate in entity_types:
                return candidate
            for configured, synonyms in TYPE_SYNONYMS.items():
                if candidate in synonyms and configured in entity_types:
                    return configured
    return None


def screen_extraction(
    text: str, entities: list[dict], relationships: list[dict], entity_types: list[str]
) -> tuple[list[dict], list[dict], list[Rejection]]:
    """The ``entities`` (dicts with name, type, description) and ``relationships`` (source,
    target, ...) a model extracted from ``text`` that name something in it, each entity's
    type one of ``entity_types`` or "" (unknown), and what was left out or retyped, why.
    A relationship goes with a rejected end."""
    text_key = name_key(text)
    type_names = frozenset(name_key(t) for t in entity_types)
    rejections: list[Rejection] = []
    verdicts: dict[str, str | None] = {}

    def rejected(name: str) -> bool:
        if name not in verdicts:
            verdicts[name] = rejection_reason(name, text_key, type_names)
            if verdicts[name] is not None:
                rejections.append(Rejection(name, verdicts[name]))
        return verdicts[name] is not None

    kept_entities = []
    for entity in entities:
        if rejected(entity["name"]):
            continue
        written = entity["type"].strip().upper()
        typed = configured_type(written, entity_types) if written else ""
        if typed is None:
            rejections.append(Rejection(entity["name"], f"type {written!r} not in GRAPHRAG_ENTITY_TYPES (cleared)"))
            typed = ""
        kept_entities.append(entity | {"type": typed})
    kept_relationships = [r for r in relationships if not rejected(r["source"]) and not rejected(r["target"])]
    return kept_entities, kept_relationships, rejections
