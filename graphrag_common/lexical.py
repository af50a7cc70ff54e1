"""Lexical retrieval: one tokenizer for texts and questions, and BM25 over it.

Dense embeddings find paraphrases; exact names, numbers and rare words are found far more
reliably by term matching, which is why BM25 beats every embedder we ship on multi-hop
questions full of names. Both the query side (basic search, local seeds, the DRIFT
primer, global relevance) and anything that ranks texts use these functions.

Terms: case- and accent-folded words (letters and digits, so "XIV", "747" and "Beyoncé"
= "beyonce" are terms), English function words dropped, a light plural/possessive stem;
Chinese, written without spaces, contributes character bigrams.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import polars as pl

# Function words only: content words that look common ("first", "born", "film") are what
# multi-hop questions are made of, and BM25's idf already discounts frequent ones.
FUNCTION_WORDS = frozenset(
    """
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each either few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most my
myself neither no nor not of off on once only or other our ours ourselves out over own same she should so
some such than that the their theirs them themselves then there these they this those through to too
under until up very was we were what when where which while who whom whose why will with would you your
yours yourself yourselves
""".split()
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Combining marks that NFKD splits off accented letters (Latin, Greek, Cyrillic, Vietnamese).
_COMBINING = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_POSSESSIVE = re.compile(r"['’]s\b")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_PIECE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+|[^\u3400-\u9fff\uf900-\ufaff]+")  # CJK runs, other runs


def word_tokens(text: str) -> list[str]:
    """Words as written (letters and digits), possessives dropped: the unit of whole-word
    name matching."""
    return _WORD.findall(_POSSESSIVE.sub("", text))


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


# Lower-case words inside a person's or place's name ("Margaret of Bavaria", "Leonardo da
# Vinci", "Ailéan mac Ruaidhrí"): the query side reads names with them.
NAME_JOINERS = frozenset("of de da del della der den di du la le van von y al bin ibn mac zu".split())


def fold(text: str) -> str:
    """Lower case without accents ("Beyoncé" -> "beyonce"), full-width forms narrowed."""
    if text.isascii():
        return text.lower()
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text.casefold()))


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """Plural and possessive endings only (Harman's S-stemmer): heavier stemmers merge
    names ("Morris" -> "morri") that must stay apart."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes", "ses", "ues")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss", "is")):
        return word[:-1]
    return word


def search_terms(text: str) -> list[str]:
    """The terms of a text, in order, repeated as often as they occur."""
    folded = _POSSESSIVE.sub("", text.lower() if text.isascii() else fold(text))
    found: list[str] = []
    for token in _WORD.findall(folded):
        if token in FUNCTION_WORDS:
            continue
        if token.isascii():
            found.append(_stem(token))
            continue
        for piece in _PIECE.findall(token):
            if _CJK.match(piece):
                found.extend(piece[i : i + 2] for i in range(max(len(piece) - 1, 1)))
            elif piece not in FUNCTION_WORDS:
                found.append(_stem(piece))
    return found


TERM_COLUMNS = {"id": pl.String, "term": pl.String, "tf": pl.Int64}
# What the index stores: the terms of every text unit and report, so that a reader builds
# BM25 in a fraction of a second instead of tokenizing the corpus again.
SEARCH_TERM_COLUMNS = {"corpus": pl.String, "kind": pl.String, **TERM_COLUMNS}
LEXICAL_KINDS = ("text_unit_text", "community_full_content")


def term_counts(ids: Sequence[str], texts: Sequence[str]) -> pl.DataFrame:
    """(id, term, tf): how often each term occurs in each text; what BM25 is built from."""
    rows = [(i, term, n) for i, text in zip(ids, texts) for term, n in Counter(search_terms(text)).items()]
    return pl.DataFrame(rows, schema=TERM_COLUMNS, orient="row")


