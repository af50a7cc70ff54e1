"""The query-time LLM: the same OpenAI-compatible client as the indexer (retries, limits,
usage), with an in-memory cache per reader session. Imported only when an LLM is
configured, so ``import graphrag_query`` stays light."""

from __future__ import annotations

import asyncio

import duckdb
from pydantic import BaseModel, Field

from graphrag_assets.llm.client import LLMCache, LLMClient, Usage
from graphrag_assets.llm.prompts import load_prompt
from graphrag_assets.llm.settings import LLMSettings


class MapPoint(BaseModel):
    description: str
    score: int = Field(ge=0, le=100)


class MapResult(BaseModel):
    points: list[MapPoint] = Field(default_factory=list)


class Rating(BaseModel):
    rating: int = Field(ge=0, le=5)


class TextAnswer(BaseModel):
    answer: str


class DriftStep(BaseModel):
    answer: str
    follow_up_queries: list[str] = Field(default_factory=list)
    score: int = Field(default=50, ge=0, le=100)


class QueryLLM:
    def __init__(self, settings: LLMSettings):
        self.settings = settings
        self.cache = LLMCache(duckdb.connect(":memory:"))
        self.usage = Usage()

    @property
    def model(self) -> str:
        return self.settings.model_for("query")

    def ask_many(self, prompt_name: str, response_model: type[BaseModel], values: list[dict]) -> list[BaseModel]:
        prompt = load_prompt(prompt_name)

        async def run():
            client = LLMClient(self.settings, self.cache, self.usage)
            return await asyncio.gather(
                *(client.structured("query", prompt.version, [{"role": "user", "content": prompt.render(**v)}], response_model) for v in values)
            )

        return list(asyncio.run(run()))

    def ask(self, prompt_name: str, response_model: type[BaseModel], **values) -> BaseModel:
        return self.ask_many(prompt_name, response_model, [values])[0]

    def usage_numbers(self) -> tuple[int, int, int]:
        stage = self.usage.stage("query")
        return stage.calls, stage.prompt_tokens, stage.completion_tokens


class EndpointEmbedder:
    """Embeds questions with the endpoint model the index was built with."""

    def __init__(self, settings: LLMSettings):
        self.settings = settings
        self.name = settings.embedding_model or ""
        self.cache = LLMCache(duckdb.connect(":memory:"))

    def embed(self, texts: list[str]):
        async def run():
            return await LLMClient(self.settings, self.cache).embed(texts)

        return asyncio.run(run())
