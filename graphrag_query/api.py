"""The public API: one call per mode, ``search`` that routes, async and streaming forms."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Iterator

from graphrag_assets.configuration import value_of

from .basic_mode import BasicSettings, prepare_basic
from .drift_mode import DriftSettings, prepare_drift
from .global_mode import GlobalSettings, prepare_global
from .local_mode import LocalSettings, Turn, prepare_local
from .reader import IndexReader
from .result import PreparedSearch, SearchResult, calls_logged_on_failure
from .router import route


def _global(question, reader, options, llm, *, community_level, routed, **_) -> PreparedSearch:
    budget = {"reduce_budget": options["budget"]} if "budget" in options else {}
    # Routed (corpus-wide) questions use dynamic community selection.
    settings = GlobalSettings(
        community_level=community_level, dynamic=routed, response_type=options["response_type"], **budget
    )
    return prepare_global(question, reader, settings, llm=llm)


def _local(question, reader, options, llm, *, history, **_) -> PreparedSearch:
    return prepare_local(question, reader, LocalSettings(**options), history, llm=llm)


def _drift(question, reader, options, llm, **_) -> PreparedSearch:
    return prepare_drift(question, reader, DriftSettings(**options), llm=llm)


def _basic(question, reader, options, llm, **_) -> PreparedSearch:
    return prepare_basic(question, reader, BasicSettings(**options), llm=llm)


# The query modes ``search`` (and ``graphrag-query --method``) know, by name: each builds
# its context from the options every mode shares (response_type, budget when given).
METHODS = {"global": _global, "local": _local, "drift": _drift, "basic": _basic}


def _reader(database: str | None, corpus: str, reader: IndexReader | None) -> IndexReader:
    return reader or IndexReader(database, corpus)


def _answer(method: str, use_llm: bool | None, reader: IndexReader, prepare) -> SearchResult:
    """``prepare`` (the context, with ``_llm``'s model or offline), then the answer; the
    calls of a search that fails on the way are logged as its own."""
    llm = _llm(use_llm, reader)
    with calls_logged_on_failure(llm, method):
        prepared = prepare(llm)
    return prepared.finish()


def _llm(use_llm: bool | None, reader: IndexReader):
    """None: the LLM when GRAPHRAG_LLM_MODEL is configured, else offline; False: offline;
    True: the LLM, or an error naming the missing setting. Its calls are logged beside
    the reader's index."""
    if use_llm is False:
        return None
    if use_llm is None and not value_of("GRAPHRAG_LLM_MODEL"):
        # No model, no LLM (``LLMSettings.enabled``): offline without importing the
        # settings, whose pydantic import is a large part of a cold query.
        return None
    from graphrag_assets.llm.settings import LLMSettings

    settings = LLMSettings.from_env()
    if not settings.enabled:
        llm = None
    else:
        from .call_log import QueryCallLog
        from .llm import QueryLLM  # imports the HTTP clients only when they will be used

        llm = QueryLLM(settings, QueryCallLog(reader.database, reader.corpus))
    if llm is None and use_llm:
        raise ValueError(
            "use_llm=True but no LLM is configured: set GRAPHRAG_LLM_MODEL and GRAPHRAG_LLM_BASE_URL or "
            "GRAPHRAG_LLM_API_KEY"
        )
    return llm


def global_search(
    question: str,
    *,
    use_llm: bool | None = None,
    database: str | None = None,
    corpus: str = "default",
    community_level: int = 2,
    dynamic: bool = False,
    map_budget: int = 12_000,
    budget: int = 12_000,
    response_type: str = "multiple paragraphs",
    allow_general_knowledge: bool = False,
    reader: IndexReader | None = None,
) -> SearchResult:
    """``budget``: tokens of the context the answer is written from (the reduce step's
    points and their source text); ``map_budget``: tokens of reports per map batch."""
    settings = GlobalSettings(
        community_level=community_level,
        dynamic=dynamic,
        map_budget=map_budget,
        reduce_budget=budget,
        response_type=response_type,
        allow_general_knowledge=allow_general_knowledge,
    )
    reader = _reader(database, corpus, reader)
    return _answer("global", use_llm, reader, lambda llm: prepare_global(question, reader, settings, llm=llm))


def local_search(
    question: str,
    *,
    use_llm: bool | None = None,
    database: str | None = None,
    corpus: str = "default",
    budget: int = LocalSettings.budget,
    # One set of defaults: LocalSettings's (search() uses them too).
    text_unit_share: float = LocalSettings.text_unit_share,
    community_share: float = LocalSettings.community_share,
    top_k_entities: int = LocalSettings.top_k_entities,
    history: list[Turn] | None = None,
    exclude_entities: list[str] | None = None,
    response_type: str = "multiple paragraphs",
    reader: IndexReader | None = None,
) -> SearchResult:
    settings = LocalSettings(
        top_k_entities=top_k_entities,
        budget=budget,
        text_unit_share=text_unit_share,
        community_share=community_share,
        response_type=response_type,
    )
    reader = _reader(database, corpus, reader)
    return _answer(
        "local",
        use_llm,
        reader,
        lambda llm: prepare_local(question, reader, settings, history, exclude_entities, llm=llm),
    )


def drift_search(
    question: str,
    *,
    use_llm: bool | None = None,
    database: str | None = None,
    corpus: str = "default",
    depth: int = 3,
    followups_per_round: int = 3,
    primer_reports: int = 5,
    budget: int = 8_000,
    response_type: str = "multiple paragraphs",
    reader: IndexReader | None = None,
) -> SearchResult:
    """``budget``: tokens of each follow-up's local context, and of the sources the
    answer is finally written from."""
    settings = DriftSettings(
        primer_reports=primer_reports,
        depth=depth,
        followups_per_round=followups_per_round,
        budget=budget,
        response_type=response_type,
    )
    reader = _reader(database, corpus, reader)
    return _answer("drift", use_llm, reader, lambda llm: prepare_drift(question, reader, settings, llm=llm))


def basic_search(
    question: str,
    *,
    use_llm: bool | None = None,
    database: str | None = None,
    corpus: str = "default",
    k: int | None = None,
    budget: int = 12_000,
    response_type: str = "multiple paragraphs",
    reader: IndexReader | None = None,
) -> SearchResult:
    """``k``: the number of text units to answer from; None, as many as ``budget`` holds."""
    reader = _reader(database, corpus, reader)
    settings = BasicSettings(k=k, budget=budget, response_type=response_type)
    return _answer("basic", use_llm, reader, lambda llm: prepare_basic(question, reader, settings, llm=llm))


def search(
    question: str,
    *,
    method: str = "auto",
    database: str | None = None,
    corpus: str = "default",
    history: list[Turn] | None = None,
    community_level: int = 2,
    budget: int | None = None,
    response_type: str = "multiple paragraphs",
    use_llm: bool | None = None,
    reader: IndexReader | None = None,
) -> SearchResult:
    """Answer with the given method, or route automatically (``method="auto"``): the
    result's ``method`` and ``route_reason`` say which mode ran and why. ``budget``: the
    context tokens of the chosen mode (None: that mode's default)."""
    return _prepare(
        question,
        method=method,
        database=database,
        corpus=corpus,
        history=history,
        community_level=community_level,
        budget=budget,
        response_type=response_type,
        use_llm=use_llm,
        reader=reader,
    ).finish()


def _prepare(
    question: str, *, method, database, corpus, history, community_level, budget, response_type, use_llm, reader
) -> PreparedSearch:
    """``search`` up to its answer: the method routed, the context built (with an LLM, the
    map, rating and DRIFT steps done), the answer still to be written."""
    reader = _reader(database, corpus, reader)
    reason = None
    if method == "auto":
        method, reason = route(question, reader)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)} or 'auto', got {method!r}")
    options = {"response_type": response_type} | ({} if budget is None else {"budget": budget})
    llm = _llm(use_llm, reader)
    with calls_logged_on_failure(llm, method):
        prepared = METHODS[method](
            question,
            reader,
            options,
            llm,
            history=history,
            community_level=community_level,
            routed=reason is not None,
        )
    prepared.result.route_reason = reason
    return prepared


