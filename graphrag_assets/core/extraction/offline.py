"""Offline extraction: per-text-unit entity mentions and same-sentence relationship
evidence, as the records that the graph merge consumes.

Co-occurrence edges over whole text units are built later, in ``core.graph``, among the
entities that survive frequency pruning: storing every pair per unit here would be
quadratic in the noise that pruning removes anyway.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from itertools import combinations

import polars as pl

from ..chunking import split_sentences
from .chinese import chinese_mentions, has_chinese
from .english import Mention, english_mentions, lowercase_vocabulary
from .names import name_key
from .records import EXTRACTED_ENTITY_COLUMNS, EXTRACTED_RELATIONSHIP_COLUMNS, majority_type

MAX_SENTENCE_CHARS = 400
SENTENCES_PER_RECORD = 2


def _tidy(sentence: str) -> str:
    sentence = re.sub(r"\s+", " ", sentence).strip()
    return sentence if len(sentence) <= MAX_SENTENCE_CHARS else sentence[: MAX_SENTENCE_CHARS - 1] + "…"


def _sentences(text: str) -> list[str]:
    # Chinese sentences also split on the full-width comma-free stops handled by
    # split_sentences; newlines inside a paragraph are not sentence ends for prose.
    return [s for s in split_sentences(text) if s.strip()]


def mentions_of(text: str, known_lowercase: set[str] | None = None) -> tuple[list[str], list[Mention]]:
    sentences = _sentences(text)
    mentions = english_mentions(sentences, known_lowercase)
    if has_chinese(text):
        mentions += chinese_mentions(sentences)
    return sentences, mentions


def extract_offline(text_units: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(extracted entities, extracted relationships) records for the given text units."""
    entity_rows, relationship_rows = [], []
    # A capitalised word is a name only if its document never uses it in lower case.
    vocabularies = {
        row["document_id"]: lowercase_vocabulary(" ".join(row["text"]))
        for row in text_units.group_by("document_id").agg("text").iter_rows(named=True)
    }
    for unit in text_units.select("id", "document_id", "corpus", "source_partition", "text").iter_rows(named=True):
        sentences, mentions = mentions_of(unit["text"], vocabularies[unit["document_id"]])
        by_key: dict[str, list[Mention]] = defaultdict(list)
        for mention in mentions:
            key = name_key(mention.title)
            if key:
                by_key[key].append(mention)
        base = {"text_unit_id": unit["id"], "corpus": unit["corpus"], "source_partition": unit["source_partition"]}
        keys_by_sentence: dict[int, set[str]] = defaultdict(set)
        for key, found in by_key.items():
            surface = Counter(m.title for m in found)
            title = sorted(surface.items(), key=lambda item: (-item[1], item[0]))[0][0]
            evidence = list(dict.fromkeys(m.sentence_index for m in found))
            entity_rows.append(
                base
                | {
                    "name_key": key,
                    "title": title,
                    "type": majority_type(Counter(m.type for m in found)),
                    "description": " ".join(_tidy(sentences[i]) for i in evidence[:SENTENCES_PER_RECORD]),
                    "mentions": len(found),
                }
            )
            for i in evidence:
                keys_by_sentence[i].add(key)
        pair_sentences: dict[tuple[str, str], list[int]] = defaultdict(list)
        for index, keys in keys_by_sentence.items():
            for pair in combinations(sorted(keys), 2):
                pair_sentences[pair].append(index)
        for (source, target), indexes in pair_sentences.items():
            relationship_rows.append(
                base
                | {
                    "source_key": source,
                    "target_key": target,
                    "description": " ".join(_tidy(sentences[i]) for i in sorted(indexes)[:SENTENCES_PER_RECORD]),
                    "weight": float(len(indexes)),  # same-sentence co-occurrences
                }
            )
    return (
        pl.DataFrame(entity_rows, schema=EXTRACTED_ENTITY_COLUMNS),
        pl.DataFrame(relationship_rows, schema=EXTRACTED_RELATIONSHIP_COLUMNS),
    )
