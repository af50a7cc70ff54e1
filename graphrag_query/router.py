"""Choosing a mode for ``search(question)``, with the reason, in the open."""

from __future__ import annotations

import re

from .reader import IndexReader

_GLOBAL_CUES = [
    r"\b(main|key|major|overall|recurring|common|top|biggest|dominant)\s+(themes?|topics?|ideas?|trends?|points?|issues?|concerns?)\b",
    r"\bacross\b",
    r"\bsummar(?:y|ise|ize)\b",
    r"\bin general\b",
    r"\b(the|this|these) (corpus|dataset|documents|transcripts|podcasts?|episodes|collection)\b",
    r"\bhow (often|frequently)\b",
    r"总体|主要|主题|整体|总结|概括",
]
_FACT_CUE = re.compile(r"^\s*(who|when|where|which|what year|what date|how many|how much)\b", re.IGNORECASE)


def route(question: str, reader: IndexReader) -> tuple[str, str]:
    """(method, reason)."""
    for pattern in _GLOBAL_CUES:
        match = re.search(pattern, question, re.IGNORECASE)
        if match:
            return "global", f"the question asks about the corpus as a whole ('{match.group(0)}'): global search over community reports"
    lowered = question.casefold()
    named = [t for t in reader.table("entities")["title"].to_list() if len(t) > 2 and t.casefold() in lowered]
    if named:
        return "local", f"the question names entities of the index ({', '.join(sorted(named)[:3])}): local search around them"
    if _FACT_CUE.search(question) and len(question.split()) <= 12:
        return "basic", "a short fact lookup naming no known entity: basic vector search over text units"
    return "local", "no corpus-wide cue and no named entity: local search from the nearest entities"
