"""Basic search: plain RAG over text units, the best by BM25 and by vector fused, packed
into the budget in that order (as many as it holds, or the ``k`` best). No graph: the
baseline the graph modes must beat."""

from __future__ import annotations

import time
from dataclasses import dataclass

import polars as pl

from .context import citations_for, pack
from .extractive import compose, source_evidence
from .local_mode import ANSWER_PROMPT, answer_values
from .modes import ModeSearch
from .ranking import hybrid_ranking
from .reader import IndexReader
from .result import RESPONSE_TYPE, PreparedSearch, SearchResult, Usage
from .writer import Writer

# Text units ranked per token of budget when no ``k`` is given: more than a budget of the
# shortest units can hold, so the budget, not the ranking, is what ends the context.
CANDIDATES_PER_TOKEN = 1 / 40


@dataclass(frozen=True)
class BasicSettings:
    k: int | None = None  # None: as many text units as the budget holds
    budget: int = 12_000
    response_type: str = RESPONSE_TYPE


def build_basic_context(question: str, reader: IndexReader, settings: BasicSettings) -> tuple[pl.DataFrame, str, int]:
    """(text units in context, context text, tokens): the fused lexical and dense
    rankings, packed in that order (``rank`` 1 first) until the budget is full, or the
    ``k`` best."""
    wanted = settings.k or max(50, int(settings.budget * CANDIDATES_PER_TOKEN))
    ranked = hybrid_ranking(question, reader, max(wanted, 50))[:wanted]
    order = pl.DataFrame({"id": ranked}, schema={"id": pl.String}).with_row_index("rank", offset=1)
    units = order.join(reader.table("text_units"), on="id").sort("rank")
    return pack(units, lambda u: f"{u['human_readable_id']}|{u['text']}".replace("\n", " "), settings.budget, "id|text")


def prepare_basic(question: str, reader: IndexReader, settings: BasicSettings, writer: Writer) -> PreparedSearch:
    started = time.perf_counter()
    kept, text, tokens = build_basic_context(question, reader, settings)
    written = writer.answer(
        ANSWER_PROMPT,
        answer_values(question, f"-----Sources-----\n{text}", settings.response_type),
        lambda: compose(question, source_evidence(kept, reader.passage_before)),
    )
    result = SearchResult(
        question=question,
        method="basic",
        answer=written.answer,
        context={"sources": kept.select("id", "human_readable_id", "document_id", "rank", "text")},
        citations=citations_for(kept["id"].to_list(), reader.table("text_units"), reader.table("documents")),
        usage=Usage(context_tokens=tokens),
        generated_by=written.generated_by,
    )
    return PreparedSearch(result, started, writer.llm, written.prompt, written.values)


MODE = ModeSearch(BasicSettings, prepare_basic)
