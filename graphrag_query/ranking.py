"""Ranking text units for a question: lexical and dense rankings fused, then a walk over
the graph of text units and the names they mention.

Multi-hop questions name one thing and ask about another ("where was the director of
film X born?"): the passage about X names the director, and the passage about the
director is reached through that name. Personalized PageRank over the bipartite graph
of text units and names (HippoRAG's idea) does this walk for every seed at once: the
walk restarts at the question's own names and at the best lexical/dense text units, and
spreads along mentions, so a text unit two hops away that is tied to the seeds by a rare
name outranks one that only shares common words with the question.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import polars as pl

from graphrag_assets.core.embedding import HashedNgramEmbedder
from graphrag_common.lexical import FUNCTION_WORDS, fold, has_cjk, reciprocal_rank_fusion, word_tokens


def name_tokens(text: str) -> tuple[str, ...]:
    """Case- and accent-folded word tokens, the unit of whole-word name matching."""
    return tuple(fold(t) for t in word_tokens(text))


def _capitalised_tokens(title: str, key: tuple[str, ...]) -> frozenset[int]:
    """Positions of the name's words (``key``, its folded tokens) that its title writes as
    capitalised content words; none for a title in capitals throughout (a model's "THE
    STATE" says nothing of how the text writes it), in lower case (a topic such as "climate
    change"), or written otherwise than its key ("Gol Maal" for "golmaal"); a title with
    more words than its key ("John Lennon" for "lennon") counts the key's words only."""
    words = {fold(word): word for word in word_tokens(title)}
    if not words or title.isupper() or any(token not in words for token in key):
        return frozenset()
    return frozenset(i for i, token in enumerate(key) if words[token][:1].isupper() and token not in FUNCTION_WORDS)


@dataclass
class MentionGraph:
    """Text units (positions 0..U-1) and names (0..N-1), an edge where a unit mentions a
    name (``unit_of_edge``/``name_of_edge``)."""

    unit_ids: list[str]
    name_keys: list[str]
    unit_of_edge: np.ndarray
    name_of_edge: np.ndarray
    units_per_name: np.ndarray
    names_per_unit: np.ndarray
    by_first_token: dict[str, list[tuple[tuple[str, ...], int]]]
    cjk_names: list[tuple[str, int]]
    types: dict[tuple[str, ...], str]  # a name's tokens -> its entity type
    # Per name, which of its tokens its title capitalises ("The State": the second): a text
    # must capitalise one of them to mention it ("the state" is no mention of The State).
    capitalised: list[frozenset[int]]

    @classmethod
    def build(
        cls,
        text_units: pl.DataFrame,
        entities: pl.DataFrame,
        records: pl.DataFrame | None = None,
        merges: pl.DataFrame | None = None,
    ) -> MentionGraph:
        """From the text units, the merged entities (their ``text_unit_ids``) and, when the
        index has them, every extracted mention (``extracted_entities``, with merged names
        mapped to the entity they went into through ``entity_merges``): mentions of names
        the graph build pruned as rare still link the text units that share them, and
        those rare names are the most telling links of all."""
        links = [entities.select(pl.col("text_unit_ids").alias("text_unit_id"), "name_key").explode("text_unit_id")]
        typed = [entities.select("name_key", "type", "title")]
        if records is not None and not records.is_empty():
            typed.append(records.select("name_key", "type", "title"))
            mapped = records.select("text_unit_id", "name_key")
            if merges is not None and not merges.is_empty():
                into = merges.filter(~pl.col("rejected")).select("name_key", "merged_into_key")
                mapped = mapped.join(into, on="name_key", how="left").select(
                    "text_unit_id", pl.coalesce("merged_into_key", "name_key").alias("name_key")
                )
            links.append(mapped)
        unit_ids = text_units["id"].to_list()
        units = pl.DataFrame({"text_unit_id": unit_ids}, schema={"text_unit_id": pl.String}).with_row_index("unit")
        edges = (
            pl.concat(links)
            .drop_nulls()
            .filter(pl.col("name_key").str.strip_chars() != "")
            .unique()
            .join(units, on="text_unit_id")
            .sort("name_key", "unit")
        )
        names = edges["name_key"].unique(maintain_order=True)
        name_index = pl.DataFrame({"name_key": names}).with_row_index("name")
        # By name, then unit: the order in which the walk sums each name's and each unit's mass.
        edges = edges.join(name_index, on="name_key").sort("name", "unit")
        unit_of_edge = edges["unit"].to_numpy().astype(np.int64)
        name_of_edge = edges["name"].to_numpy().astype(np.int64)
        name_keys = names.to_list()
        by_first_token: dict[str, list[tuple[tuple[str, ...], int]]] = defaultdict(list)
        cjk_names = []
        for position, key in enumerate(name_keys):
            if has_cjk(key):
                cjk_names.append((key, position))
                continue
            tokens = name_tokens(key)
            if tokens:
                by_first_token[tokens[0]].append((tokens, position))
        # The merged entity's type first, else the type its mentions were extracted with.
        first = pl.concat(typed).drop_nulls().unique("name_key", keep="first", maintain_order=True)
        types = {name_tokens(key): kind for key, kind, _ in first.iter_rows()}
        titles = dict(zip(first["name_key"], first["title"]))
        capitalised = [_capitalised_tokens(titles.get(key, key), name_tokens(key)) for key in name_keys]
        units_per_name = np.bincount(name_of_edge, minlength=len(name_keys)).astype(np.float64)
        names_per_unit = np.bincount(unit_of_edge, minlength=len(unit_ids)).astype(np.float64)
        return cls(
            unit_ids,
            name_keys,
            unit_of_edge,
            name_of_edge,
            units_per_name,
            names_per_unit,
            dict(by_first_token),
            cjk_names,
            types,
            capitalised,
        )

    def type_of(self, name: str) -> str | None:
        """The entity type of a name as written, if the index extracted it."""
        return self.types.get(name_tokens(name))

    def knows(self, name: str) -> bool:
        return name_tokens(name) in self.types

    def prevalence(self, name: str) -> float:
        """The share of the text units that mention the name (0 for a name not in the index)."""
        found = list(self.mentions_in(name))
        if len(found) != 1 or not self.unit_ids:
            return 0.0
        return float(self.units_per_name[found[0]]) / len(self.unit_ids)

    def names_in(self, question: str) -> dict[int, float]:
        """Names the question contains, each weighted by its specificity: a name in few
        text units tells more than one in many."""
        return {position: 1 / math.log(1 + self.units_per_name[position]) for position in self.mentions_in(question)}

    def mentions_in(self, text: str) -> dict[int, str]:
        """Names the text contains as whole words, with their surface form (CJK names: as
        a substring, Chinese having no spaces); the longest match wins where matches
        overlap, and a one-word name must be capitalised ("Paris", not "state" or "film"), and
        a name of function words not only as the text's first word ("Who is ...?")."""
        surface = word_tokens(text)
        tokens = [fold(t) for t in surface]
        matches: list[tuple[int, int, int]] = []  # (start, end, name)
        for start, token in enumerate(tokens):
            for name, position in self.by_first_token.get(token, ()):
                end = start + len(name)
                if tuple(tokens[start:end]) != name:
                    continue
                if len(name) == 1 and not (surface[start][0].isupper() or surface[start][0].isdigit()):
                    continue
                # A text's first word is capitalised whatever it is: "Who is ..." names no "Who".
                if start == 0 and all(token in FUNCTION_WORDS for token in name):
                    continue
                wanted = self.capitalised[position]
                if wanted and not any(surface[start + i][0].isupper() for i in wanted):
                    continue
                matches.append((start, end, position))
        matches.sort(key=lambda m: (m[0] - m[1], m[0]))  # longest first
        covered: set[int] = set()
        found: dict[int, str] = {}
        for start, end, position in matches:
            span = set(range(start, end))
            if span & covered:
                continue
            covered |= span
            found[position] = " ".join(surface[start:end])
        folded = fold(text)
        for key, position in self.cjk_names:
            if len(key) >= 2 and key in folded:
                found[position] = key
        return found

    def personalized_pagerank(
        self, unit_seeds: dict[int, float], name_seeds: dict[int, float], damping: float, iterations: int = 20
    ) -> tuple[np.ndarray, np.ndarray]:
        """(unit scores, name scores) of a random walk that follows mentions with
        probability ``damping`` and otherwise restarts at the seeds (weights as given,
        normalised together)."""
        restart_units = np.zeros(len(self.unit_ids))
        restart_names = np.zeros(len(self.name_keys))
        for position, weight in unit_seeds.items():
            restart_units[position] += weight
        for position, weight in name_seeds.items():
            restart_names[position] += weight
        total = restart_units.sum() + restart_names.sum()
        if total <= 0:
            return restart_units, restart_names
        restart_units /= total
        restart_names /= total
        # Along the edges, each unit's mass split evenly among its names and each name's
        # among its units: sums per node with np.bincount, not a scipy.sparse product
        # (scipy.sparse is a heavy import for a cold query).
        split_from_unit = 1 / self.names_per_unit[self.unit_of_edge]
        split_from_name = 1 / self.units_per_name[self.name_of_edge]
        units, names = restart_units.copy(), restart_names.copy()
        for _ in range(iterations):
            units, names = (
                (1 - damping) * restart_units
                + damping
                * np.bincount(
                    self.unit_of_edge, weights=names[self.name_of_edge] * split_from_name, minlength=len(units)
                ),
                (1 - damping) * restart_names
                + damping
                * np.bincount(
                    self.name_of_edge, weights=units[self.unit_of_edge] * split_from_unit, minlength=len(names)
                ),
            )
        return units, names


@dataclass(frozen=True)
class RankingSettings:
    candidates: int = 50  # taken from each of the lexical and dense rankings
    seed_units: int = 10  # best fused text units the walk restarts from
    name_share: float = 0.5  # restart mass of the question's names, relative to the text units'
    damping: float = 0.7


def hybrid_ranking(question: str, reader, candidates: int) -> list[str]:
    """Text unit ids by BM25, fused (reciprocal rank fusion) with the dense ranking when the
    index was embedded by a semantic model. The offline hashed n-gram embedder is itself a
    lexical representation, and a weaker one: on the 2Wiki benchmark fusing it with BM25
    lowered basic recall@5 from 63 % to 53 % (bench/README.md), so its ranking is left out."""
    return _fused(question, reader, reader.text_unit_search, "text_unit_text", candidates)


def report_ranking(question: str, reader, k: int) -> list[str]:
    """Community report ids, best first, ranked as ``hybrid_ranking`` ranks text units."""
    return _fused(question, reader, reader.report_search, "community_full_content", max(k, 50))[:k]


def _fused(question: str, reader, lexical_index, kind: str, candidates: int) -> list[str]:
    lexical = lexical_index.top(question, candidates)["id"].to_list()
    if isinstance(reader.embedder, HashedNgramEmbedder):
        return lexical
    dense = reader.nearest(kind, reader.embed(question), candidates)["id"].to_list()
    fused = reciprocal_rank_fusion([lexical, dense])
    return sorted(fused, key=lambda item: -fused[item])


@dataclass
class GraphRanking:
    """Text units ranked for a question (``units``: id, score, best first), the names the
    question contains and every name's score from the same walk."""

    units: pl.DataFrame
    question_names: dict[str, float]
    graph: MentionGraph
    name_scores: np.ndarray

    def top_names(self, k: int) -> list[tuple[str, float]]:
        """(name key, score) of the k names the walk reached most, best first."""
        reached = np.flatnonzero(self.name_scores > 0)
        if reached.size > k:
            reached = reached[np.argpartition(-self.name_scores[reached], k - 1)[:k]]
        reached = reached[np.argsort(-self.name_scores[reached], kind="stable")]
        return [(self.graph.name_keys[n], float(self.name_scores[n])) for n in reached]


def rank_by_graph(question: str, reader, settings: RankingSettings = RankingSettings()) -> GraphRanking:
    graph: MentionGraph = reader.mention_graph
    fused = hybrid_ranking(question, reader, settings.candidates)
    position = {unit: i for i, unit in enumerate(graph.unit_ids)}
    unit_seeds = {
        position[u]: 1 / rank for rank, u in enumerate(fused[: settings.seed_units], start=1) if u in position
    }
    in_question = graph.names_in(question)
    name_total = sum(in_question.values())
    unit_total = sum(unit_seeds.values())
    if name_total and unit_total:
        in_question = {n: w / name_total * unit_total * settings.name_share for n, w in in_question.items()}
    unit_scores, name_scores = graph.personalized_pagerank(unit_seeds, in_question, settings.damping)
    walked = np.flatnonzero(unit_scores > 0)
    order = walked[np.argsort(-unit_scores[walked], kind="stable")]
    ranked = [graph.unit_ids[i] for i in order]
    # Units the walk never reached (no names) keep their fused order behind the rest.
    seen = set(ranked)
    tail = [u for u in fused if u not in seen]
    scores = [float(unit_scores[i]) for i in order] + [0.0] * len(tail)
    return GraphRanking(
        units=pl.DataFrame({"id": ranked + tail, "score": scores}, schema={"id": pl.String, "score": pl.Float64}),
        question_names={graph.name_keys[n]: w for n, w in in_question.items()},
        graph=graph,
        name_scores=name_scores,
    )