async def asearch(question: str, **options) -> SearchResult:
    """``search`` for async services: runs in a worker thread, never blocks the loop."""
    import asyncio  # here, not at the top: only async callers, whose loop has imported it, pay for it

    return await asyncio.to_thread(search, question, **options)


class SearchStream:
    """``search``, answered piece by piece. Iterate it, with ``for`` or, in async code,
    ``async for``: the method is routed and the context built first (in async code, in a
    worker thread), then the answer arrives as the model writes it, token by token
    (offline: line by line). Once iteration is over, ``result`` holds the whole
    ``SearchResult``, its ``answer`` the pieces joined; it stays None if iteration stops
    early. Options are those of ``search`` and are checked at once; every iteration runs
    the search anew."""

    def __init__(self, question: str, **options):
        arguments = inspect.signature(search).bind(question, **options)
        arguments.apply_defaults()
        self.question = question
        self.options = options
        self.result: SearchResult | None = None
        self._arguments = arguments.arguments

    def __iter__(self) -> Iterator[str]:
        self.result = None
        prepared = _prepare(**self._arguments)
        written = []
        with (
            calls_logged_on_failure(prepared.llm, prepared.result.method),
            contextlib.closing(prepared.pieces()) as pieces,
        ):
            for piece in pieces:
                written.append(piece)
                yield piece
        self.result = prepared.complete("".join(written))

    async def __aiter__(self) -> AsyncIterator[str]:
        import asyncio  # as in ``asearch``

        self.result = None
        prepared = await asyncio.to_thread(_prepare, **self._arguments)
        written = []
        with calls_logged_on_failure(prepared.llm, prepared.result.method):
            async with contextlib.aclosing(prepared.apieces()) as pieces:
                async for piece in pieces:
                    written.append(piece)
                    yield piece
        # In a worker thread: logging the calls may wait briefly for the log file's lock.
        self.result = await asyncio.to_thread(prepared.complete, "".join(written))


def search_stream(question: str, **options) -> SearchStream:
    """The answer of ``search`` piece by piece, as the model writes it: see ``SearchStream``.

    stream = search_stream("What are the main themes?")
    for piece in stream:  # or: async for piece in stream
        print(piece, end="", flush=True)
    stream.result.citations
    """
    return SearchStream(question, **options)
