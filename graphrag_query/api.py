"""The public API: one call per mode, ``search`` that routes, async and streaming forms."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

from .basic_mode import BasicSettings, run_basic
from .drift_mode import DriftSettings, run_drift
from .global_mode import GlobalSettings, run_global
from .local_mode import LocalSettings, Turn, run_local
from .reader import IndexReader
from .result import SearchResult
from .router import route

METHODS = ("global", "local", "drift", "basic")


def _reader(database: str | None, vectors: str | None, corpus: str, reader: IndexReader | None) -> IndexReader:
    return reader or IndexReader(database, vectors, corpus)


def _llm(use_llm: bool | None):
    """None: the LLM when GRAPHRAG_LLM_MODEL is configured, else offline; False: offline;
    True: the LLM, or an error naming the missing setting."""
    if use_llm is False:
        return None
    from graphrag_assets.llm.settings import LLMSettings

    settings = LLMSettings.from_env()
    if not settings.enabled:
        llm = None
    else:
        from .llm import QueryLLM  # imports the HTTP clients only when they will be used

        llm = QueryLLM(settings)
    if llm is None and use_llm:
        raise ValueError("use_llm=True but no LLM is configured: set GRAPHRAG_LLM_MODEL and GRAPHRAG_LLM_BASE_URL or GRAPHRAG_LLM_API_KEY")
    return llm


def _with_usage(result: SearchResult, llm) -> SearchResult:
    if llm is not None:
        result.usage.llm_calls, result.usage.prompt_tokens, result.usage.completion_tokens = llm.usage_numbers()
    return result


def global_search(
    question: str,
    *,
    use_llm: bool | None = None,
    database: str | None = None,
    vectors: str | None = None,
    corpus: str = "default",
    community_level: int = 2,
    dynamic: bool = False,
    map_budget: int = 12_000,
    reduce_budget: int = 12_000,
    response_type: str = "multiple paragraphs",
    allow_general_knowledge: bool = False,
    reader: IndexReader | None = None,
) -> SearchResult:
    settings = GlobalSettings(
        community_level=community_level, dynamic=dynamic, map_budget=map_budget, reduce_budget=reduce_budget,
        response_type=response_type, allow_general_knowledge=allow_general_knowledge,
    )
    llm = _llm(use_llm)
    return _with_usage(run_global(question, _reader(database, vectors, corpus, reader), settings, llm=llm), llm)


def local_search(
    question: str,
    *,
    use_llm: bool | None = None,
    database: str | None = None,
    vectors: str | None = None,
    corpus: str = "default",
    budget: int = 12_000,
    text_unit_share: float = 0.5,
    community_share: float = 0.15,
    top_k_entities: int = 10,
    history: list[Turn] | None = None,
    exclude_entities: list[str] | None = None,
    response_type: str = "multiple paragraphs",
    reader: IndexReader | None = None,
) -> SearchResult:
    settings = LocalSettings(
        top_k_entities=top_k_entities, budget=budget, text_unit_share=text_unit_share, community_share=community_share, response_type=response_type
    )
    llm = _llm(use_llm)
    return _with_usage(run_local(question, _reader(database, vectors, corpus, reader), settings, history, exclude_entities, llm=llm), llm)


def drift_search(
    question: str,
    *,
    use_llm: bool | None = None,
    database: str | None = None,
    vectors: str | None = None,
    corpus: str = "default",
    depth: int = 3,
    followups_per_round: int = 3,
    primer_reports: int = 5,
    response_type: str = "multiple paragraphs",
    reader: IndexReader | None = None,
) -> SearchResult:
    settings = DriftSettings(primer_reports=primer_reports, depth=depth, followups_per_round=followups_per_round, response_type=response_type)
    llm = _llm(use_llm)
    return _with_usage(run_drift(question, _reader(database, vectors, corpus, reader), settings, llm=llm), llm)


def basic_search(
    question: str,
    *,
    use_llm: bool | None = None,
    database: str | None = None,
    vectors: str | None = None,
    corpus: str = "default",
    k: int = 10,
    budget: int = 12_000,
    response_type: str = "multiple paragraphs",
    reader: IndexReader | None = None,
) -> SearchResult:
    llm = _llm(use_llm)
    return _with_usage(run_basic(question, _reader(database, vectors, corpus, reader), BasicSettings(k=k, budget=budget, response_type=response_type), llm=llm), llm)


def search(
    question: str,
    *,
    method: str = "auto",
    database: str | None = None,
    vectors: str | None = None,
    corpus: str = "default",
    history: list[Turn] | None = None,
    community_level: int = 2,
    response_type: str = "multiple paragraphs",
    use_llm: bool | None = None,
    reader: IndexReader | None = None,
) -> SearchResult:
    """Answer with the given method, or route automatically (``method="auto"``): the
    result's ``method`` and ``route_reason`` say which mode ran and why."""
    reader = _reader(database, vectors, corpus, reader)
    reason = None
    if method == "auto":
        method, reason = route(question, reader)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)} or 'auto', got {method!r}")
    if method == "global":
        dynamic = reason is not None  # routed questions use dynamic selection
        result = global_search(question, reader=reader, community_level=community_level, dynamic=dynamic, response_type=response_type, use_llm=use_llm)
    elif method == "local":
        result = local_search(question, reader=reader, history=history, response_type=response_type, use_llm=use_llm)
    elif method == "drift":
        result = drift_search(question, reader=reader, response_type=response_type, use_llm=use_llm)
    else:
        result = basic_search(question, reader=reader, response_type=response_type, use_llm=use_llm)
    result.route_reason = reason
    return result


async def asearch(question: str, **options) -> SearchResult:
    """``search`` for async services: runs in a worker thread, never blocks the loop."""
    return await asyncio.to_thread(search, question, **options)


class SearchStream:
    """Iterate to receive the answer piece by piece; ``result`` holds the whole result
    once iteration is over."""

    def __init__(self, question: str, **options):
        self.question = question
        self.options = options
        self.result: SearchResult | None = None

    def __iter__(self) -> Iterator[str]:
        self.result = search(self.question, **self.options)
        for piece in re.split(r"(?<=\n)", self.result.answer):
            yield piece


def search_stream(question: str, **options) -> SearchStream:
    return SearchStream(question, **options)
