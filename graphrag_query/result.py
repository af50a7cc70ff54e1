"""What every search returns, and the search on its way there: context built, answer
still to be written."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import polars as pl

EXTRACTIVE_LABEL = "Extractive answer (no LLM configured): the sentences below are quoted from the index, not written by a model."
NO_DATA_ANSWER = "I am sorry but I am unable to answer this question given the provided data."


@dataclass
class Usage:
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    context_tokens: int = 0
    seconds: float = 0.0


@dataclass
class Citation:
    text_unit_id: str
    document_id: str
    document_title: str
    text_unit_human_readable_id: int


@dataclass
class SearchResult:
    question: str
    method: str
    answer: str
    context: dict[str, pl.DataFrame]
    citations: list[Citation] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    generated_by: str = "extractive"
    route_reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "method": self.method,
            "route_reason": self.route_reason,
            "generated_by": self.generated_by,
            "answer": self.answer,
            "citations": [c.__dict__ for c in self.citations],
            "usage": self.usage.__dict__,
            "context": {name: frame.to_dicts() for name, frame in self.context.items()},
            "details": self.details,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str, indent=2)


@dataclass
class PreparedSearch:
    """A search with its context built and its answer not yet written. ``result`` is
    complete but for the answer (offline: already there), the LLM usage and the time.

    ``pieces``/``apieces`` give the answer piece by piece, the model's text as it is
    written from ``prompt`` with ``values`` (offline: the answer line by line);
    ``complete`` then fills ``result`` in, ``finish`` does all at once."""

    result: SearchResult
    started: float
    llm: Any = None  # a graphrag_query.llm.QueryLLM, or None offline
    prompt: str | None = None  # the final-answer prompt; None when the answer is written
    values: dict[str, Any] = field(default_factory=dict)

    def pieces(self) -> Iterator[str]:
        if self.prompt is None:
            return _lines(self.result.answer)
        return self.llm.stream(self.prompt, **self.values)

    def apieces(self) -> AsyncIterator[str]:
        if self.prompt is None:
            return _alines(self.result.answer)
        return self.llm.astream(self.prompt, **self.values)

    def complete(self, answer: str) -> SearchResult:
        self.result.answer = answer
        self.result.usage.seconds = time.perf_counter() - self.started
        if self.llm is not None:
            self.result.usage.llm_calls, self.result.usage.prompt_tokens, self.result.usage.completion_tokens = self.llm.usage_numbers()
        return self.result

    def finish(self) -> SearchResult:
        return self.complete("".join(self.pieces()))


def _lines(text: str) -> Iterator[str]:
    yield from re.split(r"(?<=\n)", text)


async def _alines(text: str) -> AsyncIterator[str]:
    for line in _lines(text):
        yield line