def search_term_rows(texts: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """SEARCH_TERM_COLUMNS rows for (id, kind, text) rows of the LEXICAL_KINDS."""
    frames = [
        term_counts(group["id"].to_list(), group["text"].to_list()).with_columns(
            pl.lit(corpus).alias("corpus"), pl.lit(kind).alias("kind")
        )
        for kind in LEXICAL_KINDS
        if not (group := texts.filter(pl.col("kind") == kind)).is_empty()
    ]
    if not frames:
        return pl.DataFrame(schema=SEARCH_TERM_COLUMNS)
    return pl.concat(frames).select(list(SEARCH_TERM_COLUMNS)).cast(SEARCH_TERM_COLUMNS)


# Lucene's defaults. (Anserini's passage defaults 0.9 / 0.4 moved 2Wiki basic recall@5 from
# 63 to 65 % but local search's gold evidence at 4k tokens from 95 to 92 %: noise either way.)
K1, B = 1.2, 0.75


@dataclass
class Bm25:
    """BM25 (Lucene's idf) over a fixed list of texts, held as compressed
    postings (term -> text positions and their weights), so a question touches only the
    texts that share a term with it."""

    vocabulary: dict[str, int]
    bounds: np.ndarray  # postings of term t: positions[bounds[t]:bounds[t + 1]]
    positions: np.ndarray
    weights: np.ndarray
    size: int

    @classmethod
    def from_texts(cls, texts: Sequence[str], **parameters) -> Bm25:
        ids = [str(i) for i in range(len(texts))]
        return cls.from_counts(term_counts(ids, texts), ids, **parameters)

    @classmethod
    def from_counts(cls, counts: pl.DataFrame, ids: Sequence[str], k1: float = K1, b: float = B) -> Bm25:
        """From (id, term, tf) rows; ``ids`` fixes the texts and their positions (texts
        without terms score 0, rows of other ids are ignored)."""
        n = len(ids)
        order = pl.DataFrame({"id": list(ids)}, schema={"id": pl.String}).with_row_index("position")
        rows = counts.join(order, on="id").select(
            pl.col("position").cast(pl.Int64), "term", pl.col("tf").cast(pl.Float64)
        )
        lengths = np.zeros(n, dtype=np.float64)
        per_text = rows.group_by("position").agg(pl.col("tf").sum())
        lengths[per_text["position"].to_numpy()] = per_text["tf"].to_numpy()
        average = float(lengths.mean()) if n and lengths.mean() > 0 else 1.0
        rows = rows.sort("term", "position")
        terms = rows["term"]
        starts = terms.rle_id()  # one run per term, in sorted order
        run_lengths = starts.value_counts(sort=False).sort(starts.name)["count"].to_numpy().astype(np.int64)
        bounds = np.concatenate([[0], np.cumsum(run_lengths)]).astype(np.int64)
        document_frequency = np.repeat(run_lengths, run_lengths).astype(np.float64)
        idf = np.log(1 + (n - document_frequency + 0.5) / (document_frequency + 0.5))
        positions = rows["position"].to_numpy()
        tf = rows["tf"].to_numpy()
        weights = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[positions] / average))
        # The distinct terms in sorted order are the runs' terms (no gather by a numpy index:
        # polars would import numpy.ma for it, a heavy import for a cold query).
        vocabulary = {term: index for index, term in enumerate(terms.unique(maintain_order=True).to_list())}
        return cls(vocabulary, bounds, positions, weights, n)

    def document_frequencies(self, terms: Iterable[str]) -> dict[str, int]:
        """How many texts hold each of the terms."""
        found = {}
        for term in terms:
            index = self.vocabulary.get(term)
            found[term] = int(self.bounds[index + 1] - self.bounds[index]) if index is not None else 0
        return found

    def scores(self, question: str) -> np.ndarray:
        """A score per text (0 where no term is shared); a term asked twice counts twice."""
        total = np.zeros(self.size, dtype=np.float64)
        for term, times in Counter(search_terms(question)).items():
            index = self.vocabulary.get(term)
            if index is not None:
                span = slice(self.bounds[index], self.bounds[index + 1])
                total[self.positions[span]] += times * self.weights[span]
        return total

    def top(self, question: str, k: int) -> list[tuple[int, float]]:
        """(position, score) of the k best texts with a positive score, best first; ties
        keep the texts' order."""
        scores = self.scores(question)
        candidates = np.flatnonzero(scores > 0)
        if candidates.size > k:
            candidates = candidates[np.argpartition(-scores[candidates], k - 1)[:k]]
        order = sorted(candidates.tolist(), key=lambda i: (-scores[i], i))
        return [(i, float(scores[i])) for i in order]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Cormack et al.'s fusion: each ranking gives an item weight / (k + rank); rank-based,
    so scores on different scales (BM25, cosine) combine without calibration."""
    fused: dict[str, float] = {}
    for index, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[index]
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused
