"""Who writes a search's steps and answer: the model, or the extractive writer that quotes
the index. Chosen once per search (``choose_writer``), so that each mode is one algorithm
calling its writer, never a branch on whether a model is there."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import polars as pl

from graphrag_assets.configuration import value_of

if TYPE_CHECKING:
    from .local_mode import LocalContext
    from .reader import IndexReader


class QueryModel(Protocol):
    """What a search needs of the model client (``graphrag_query.llm.QueryLLM``)."""

    @property
    def model(self) -> str: ...

    def ask_many(self, prompt_name: str, response_model: type, values: list[dict]) -> list[Any]: ...

    def stream(self, prompt_name: str, **values) -> Iterator[str]: ...

    def astream(self, prompt_name: str, **values) -> AsyncIterator[str]: ...

    def usage_numbers(self) -> tuple[int, int, int]: ...

    def record_calls(self, method: str) -> None: ...


@dataclass(frozen=True)
class Written:
    """The answer as a writer leaves it: the text (empty when the model still has to
    write it from ``prompt`` with ``values``) and who wrote it."""

    answer: str
    generated_by: str
    prompt: str | None = None
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DriftAnswer:
    """One DRIFT step answered: the answer and the follow-up questions it raises, each a
    ``{"question", "score"}`` dict, best first as the writer ranks them."""

    answer: str
    followups: list[dict]


RateLevel = Callable[[list[dict]], list[int]]


class Writer(Protocol):
    """The steps where the model and the extractive path differ. Each step is given its
    extractive method (``extract``): the extractive writer runs it, the model writer asks
    the step's prompt instead. ``llm`` is the model client whose calls the search logs
    (None for the extractive writer)."""

    llm: QueryModel | None

    def answer(self, prompt: str, values: dict[str, Any], extract: Callable[[], str]) -> Written:
        """The final answer: the model's from ``prompt`` with ``values``."""
        ...

    def report_ratings(self, question: str, extract: Callable[[], RateLevel]) -> RateLevel:
        """Rates a level of community reports 0-5 (global search's dynamic selection)."""
        ...

    def map_points(
        self, question: str, batches: list[tuple[pl.DataFrame, str, int]], extract: Callable[[], list[dict]]
    ) -> list[dict]:
        """Global search's map: points ``{"batch", "community", "score", "description"}``
        scored above 0, from the batches of reports."""
        ...

    def drift_primer(self, question: str, context: str, limit: int, extract: Callable[[], DriftAnswer]) -> DriftAnswer:
        """DRIFT's primer over the best reports: the intermediate answer, its follow-ups."""
        ...

    def drift_steps(
        self,
        original: str,
        asked: list[str],
        contexts: list[LocalContext],
        limit: int,
        extract: Callable[[], list[DriftAnswer]],
    ) -> list[DriftAnswer]:
        """Each follow-up of a DRIFT round answered from its local context."""
        ...


class ExtractiveWriter:
    """No model: every step is its extractive method, the answer quoted from the index."""

    llm = None

    def answer(self, prompt, values, extract):
        return Written(extract(), "extractive")

    def report_ratings(self, question, extract):
        return extract()

    def map_points(self, question, batches, extract):
        return extract()

    def drift_primer(self, question, context, limit, extract):
        return extract()

    def drift_steps(self, original, asked, contexts, limit, extract):
        return extract()


def choose_writer(use_llm: bool | None, reader: IndexReader) -> Writer:
    """None: the model when GRAPHRAG_LLM_MODEL is configured, else extractive; False:
    extractive; True: the model, or an error naming the missing setting. The model's
    calls are logged beside the reader's index."""
    if use_llm is False:
        return ExtractiveWriter()
    if use_llm is None and not value_of("GRAPHRAG_LLM_MODEL"):
        # No model, no LLM (``LLMSettings.enabled``): extractive without importing the
        # settings, whose pydantic import is a large part of a cold query.
        return ExtractiveWriter()
    from graphrag_assets.llm.settings import LLMSettings

    settings = LLMSettings.from_env()
    if settings.enabled:
        from .call_log import QueryCallLog
        from .model_writer import ModelWriter  # imports the HTTP clients only when they will be used

        return ModelWriter.for_settings(settings, QueryCallLog(reader.database, reader.corpus))
    if use_llm:
        raise ValueError(
            "use_llm=True but no LLM is configured: set GRAPHRAG_LLM_MODEL and GRAPHRAG_LLM_BASE_URL or "
            "GRAPHRAG_LLM_API_KEY"
        )
    return ExtractiveWriter()
