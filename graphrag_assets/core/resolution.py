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

These proposals are pairs (``candidate_pairs``). Each pair gets a decision: by default the
rule's own (``rule_decisions``), or a model's verdict (``core.merge_confirmation``). Names
that normalise to the same key are one entity without any decision.

Accepted pairs are grouped (union-find); a pair is not applied when it would put two
names the decisions told apart into one group. Merged groups take the most frequent name
as canonical (ties: the longer, then the alphabetically first), deterministically. Every
merge, and every proposed pair that was not applied, is returned with the rule's reason
and score, who decided and why, so it can be stored and queried (table ``entity_merges``).
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
    "reason": pl.String,  # the rule that proposed the merge
    "score": pl.Float64,
    "decided_by": pl.String,  # "rule", the confirming model's name, or FALLBACK
    "rejected": pl.Boolean,  # proposed but not applied: name_key stays its own entity
    "decision_reason": pl.String,  # the model's reason, or why a pair was not applied
}
PAIR_COLUMNS = {"name_key_a": pl.String, "name_key_b": pl.String, "reason": pl.String, "score": pl.Float64}
DECISION_COLUMNS = PAIR_COLUMNS | {"same": pl.Boolean, "decided_by": pl.String, "decision_reason": pl.String}
RULE = "rule"
FALLBACK = "rule (LLM failed)"


@dataclass(frozen=True)
class ResolutionSettings:
    enabled: bool = True
    name_similarity: float = 90.0
    vector_similarity: float = 0.9
    min_name_length: int = 4  # shorter names are too ambiguous to merge by spelling


class UnionFind:
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


def name_stats(records: pl.DataFrame) -> pl.DataFrame:
    """One row per name_key of extracted entity records (name_key, title, type, mentions):
    its weight (mentions), most mentioned title and majority type."""
    return records.group_by("name_key").agg(
        pl.col("mentions").sum().alias("weight"),
        pl.col("title").sort_by("mentions", descending=True).first(),
        pl.col("type").filter(pl.col("type") != "").mode().sort().first().fill_null("").alias("type"),
    )


def candidate_pairs(records: pl.DataFrame, settings: ResolutionSettings = ResolutionSettings()) -> pl.DataFrame:
    """The merges the rules propose for extracted entity records, as pairs (PAIR_COLUMNS)."""
    if not settings.enabled or records.is_empty():
        return pl.DataFrame(schema=PAIR_COLUMNS)
    return pl.DataFrame(candidate_merges(name_stats(records), settings), schema=PAIR_COLUMNS, orient="row")


def rule_decisions(pairs: pl.DataFrame) -> pl.DataFrame:
    """Every proposed pair accepted on the rule's word."""
    return pairs.with_columns(pl.lit(True).alias("same"), pl.lit(RULE).alias("decided_by"), pl.lit(None, pl.String).alias("decision_reason"))


def resolve(
    records: pl.DataFrame, corpus: str, settings: ResolutionSettings = ResolutionSettings(), decisions: pl.DataFrame | None = None
) -> tuple[dict[str, str], pl.DataFrame]:
    """(name_key -> canonical name_key, merges) from extracted entity records
    (name_key, title, type, mentions) and the decisions on the proposed pairs
    (DECISION_COLUMNS; by default the rules' proposals, all accepted)."""
    if decisions is None:
        decisions = rule_decisions(candidate_pairs(records, settings))
    if decisions.is_empty():
        return {}, pl.DataFrame(schema=MERGE_COLUMNS)
    info = {row["name_key"]: row for row in name_stats(records).iter_rows(named=True)}

    def rank(key: str) -> tuple:
        return (-info[key]["weight"], -len(key), key)

    groups = UnionFind()
    told_apart = [(d["name_key_a"], d["name_key_b"]) for d in decisions.iter_rows(named=True) if not d["same"]]
    evidence: dict[str, dict] = {}
    not_applied: list[dict] = []
    for decision in decisions.sort("name_key_a", "name_key_b").iter_rows(named=True):
        a, b = decision["name_key_a"], decision["name_key_b"]
        if not decision["same"]:
            not_applied.append(decision)
            continue
        root_a, root_b = groups.find(a), groups.find(b)
        blocking = next(((x, y) for x, y in told_apart if {groups.find(x), groups.find(y)} == {root_a, root_b}), None)
        if blocking:
            names = " and ".join(info[k]["title"] for k in blocking)
            not_applied.append(decision | {"decision_reason": f"not applied: it would join {names}, which were told apart"})
            continue
        groups.union(a, b)
        evidence.setdefault(a, decision)
        evidence.setdefault(b, decision)
    members: dict[str, list[str]] = defaultdict(list)
    for key in list(groups.parent):
        members[groups.find(key)].append(key)

    def row(key: str, into: str, decision: dict, rejected: bool) -> dict:
        return {
            "corpus": corpus, "name_key": key, "title": info[key]["title"], "merged_into_key": into, "merged_into_title": info[into]["title"],
            "reason": decision["reason"], "score": decision["score"], "decided_by": decision["decided_by"], "rejected": rejected,
            "decision_reason": decision["decision_reason"],
        }

    mapping, merges = {}, []
    for keys in members.values():
        canonical = min(keys, key=rank)
        for key in keys:
            if key != canonical:
                mapping[key] = canonical
                merges.append(row(key, canonical, evidence[key], False))
    for decision in not_applied:
        into, key = sorted((decision["name_key_a"], decision["name_key_b"]), key=rank)
        merges.append(row(key, into, decision, True))
    return mapping, pl.DataFrame(merges, schema=MERGE_COLUMNS).sort("rejected", "merged_into_key", "name_key")


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
