"""Entity resolution beyond exact names.

Names are first normalised (``name_key``: case, width, punctuation, whitespace). Then
candidate pairs of the same type are found among names sharing a word (blocking keeps
this near-linear) and merged when:

- their spellings are close (rapidfuzz token-sort ratio >= ``name_similarity``:
  "Cratchit" / "Cratchits", "Xiamen Univ." / "Xiamen University");
- their character-trigram vectors are close (cosine >= ``vector_similarity``), which
  catches reorderings and inflections the ratio misses;
- for people, a one-word name is the first or last word of exactly one longer name of
  the same type ("Scrooge" / "Ebenezer Scrooge"); ambiguous short names are left alone.

Merged groups take the most frequent name as canonical (ties: the longer, then the
alphabetically first), deterministically. Every merge is returned with its reason and
score so it can be stored and queried (table ``entity_merges``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import polars as pl
from rapidfuzz import fuzz

from .embedding import HashedNgramEmbedder

MERGE_COLUMNS = {
    "corpus": pl.String,
    "name_key": pl.String,
    "title": pl.String,
    "merged_into_key": pl.String,
    "merged_into_title": pl.String,
    "reason": pl.String,
    "score": pl.Float64,
}


@dataclass(frozen=True)
class ResolutionSettings:
    enabled: bool = True
    name_similarity: float = 90.0
    vector_similarity: float = 0.9
    min_name_length: int = 4  # shorter names are too ambiguous to merge by spelling


class _UnionFind:
    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)


UNTYPED = {"", "OTHER"}


def _compatible(type_a: str, type_b: str) -> bool:
    return type_a == type_b or type_a in UNTYPED or type_b in UNTYPED


def _same_words(a: str, b: str, settings: ResolutionSettings) -> bool:
    """Word by word, each pair equal, an inflection (one a prefix of the other, at most two
    letters longer: plural, possessive) or a near-identical spelling of a long word."""
    words_a, words_b = a.split(), b.split()
    if len(words_a) != len(words_b):
        return False
    for x, y in zip(words_a, words_b):
        if x == y:
            continue
        short, long = sorted((x, y), key=len)
        if long.startswith(short) and len(long) - len(short) <= 2 and len(short) >= 3:
            continue
        if min(len(x), len(y)) >= 6 and fuzz.ratio(x, y) >= settings.name_similarity:
            continue
        return False
    return True


def candidate_merges(names: pl.DataFrame, settings: ResolutionSettings = ResolutionSettings()) -> list[tuple[str, str, str, float]]:
    """(key a, key b, reason, score) for names (name_key, type) that denote one entity."""
    types = {row["name_key"]: row["type"] for row in names.iter_rows(named=True)}
    keys_all = [k for k in types if len(k) >= settings.min_name_length]
    # Blocking: only names sharing the first five letters of a word are compared, which
    # keeps inflections ("cratchit"/"cratchits") together and the work near-linear.
    blocks: dict[str, list[str]] = defaultdict(list)
    for key in keys_all:
        for word in {w[:5] for w in key.split()}:
            if len(word) >= 3:
                blocks[word].append(key)
    embedder = HashedNgramEmbedder(256)
    pairs: dict[tuple[str, str], tuple[str, float]] = {}
    for word, keys in blocks.items():
        keys = sorted(set(keys))
        if len(keys) < 2 or len(keys) > 200:  # a word shared by hundreds of names says nothing
            continue
        vectors = embedder.embed(keys)
        similarity = vectors @ vectors.T
        for i, a in enumerate(keys):
            for j in range(i + 1, len(keys)):
                b = keys[j]
                if (a, b) in pairs or not _compatible(types[a], types[b]):
                    continue
                if _same_words(a, b, settings):
                    pairs[(a, b)] = ("spelling", round(fuzz.token_sort_ratio(a, b), 1))
                elif similarity[i, j] >= settings.vector_similarity and fuzz.token_sort_ratio(a, b) >= settings.name_similarity:
                    pairs[(a, b)] = ("trigram vectors", round(float(similarity[i, j]), 3))
        people = [k for k in keys if types[k] in {"PERSON", *UNTYPED}]
        for short in (k for k in people if " " not in k and types[k] == "PERSON"):
            owners = [k for k in people if " " in k and short in (k.split()[0], k.split()[-1])]
            if len(owners) == 1:
                pairs[tuple(sorted((short, owners[0])))] = ("part of a full name", 1.0)
    return [(a, b, reason, score) for (a, b), (reason, score) in sorted(pairs.items())]


def resolve(records: pl.DataFrame, corpus: str, settings: ResolutionSettings = ResolutionSettings()) -> tuple[dict[str, str], pl.DataFrame]:
    """(name_key -> canonical name_key, merges) from extracted entity records
    (name_key, title, type, mentions)."""
    if not settings.enabled or records.is_empty():
        return {}, pl.DataFrame(schema=MERGE_COLUMNS)
    stats = records.group_by("name_key").agg(
        pl.col("mentions").sum().alias("weight"),
        pl.col("title").sort_by("mentions", descending=True).first(),
        pl.col("type").filter(pl.col("type") != "").mode().sort().first().fill_null("").alias("type"),
    )
    found = candidate_merges(stats, settings)
    groups = _UnionFind()
    evidence = {}
    for a, b, reason, score in found:
        groups.union(a, b)
        evidence[a] = evidence.get(a) or (reason, score)
        evidence[b] = evidence.get(b) or (reason, score)
    info = {row["name_key"]: row for row in stats.iter_rows(named=True)}
    members: dict[str, list[str]] = defaultdict(list)
    for key in list(groups.parent):
        members[groups.find(key)].append(key)
    mapping, merges = {}, []
    for keys in members.values():
        canonical = sorted(keys, key=lambda k: (-info[k]["weight"], -len(k), k))[0]
        for key in keys:
            if key != canonical:
                mapping[key] = canonical
                reason, score = evidence[key]
                merges.append(
                    {"corpus": corpus, "name_key": key, "title": info[key]["title"], "merged_into_key": canonical,
                     "merged_into_title": info[canonical]["title"], "reason": reason, "score": score}
                )
    return mapping, pl.DataFrame(merges, schema=MERGE_COLUMNS).sort("merged_into_key", "name_key")


def apply_resolution(entities: pl.DataFrame, relationships: pl.DataFrame, mapping: dict[str, str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Extraction records with merged names rewritten to their canonical key; relationships
    that became self-loops are dropped."""
    if not mapping:
        return entities, relationships

    def remap(column: str) -> pl.Expr:
        return pl.col(column).replace(mapping)

    entities = entities.with_columns(remap("name_key"))
    relationships = relationships.with_columns(remap("source_key"), remap("target_key")).with_columns(
        pl.min_horizontal("source_key", "target_key").alias("source_key"), pl.max_horizontal("source_key", "target_key").alias("target_key")
    ).filter(pl.col("source_key") != pl.col("target_key"))
    return entities, relationships
