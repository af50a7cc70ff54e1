"""Offline answers: the most relevant evidence sentences, quoted with their citations.

Honestly labelled: the answer starts with ``EXTRACTIVE_LABEL`` and says which rows the
sentences come from, so nobody mistakes it for a model's synthesis."""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphrag_assets.core.chunking import split_sentences

from .relevance import RelevanceScorer
from .result import EXTRACTIVE_LABEL, NO_DATA_ANSWER


@dataclass(frozen=True)
class Evidence:
    text: str
    citation: str  # e.g. "Sources (12)" or "Reports (3)"


def _clean(sentence: str) -> str:
    sentence = re.sub(r"\s*\[Data:[^\]]*\]", "", sentence)
    return re.sub(r"\s+", " ", sentence).strip()


def best_sentences(question: str, evidence: list[Evidence], limit: int = 6) -> list[tuple[str, str, int]]:
    """(sentence, citation, score) of the most relevant distinct sentences, best first."""
    candidates: list[tuple[str, str]] = []
    for item in evidence:
        for sentence in split_sentences(item.text):
            sentence = _clean(sentence)
            if len(sentence) >= 20 and not sentence.startswith("#"):
                candidates.append((sentence, item.citation))
    if not candidates:
        return []
    scorer = RelevanceScorer(question, [sentence for sentence, _ in candidates])
    scored, seen = [], set()
    for order, (sentence, citation) in enumerate(candidates):
        if sentence in seen:
            continue
        seen.add(sentence)
        scored.append((scorer.score(sentence), -order, sentence, citation))
    scored.sort(reverse=True)
    return [(sentence, citation, score) for score, _, sentence, citation in scored[:limit] if score > 0]


def compose(question: str, evidence: list[Evidence], limit: int = 6, lead: str = "") -> str:
    picked = best_sentences(question, evidence, limit)
    if not picked:
        return NO_DATA_ANSWER
    lines = [EXTRACTIVE_LABEL]
    if lead:
        lines.append(lead)
    lines += [f"- {sentence} [Data: {citation}]" for sentence, citation, _ in picked]
    return "\n".join(lines)
