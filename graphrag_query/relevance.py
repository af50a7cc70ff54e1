"""A deterministic relevance function: the offline stand-in for an LLM's judgement.

Terms are those of BM25 (``core.lexical``: folded, stemmed content words, Chinese
character bigrams), less question words. A text's relevance to a question is the share of the question's
inverse-document-frequency mass it covers, scaled to 0-100: a rare question word found in
the text counts for more than a common one, and a text that covers none of the question
scores 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache

from graphrag_common.lexical import search_terms

from .search import LexicalIndex

_QUESTION_WORDS = {
    "what",
    "who",
    "whom",
    "which",
    "when",
    "where",
    "why",
    "how",
    "does",
    "did",
    "do",
    "tell",
    "describe",
    "explain",
    # "What is the name of ...", "What are they called?": the form of the question; the
    # sentence that answers says the name, not the word "name".
    "name",
    "named",
    "called",
    # "How many ...", "How much ...": asked as a number, not a word the answer uses.
    "many",
    "much",
}
# Words that ask about the corpus as a whole rather than about something in it, and words
# that frame a question rather than name its subject ("typically", "cited", "any specific"):
# a question made only of these ("What are the main themes?") is about every report, by
# importance. Framing words are rare in most corpora, so counted as terms they would weigh
# more than the subject itself ("How do guests generally perceive privacy laws?").
# The collection's own names count among them ("the themes of this story", "these podcasts").
GENERIC_TERMS = set(
    search_terms(
        """main key major overall recurring common top theme themes topic topics idea ideas trend trends discussed
        discuss discussion discussions documents document corpus dataset collection important general summary
        summarize summarise emphasize emphasise mentioned frequently often points issues
        typically generally usually commonly consistently particular specific various multiple perceive cite
        cited mention highlight highlighted suggest suggested say example examples kind kinds
        story stories book books novel text texts article articles podcast podcasts episode episodes transcript
        transcripts
        主要 主题 总体 整体 总结 概括 话题"""
    )
)

# Of those, the words that ask for an overview: a question with them is answered by the
# reports' leading findings when no report sentence matches its other words.
OVERVIEW_TERMS = set(search_terms("theme themes topic topics trend trends summary summarize summarise overview"))


def terms(text: str) -> list[str]:
    """The text's search terms (``core.lexical``, as BM25 uses them) without question words."""
    return [
        term for term in search_terms(text) if term not in _QUESTION_WORDS and (len(term) > 2 or not term.isascii())
    ]


@lru_cache(maxsize=1 << 15)
def term_set(text: str) -> frozenset[str]:
    """``terms`` as a set, remembered: answers score the same evidence sentences again and
    again (DRIFT's follow-ups quote the same text units, and splitting them into terms
    anew each time would be most of its work)."""
    return frozenset(terms(text))


MIN_COVERAGE = 0.3
# A text holding two or more of the question's terms is about it at a lower coverage: long
# questions ("What barriers to growth do leaders mention, and how do they overcome them?")
# are rarely covered by 30 % in one sentence, while one stray word never reaches two terms.
MIN_COVERAGE_OF_SEVERAL = 0.15


class RelevanceScorer:
    """Scores texts against one question, with idf from a reference collection."""

    def __init__(self, question: str, collection: Iterable[str]):
        documents = [term_set(text) for text in collection]
        self._weigh(question, Counter(term for document in documents for term in document), len(documents))

    @classmethod
    def over(cls, question: str, index: LexicalIndex) -> RelevanceScorer:
        """With idf from a BM25 index's own document frequencies: no pass over the texts."""
        scorer = cls.__new__(cls)
        scorer._weigh(question, index.bm25.document_frequencies(terms(question)), index.bm25.size)
        return scorer

    def _weigh(self, question: str, counts: Mapping[str, int], size: int) -> None:
        n = max(size, 1)
        asked = list(dict.fromkeys(terms(question)))
        # Chinese bigrams that occur nowhere are mostly artefacts across a word boundary
        # ("燕在" of "王海燕在"), not words the asker used: they would only dilute coverage.
        self.question_terms = [
            term for term in asked if term not in GENERIC_TERMS and (term.isascii() or counts.get(term, 0) > 0)
        ]
        # Only corpus-wide words: the question is about everything (ranked by importance).
        self.generic = bool(asked) and not self.question_terms or not asked
        # Asks for an overview (themes, topics), if perhaps of a subject the texts never name.
        self.asks_overview = any(term in OVERVIEW_TERMS for term in asked)
        self.idf = {term: math.log(1 + (n + 1) / (counts.get(term, 0) + 0.5)) for term in self.question_terms}
        self.total = sum(self.idf.values())

    def coverage(self, text: str) -> float:
        """0-1: the share of the question's idf mass that the text contains."""
        return self.coverage_terms(term_set(text))

    def coverage_terms(self, present: set[str] | frozenset[str]) -> float:
        """``coverage`` of a text given its terms."""
        if not self.total:
            return 0.0
        return sum(weight for term, weight in self.idf.items() if term in present) / self.total

    def score_terms(self, present: set[str] | frozenset[str]) -> int:
        """``score`` of a text given its terms."""
        share = self.coverage_terms(present)
        if share >= MIN_COVERAGE or (
            share >= MIN_COVERAGE_OF_SEVERAL and sum(term in present for term in self.idf) >= 2
        ):
            return round(100 * share)
        return 0

    def score(self, text: str) -> int:
        """0-100: the share of the question's idf mass that the text contains; below
        MIN_COVERAGE (MIN_COVERAGE_OF_SEVERAL for a text holding several of the question's
        terms) the text shares a stray word with the question, not its subject: 0."""
        return self.score_terms(term_set(text))
