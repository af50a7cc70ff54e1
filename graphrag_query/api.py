"""The public API: one call per mode, ``search`` that routes, async and streaming forms."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
from collections.abc import AsyncIterator, Iterator

from .global_mode import GlobalSettings
from .local_mode import Turn
from .modes import MODES, Mode, ModeSearch
from .reader import IndexReader
from .result import RESPONSE_TYPE, PreparedSearch, SearchResult, calls_logged_on_failure
from .router import route
from .writer import Writer, choose_writer


def _reader(database: str | None, corpus: str, reader: IndexReader | None) -> IndexReader:
    return reader or IndexReader(database, corpus)


def _prepare_mode(
    definition: ModeSearch, question: str, reader: IndexReader, writer: Writer, options: dict
) -> PreparedSearch:
    """The mode's search prepared with those of ``options`` (named as the API names them:
    ``budget`` for the mode's own budget field) that the mode has; the others keep the
    defaults of its settings."""
    fields = [field.name for field in dataclasses.fields(definition.settings)]
    settings = {name: options[_option(definition, name)] for name in fields if _option(definition, name) in options}
    inputs = {name: options[name] for name in definition.inputs if name in options}
    return definition.prepare(question, reader, definition.settings(**settings), writer, **inputs)


def _option(definition: ModeSearch, field: str) -> str:
    return "budget" if field == definition.budget else field


def _public_search(mode: Mode):
    """``<mode>_search(question, *, use_llm, database, corpus, <its settings>, <its
    inputs>, reader)``: the mode's settings as keyword options, with their defaults."""
    definition = mode.load()
    keyword = inspect.Parameter.KEYWORD_ONLY
    settings = [
        inspect.Parameter(_option(definition, field.name), keyword, default=field.default, annotation=field.type)
        for field in dataclasses.fields(definition.settings)
    ]
    signature = inspect.Signature(
        [
            inspect.Parameter("question", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="str"),
            inspect.Parameter("use_llm", keyword, default=None, annotation="bool | None"),
            inspect.Parameter("database", keyword, default=None, annotation="str | None"),
            inspect.Parameter("corpus", keyword, default="default", annotation="str"),
            *settings,
            *(inspect.Parameter(name, keyword, default=None) for name in definition.inputs),
            inspect.Parameter("reader", keyword, default=None, annotation="IndexReader | None"),
        ],
        return_annotation="SearchResult",
    )

    def mode_search(*args, **kwargs) -> SearchResult:
        options = signature.bind(*args, **kwargs)
        options.apply_defaults()
        given = options.arguments
        reader = _reader(given["database"], given["corpus"], given["reader"])
        writer = choose_writer(given["use_llm"], reader)
        with calls_logged_on_failure(writer.llm, mode.name):
            prepared = _prepare_mode(definition, given["question"], reader, writer, given)
        return prepared.finish()

    mode_search.__name__ = mode_search.__qualname__ = f"{mode.name}_search"
    mode_search.__signature__ = signature  # type: ignore[attr-defined]
    mode_search.__doc__ = (
        f"{mode.name.capitalize()} search: {mode.summary}. The options are the fields of "
        f"``{definition.settings.__name__}`` (``budget``: its ``{definition.budget}``)."
    )
    return mode_search


# ``global_search``, ``local_search``, ...: one per mode of the registry.
PUBLIC_SEARCHES = {f"{name}_search": _public_search(mode) for name, mode in MODES.items()}
globals().update(PUBLIC_SEARCHES)


def search(
    question: str,
    *,
    method: str = "auto",
    database: str | None = None,
    corpus: str = "default",
    history: list[Turn] | None = None,
    community_level: int = GlobalSettings.community_level,
    budget: int | None = None,
    response_type: str = RESPONSE_TYPE,
    use_llm: bool | None = None,
    reader: IndexReader | None = None,
) -> SearchResult:
    """Answer with the given method, or route automatically (``method="auto"``): the
    result's ``method`` and ``route_reason`` say which mode ran and why. ``budget``: the
    context tokens of the chosen mode (None: that mode's default)."""
    return _prepare(**locals()).finish()  # the arguments, as ``SearchStream`` binds them


def _prepare(
    question: str, *, method, database, corpus, history, community_level, budget, response_type, use_llm, reader
) -> PreparedSearch:
    """``search`` up to its answer: the method routed, the context built (with an LLM, the
    map, rating and DRIFT steps done), the answer still to be written."""
    reader = _reader(database, corpus, reader)
    reason = None
    if method == "auto":
        method, reason = route(question, reader)
    if method not in MODES:
        raise ValueError(f"method must be one of {', '.join(MODES)} or 'auto', got {method!r}")
    # The options every mode shares, given to each mode that has them; a routed
    # (corpus-wide) question uses global search's dynamic community selection.
    options = {
        "response_type": response_type,
        "community_level": community_level,
        "dynamic": reason is not None,
        "history": history,
    } | ({} if budget is None else {"budget": budget})
    writer = choose_writer(use_llm, reader)
    with calls_logged_on_failure(writer.llm, method):
        prepared = _prepare_mode(MODES[method].load(), question, reader, writer, options)
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
