"""Ask a questions file of a corpus in every mode and measure what a user gets: whether the
answer states an expected answer, whether it refuses, whether the gold documents are in the
context at 2k/4k/8k tokens, how long it took. The definitions are
``graphrag_assets.core.evaluation``'s; ``graphrag-eval`` and the indexer's ``evaluations``
step both call ``evaluate``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

import polars as pl

from graphrag_assets.core.evaluation import (
    EVIDENCE_BUDGETS,
    EVIDENCE_COLUMNS,
    MEASURE_COLUMNS,
    Question,
    contains_answer,
    gold_present,
    share,
)

from .api import search
from .modes import MODES
from .reader import IndexReader
from .result import EXTRACTIVE_LABEL, NO_DATA_ANSWER, SearchResult

EVALUATED_MODES = ("basic", "local", "global", "drift")


def parse_modes(text: str) -> tuple[str, ...]:
    """Comma-separated mode names (``auto`` included), checked against the query modes."""
    modes = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [mode for mode in modes if mode not in MODES and mode != "auto"]
    if unknown or not modes:
        raise ValueError(f"modes must be among {', '.join([*MODES, 'auto'])}, got {text!r}")
    return modes


def distinct(items: Iterable) -> list:
    return list(dict.fromkeys(item for item in items if item is not None))


def context_documents(result: SearchResult, unit_document: dict[str, str]) -> list[str] | None:
    """Document ids of the text units in the result's context, in order; None when the
    mode puts no ``sources`` in its context."""
    sources = result.context.get("sources")
    if sources is None:
        return None
    if "document_id" in sources.columns:
        return distinct(sources["document_id"].to_list())
    return distinct(unit_document.get(unit) for unit in sources["id"].to_list())


class Evidence:
    """Which gold documents of a question a result's context holds."""

    def __init__(self, reader: IndexReader):
        units = reader.table("text_units")
        documents = reader.table("documents")
        self.unit_document = dict(zip(units["id"].to_list(), units["document_id"].to_list()))
        self.title_of = dict(zip(documents["id"].to_list(), documents["title"].to_list()))
        self.path_of = dict(zip(documents["id"].to_list(), documents["source_path"].to_list()))

    def present(self, question: Question, result: SearchResult) -> list[bool] | None:
        ids = context_documents(result, self.unit_document)
        if ids is None:
            return None
        return gold_present(question, ids, [self.title_of.get(i) for i in ids], [self.path_of.get(i) for i in ids])


def evaluate(
    reader: IndexReader,
    questions: Sequence[Question],
    modes: Sequence[str] = EVALUATED_MODES,
    use_llm: bool = False,
    progress: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """One row per mode and question (``MEASURE_COLUMNS``). The answer is the mode's at its
    own budget, with the LLM when ``use_llm`` (else extractive, at no cost); the evidence
    is measured on the contexts the mode builds offline at each of ``EVIDENCE_BUDGETS``,
    for questions with gold documents."""
    evidence = Evidence(reader)
    rows = []
    for mode in modes:
        for question in questions:
            started = time.perf_counter()
            result = search(question.question, method=mode, reader=reader, use_llm=use_llm)
            seconds = time.perf_counter() - started
            present = {}
            for column, budget in zip(EVIDENCE_COLUMNS, EVIDENCE_BUDGETS):
                flags = None
                if question.gold:
                    context = search(question.question, method=mode, reader=reader, use_llm=False, budget=budget)
                    flags = evidence.present(question, context)
                present[column] = share(flags) if flags is not None else None
            rows.append(
                {
                    "mode": mode,
                    "question_id": question.id,
                    "question": question.question,
                    "kind": question.kind,
                    "method": result.method,
                    "answer": result.answer,
                    "generated_by": result.generated_by,
                    # The offline answer's label is not part of what it says.
                    "answer_contains": contains_answer(result.answer.replace(EXTRACTIVE_LABEL, ""), question.answers),
                    "refused": result.answer.strip() == NO_DATA_ANSWER,
                    "gold_documents": len(question.gold) if question.gold else None,
                    **present,
                    "context_tokens": result.usage.context_tokens,
                    "seconds": seconds,
                }
            )
        if progress:
            progress(f"{mode}: {len(questions)} questions")
    return pl.DataFrame(rows, schema=MEASURE_COLUMNS)
