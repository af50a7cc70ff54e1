"""Choosing a mode for ``search(question)``, with the reason, in the open.

- A question about the collection as a whole ("main themes", "across the episodes"):
  global search over community reports.
- A question that names entities of the index, as whole words: local search, which walks
  from those names to their evidence (multi-hop questions are of this kind).
- A short fact question naming nothing the index knows: basic search over text units.
- Anything else: local search from the question's best-matching text units.
"""

from __future__ import annotations

import re

import polars as pl

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


def named_entities(question: str, reader: IndexReader) -> list[str]:
    """Titles of the entities the question names as whole words, most specific first;
    proper names only: a topic phrase of the index ("storm drains") does not make a fact
    question about a particular thing."""
    graph = reader.mention_graph
    entities = reader.table("entities").filter(pl.col("type") != "CONCEPT")
    titles = dict(zip(entities["name_key"], entities["title"]))
    found = sorted(graph.names_in(question).items(), key=lambda item: -item[1])
    return [titles[graph.name_keys[n]] for n, _ in found if graph.name_keys[n] in titles]


def route(question: str, reader: IndexReader) -> tuple[str, str]:
    """(method, reason)."""
    for pattern in _GLOBAL_CUES:
        match = re.search(pattern, question, re.IGNORECASE)
        if match:
            return (
                "global",
                (
                    f"the question asks about the corpus as a whole ('{match.group(0)}'): global search over community "
                    f"reports"
                ),
            )
    named = named_entities(question, reader)
    if named:
        return (
            "local",
            (
                f"the question names entities of the index ({', '.join(named[:3])}): local search from them through "
                f"the graph"
            ),
        )
    if _FACT_CUE.search(question) and len(question.split()) <= 12:
        return "basic", "a short fact question naming no entity of the index: basic search over text units"
    return (
        "local",
        "no corpus-wide cue and no entity of the index named: local search from the best-matching text units",
    )
