"""What every search returns."""

from __future__ import annotations

import json
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
