"""What every search returns, and the search on its way there: context built, answer
still to be written."""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from .writer import QueryModel

EXTRACTIVE_LABEL = (
    "Extractive answer (no LLM configured): the sentences below are quoted from the index, not written by a model."
)
# The form of the answer when the caller names none.
RESPONSE_TYPE = "multiple paragraphs"
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


@dataclass(repr=False)  # the generated repr would print every context table in full
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

    # Display: a result is what a notebook shows last in a cell. The answer comes first,
    # then where it came from; the context tables (often thousands of rows) stay folded.

    def _header(self) -> str:
        written = "extractive, no LLM" if self.generated_by == "extractive" else f"written by {self.generated_by}"
        return f"{self.method} search ({written})" + (f"; routed: {self.route_reason}" if self.route_reason else "")

    def _usage_line(self) -> str:
        u = self.usage
        calls = (
            f"{u.llm_calls} LLM calls, {u.prompt_tokens:,} prompt / {u.completion_tokens:,} completion tokens"
            if u.llm_calls
            else "no LLM calls"
        )
        return f"{u.context_tokens:,} context tokens, {calls}, {u.seconds:.2f} s"

    def _sources(self) -> list[str]:
        """One line per cited text unit, in citation order, without repeats; the number is
        the one the answer cites ("[Data: Sources (8)]")."""
        seen = dict.fromkeys(f"({c.text_unit_human_readable_id}) {c.document_title}" for c in self.citations)
        return list(seen)

    def __repr__(self) -> str:
        tables = ", ".join(f"{name}: {frame.height} rows" for name, frame in self.context.items())
        answer = self.answer if len(self.answer) <= 300 else self.answer[:300] + " ..."
        return (
            f"SearchResult({self._header()}\n{answer}\n[{len(self._sources())} sources; {self._usage_line()}; context "
            f"{{{tables}}}])"
        )

    def _repr_markdown_(self) -> str:
        lines = [f"**{self._header()}**", "", self.answer, ""]
        if self.citations:
            lines += ["**Sources**", ""] + [f"- {source}" for source in self._sources()] + [""]
        lines.append(f"*{self._usage_line()}*")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        parts = [
            f"<p><b>{html.escape(self._header())}</b></p>",
            f'<div style="white-space: pre-wrap">{html.escape(self.answer)}</div>',
        ]
        if self.citations:
            parts.append(
                "<p><b>Sources</b></p><ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in self._sources()) + "</ul>"
            )
        parts.append(f"<p><i>{html.escape(self._usage_line())}</i></p>")
        for name, frame in self.context.items():
            shown = frame.head(DISPLAYED_CONTEXT_ROWS)
            more = f", first {DISPLAYED_CONTEXT_ROWS} shown" if frame.height > DISPLAYED_CONTEXT_ROWS else ""
            parts.append(
                f"<details><summary>context: {html.escape(name)} ({frame.height} "
                f"rows{more})</summary>{shown._repr_html_()}</details>"
            )
        return "\n".join(parts)


DISPLAYED_CONTEXT_ROWS = 20


@dataclass
class PreparedSearch:
    """A search with its context built and its answer not yet written. ``result`` is
    complete but for the answer (offline: already there), the LLM usage and the time.

    ``pieces``/``apieces`` give the answer piece by piece, the model's text as it is
    written from ``prompt`` with ``values`` (offline: the answer line by line);
    ``complete`` then fills ``result`` in, ``finish`` does all at once."""

    result: SearchResult
    started: float
    llm: QueryModel | None = None  # None: the extractive writer's search
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
        """The result with its answer; the search's LLM calls are logged now, once the
        answer is there, so that logging never delays it."""
        self.result.answer = answer
        self.result.usage.seconds = time.perf_counter() - self.started
        if self.llm is not None:
            self.result.usage.llm_calls, self.result.usage.prompt_tokens, self.result.usage.completion_tokens = (
                self.llm.usage_numbers()
            )
            self.llm.record_calls(self.result.method)
        return self.result

    def finish(self) -> SearchResult:
        with calls_logged_on_failure(self.llm, self.result.method):
            return self.complete("".join(self.pieces()))


@contextmanager
def calls_logged_on_failure(llm: QueryModel | None, method: str) -> Iterator[None]:
    """If the search fails (the endpoint gone in the middle of a global map, the answer's
    stream cut), the calls it paid for are logged as its own before the error goes on:
    not left to the next search of the reader, nor lost with the process. Offline
    (``llm`` None) there is nothing to log."""
    try:
        yield
    except BaseException:
        if llm is not None:
            llm.record_calls(method)
        raise


def _lines(text: str) -> Iterator[str]:
    yield from re.split(r"(?<=\n)", text)


async def _alines(text: str) -> AsyncIterator[str]:
    for line in _lines(text):
        yield line
