"""The query-time LLM: the same OpenAI-compatible client as the indexer (retries, limits,
usage), with an in-memory cache for the calls of one search (a DRIFT tree asks some
questions twice); searches do not share it. Map, rating and DRIFT steps are
structured (JSON); final answers are plain text, streamed as the model writes them.
Every call is recorded in the index's query call log (``call_log.py``).
Imported only when an LLM is configured, so ``import graphrag_query`` stays light."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator
from pathlib import Path
from typing import Annotated, Any

import duckdb
from pydantic import BaseModel, Field

from graphrag_assets.llm.cache import LLMCache
from graphrag_assets.llm.client import LLMClient
from graphrag_assets.llm.models import clamped
from graphrag_assets.llm.prompts import load_prompt
from graphrag_assets.llm.settings import LLMSettings
from graphrag_assets.llm.usage import UsageByStage

from .call_log import QueryCallLog

# The query side's prompts, beside its code (GRAPHRAG_PROMPTS_DIR, when set, holds every prompt).
QUERY_PROMPTS = Path(__file__).resolve().parent / "prompts"


class MapPoint(BaseModel):
    description: str
    score: Annotated[int, clamped(0, 100, whole=True)] = Field(ge=0, le=100)


class MapResult(BaseModel):
    points: list[MapPoint] = Field(default_factory=list)


class Rating(BaseModel):
    rating: Annotated[int, clamped(0, 5, whole=True)] = Field(ge=0, le=5)


class DriftStep(BaseModel):
    answer: str
    follow_up_queries: list[str] = Field(default_factory=list)
    score: Annotated[int, clamped(0, 100, whole=True)] = Field(default=50, ge=0, le=100)


class _LoopThread:
    """One event loop on a daemon thread of its own, for the synchronous API. Called from
    code that is itself inside a running event loop (a Jupyter cell, an async web
    handler), ``asyncio.run`` would refuse; work handed to this loop runs the same
    everywhere, and the caller's own loop is not touched."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def run(cls, work: Coroutine[Any, Any, Any]) -> Any:
        with cls._lock:
            if cls._loop is None:
                cls._loop = asyncio.new_event_loop()
                threading.Thread(target=cls._loop.run_forever, name="graphrag-query-llm", daemon=True).start()
        return asyncio.run_coroutine_threadsafe(work, cls._loop).result()


class QueryLLM:
    def __init__(self, settings: LLMSettings, log: QueryCallLog):
        self.settings = settings
        self.cache = LLMCache(duckdb.connect(":memory:"))
        self.usage = UsageByStage()
        self.log = log

    @property
    def model(self) -> str:
        return self.settings.model_for("query")

    def ask_many(self, prompt_name: str, response_model: type[BaseModel], values: list[dict]) -> list[BaseModel]:
        prompt = load_prompt(prompt_name, QUERY_PROMPTS)

        async def run():
            async with LLMClient(self.settings, self.cache, self.usage) as client:
                return await asyncio.gather(
                    *(
                        client.structured(
                            "query", prompt.version, [{"role": "user", "content": prompt.render(**v)}], response_model
                        )
                        for v in values
                    )
                )

        return list(_LoopThread.run(run()))

    def ask(self, prompt_name: str, response_model: type[BaseModel], **values) -> BaseModel:
        return self.ask_many(prompt_name, response_model, [values])[0]

    async def astream(self, prompt_name: str, **values) -> AsyncIterator[str]:
        """The model's plain-text answer to the prompt, piece by piece as it is written."""
        prompt = load_prompt(prompt_name, QUERY_PROMPTS)
        async with LLMClient(self.settings, self.cache, self.usage) as client:
            async with contextlib.aclosing(
                client.stream_text("query", prompt.version, [{"role": "user", "content": prompt.render(**values)}])
            ) as pieces:
                async for piece in pieces:
                    yield piece

    def stream(self, prompt_name: str, **values) -> Iterator[str]:
        """``astream`` for synchronous callers, on the event loop thread of the module."""
        pieces = self.astream(prompt_name, **values)
        try:
            while (piece := _LoopThread.run(_next(pieces))) is not None:
                yield piece
        finally:
            _LoopThread.run(pieces.aclose())

    def usage_numbers(self) -> tuple[int, int, int]:
        stage = self.usage.stage("query")
        return stage.calls, stage.prompt_tokens, stage.completion_tokens

    def record_calls(self, method: str) -> None:
        """Log the calls made since the last record, as calls of a ``method`` search."""
        self.log.append(self.cache.take_calls(), f"{method}_search")


async def _next(pieces: AsyncIterator[str]) -> str | None:
    return await anext(pieces, None)


class EndpointEmbedder:
    """Embeds questions with the endpoint model the index was built with. Its calls are
    logged as soon as they are made: the embedder serves every search of its reader, and
    knows none of them."""

    def __init__(self, settings: LLMSettings, log: QueryCallLog):
        self.settings = settings
        self.name = settings.embedding_model or ""
        self.cache = LLMCache(duckdb.connect(":memory:"))
        self.log = log

    def embed(self, texts: list[str]):
        async def run():
            async with LLMClient(self.settings, self.cache) as client:
                return await client.embed(texts)

        vectors = _LoopThread.run(run())
        self.log.append(self.cache.take_calls(), "query_embedding")
        return vectors
