"""The LLM client every stage uses: structured completions and embeddings through any
OpenAI-compatible endpoint.

- Structured outputs with instructor (tool calling, JSON schema or plain JSON mode);
  invalid JSON is re-asked at most ``max_repairs`` times.
- At most ``concurrency`` calls in flight, rate limits that wait asynchronously, and
  retries with exponential backoff and jitter on 429, 5xx, timeouts and connection
  errors, honouring Retry-After; never on 400/401/403/404.
- Every answer is cached in DuckDB (``llm_cache``) under a key of model, messages,
  parameters, schema and prompt version, written as soon as the call returns: a rerun
  makes no call for anything already answered, even after a crash.
- Calls, cache hits, tokens and estimated cost are counted per stage; an optional token
  budget stops the run cleanly.
- The API key never appears in errors, logs, metadata or cache rows.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import random
from dataclasses import dataclass, field
from typing import TypeVar

import duckdb
import numpy as np
import openai
from pydantic import BaseModel

from ..core.ids import content_hash
from ..core.tokens import count_tokens, get_encoding
from .rate_limit import RateLimiter
from .settings import LLMSettings

T = TypeVar("T", bound=BaseModel)
RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError, openai.APITimeoutError)
EMBEDDING_MAX_TOKENS = 8_000  # per input text; longer texts are split and averaged
EMBEDDING_BATCH_TEXTS = 64
EMBEDDING_BATCH_TOKENS = 32_000

CACHE_DDL = """
CREATE TABLE IF NOT EXISTS llm_cache (
  key VARCHAR, stage VARCHAR, model VARCHAR, value VARCHAR,
  prompt_tokens BIGINT, completion_tokens BIGINT, created_at TIMESTAMPTZ
)"""


class LLMError(RuntimeError):
    pass


class BudgetExhausted(LLMError):
    pass


@dataclass
class StageUsage:
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Usage:
    stages: dict[str, StageUsage] = field(default_factory=dict)

    def stage(self, name: str) -> StageUsage:
        return self.stages.setdefault(name, StageUsage())

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.stages.values())

    @property
    def tokens(self) -> int:
        return sum(s.prompt_tokens + s.completion_tokens for s in self.stages.values())

    def cost(self, settings: LLMSettings) -> float:
        prompt = sum(s.prompt_tokens for s in self.stages.values())
        completion = sum(s.completion_tokens for s in self.stages.values())
        return round(prompt / 1e6 * settings.price_input_per_million + completion / 1e6 * settings.price_output_per_million, 6)

    def metadata(self, settings: LLMSettings) -> dict:
        return {
            "llm_calls": self.calls,
            "llm_cache_hits": sum(s.cache_hits for s in self.stages.values()),
            "llm_retries": sum(s.retries for s in self.stages.values()),
            "llm_failures": sum(s.failures for s in self.stages.values()),
            "prompt_tokens": sum(s.prompt_tokens for s in self.stages.values()),
            "completion_tokens": sum(s.completion_tokens for s in self.stages.values()),
            "estimated_cost_usd": self.cost(settings),
            "llm_by_stage": {name: vars(stage) for name, stage in self.stages.items()},
        }


class LLMCache:
    def __init__(self, connection: duckdb.DuckDBPyConnection):
        self.connection = connection
        connection.execute(CACHE_DDL)

    def get(self, key: str) -> str | None:
        row = self.connection.execute("SELECT value FROM llm_cache WHERE key = ? LIMIT 1", [key]).fetchone()
        return row[0] if row else None

    def put(self, key: str, stage: str, model: str, value: str, prompt_tokens: int, completion_tokens: int) -> None:
        self.connection.execute(
            "INSERT INTO llm_cache SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM llm_cache WHERE key = ?)",
            [key, stage, model, value, prompt_tokens, completion_tokens, dt.datetime.now(dt.timezone.utc), key],
        )


def _retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    if response is None:
        return None
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class LLMClient:
    def __init__(self, settings: LLMSettings, cache: LLMCache, usage: Usage | None = None):
        self.settings = settings
        self.cache = cache
        self.usage = usage or Usage()
        self._secrets = [s.get_secret_value() for s in (settings.api_key, settings.embedding_api_key) if s]
        self._loop = None

    def _bind_loop(self) -> None:
        """HTTP connections, the semaphore and the limiter belong to one event loop; a client
        used from a new loop (another ``asyncio.run``) gets fresh ones."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop = loop
            self._semaphore = asyncio.Semaphore(self.settings.concurrency)
            self._limiter = RateLimiter(self.settings.requests_per_minute, self.settings.tokens_per_minute)
            self._chat = None
            self._embeddings = None

    # -- plumbing ---------------------------------------------------------------------
    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            if secret:
                text = text.replace(secret, "***")
        return text

    def _openai(self, base_url: str | None, key) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=base_url,
            # Local servers (Ollama, vLLM) need no key; the client insists on one.
            api_key=key.get_secret_value() if key else "not-needed",
            max_retries=0,  # retries are ours: backoff with jitter, Retry-After, no retry on 4xx
            timeout=self.settings.timeout_seconds,
        )

    @property
    def chat(self):
        if self._chat is None:
            import logging

            import instructor

            # instructor logs every failed attempt; our own retry/failure accounting reports them.
            logging.getLogger("instructor").setLevel(logging.CRITICAL)

            mode = {"tools": instructor.Mode.TOOLS, "json_schema": instructor.Mode.JSON_SCHEMA, "json": instructor.Mode.JSON}[self.settings.mode]
            self._chat = instructor.from_openai(self._openai(self.settings.base_url, self.settings.api_key), mode=mode)
        return self._chat

    @property
    def embeddings_api(self) -> openai.AsyncOpenAI:
        if self._embeddings is None:
            self._embeddings = self._openai(
                self.settings.embedding_base_url or self.settings.base_url, self.settings.embedding_api_key or self.settings.api_key
            )
        return self._embeddings

    def _check_budget(self) -> None:
        if self.settings.token_budget and self.usage.tokens >= self.settings.token_budget:
            raise BudgetExhausted(
                f"token budget of {self.settings.token_budget} reached (GRAPHRAG_LLM_TOKEN_BUDGET); "
                "finished calls are cached, rerun with a larger budget to continue"
            )

    async def _with_retries(self, stage: str, call, estimated_tokens: int):
        stats = self.usage.stage(stage)
        for attempt in range(self.settings.max_retries + 1):
            self._check_budget()
            await self._limiter.acquire(estimated_tokens)
            try:
                async with self._semaphore:
                    return await call()
            except Exception as error:  # classified below; anything else is not retried
                cause = _transport_error(error)
                if cause is None or attempt == self.settings.max_retries:
                    stats.failures += 1
                    raise LLMError(self._redact(f"{stage} call failed after {attempt + 1} attempt(s): {_describe(error)}")) from None
                stats.retries += 1
                delay = _retry_after(cause)
                if delay is None:
                    delay = min(60.0, 0.5 * 2**attempt) * random.uniform(0.5, 1.5)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    # -- completions ------------------------------------------------------------------
    async def structured(self, stage: str, prompt_version: str, messages: list[dict], response_model: type[T]) -> T:
        """A validated ``response_model`` for the messages, from the cache or the model."""
        self._bind_loop()
        model = self.settings.model_for(stage)
        parameters = {"temperature": 0, "mode": self.settings.mode}
        key = content_hash(
            json.dumps(
                {"model": model, "messages": messages, "parameters": parameters, "schema": response_model.model_json_schema(), "prompt": prompt_version},
                sort_keys=True,
                ensure_ascii=False,
            )
        )
        stats = self.usage.stage(stage)
        cached = self.cache.get(key)
        if cached is not None:
            stats.cache_hits += 1
            return response_model.model_validate_json(cached)
        estimated = sum(count_tokens(m["content"]) for m in messages) + 1_000

        async def call():
            return await self.chat.chat.completions.create_with_completion(
                model=model, messages=messages, response_model=response_model, max_retries=self.settings.max_repairs, temperature=0
            )

        result, completion = await self._with_retries(stage, call, estimated)
        usage = getattr(completion, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
        completion_tokens = getattr(usage, "completion_tokens", 0) or 0
        stats.calls += 1
        stats.prompt_tokens += prompt_tokens
        stats.completion_tokens += completion_tokens
        self.cache.put(key, stage, model, result.model_dump_json(), prompt_tokens, completion_tokens)
        return result

    # -- embeddings -------------------------------------------------------------------
    async def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors for the texts; batched by count and tokens, long texts split and
        averaged, each vector cached."""
        self._bind_loop()
        model = self.settings.embedding_model or ""
        stats = self.usage.stage("embedding")
        encoding = get_encoding()
        pieces: list[tuple[int, str, int]] = []  # (text index, piece, tokens)
        for index, text in enumerate(texts):
            tokens = encoding.encode(text or " ", disallowed_special=())
            for start in range(0, len(tokens), EMBEDDING_MAX_TOKENS):
                chunk = tokens[start : start + EMBEDDING_MAX_TOKENS]
                pieces.append((index, encoding.decode(chunk), len(chunk)))
        vectors: dict[int, np.ndarray] = {}
        missing = []
        for position, (_, piece, _) in enumerate(pieces):
            cached = self.cache.get(content_hash(f"embedding|{model}|{piece}"))
            if cached is not None:
                stats.cache_hits += 1
                vectors[position] = np.asarray(json.loads(cached), dtype=np.float32)
            else:
                missing.append(position)
        batches, batch, batch_tokens = [], [], 0
        for position in missing:
            tokens = pieces[position][2]
            if batch and (len(batch) >= EMBEDDING_BATCH_TEXTS or batch_tokens + tokens > EMBEDDING_BATCH_TOKENS):
                batches.append(batch)
                batch, batch_tokens = [], 0
            batch.append(position)
            batch_tokens += tokens
        if batch:
            batches.append(batch)

        async def run(batch: list[int]) -> None:
            inputs = [pieces[p][1] for p in batch]

            async def call():
                return await self.embeddings_api.embeddings.create(model=model, input=inputs)

            response = await self._with_retries("embedding", call, sum(pieces[p][2] for p in batch))
            stats.calls += 1
            stats.prompt_tokens += getattr(response.usage, "prompt_tokens", 0) or 0
            for position, item in zip(batch, sorted(response.data, key=lambda d: d.index)):
                vector = np.asarray(item.embedding, dtype=np.float32)
                vectors[position] = vector
                self.cache.put(content_hash(f"embedding|{model}|{pieces[position][1]}"), "embedding", model, json.dumps(vector.tolist()), 0, 0)

        await asyncio.gather(*(run(b) for b in batches))
        dimensions = len(next(iter(vectors.values()))) if vectors else 0
        result = np.zeros((len(texts), dimensions), dtype=np.float32)
        for position, (index, _, tokens) in enumerate(pieces):
            result[index] += vectors[position] * tokens  # token-weighted average of the pieces
        norms = np.linalg.norm(result, axis=1, keepdims=True)
        return result / np.where(norms == 0, 1, norms)


def _describe(error: BaseException) -> str:
    """A short, key-free description: the API error behind an instructor wrapper, or the
    last validation error, cut to a readable length."""
    current, seen = error, set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, openai.APIStatusError):
            return f"{type(current).__name__} (HTTP {current.status_code}): {str(current.message)[:300]}"
        if isinstance(current, openai.APIError):
            return f"{type(current).__name__}: {str(current)[:300]}"
        current = current.__cause__
    last = getattr(error, "last_exception", None) or error
    return f"{type(error).__name__}: {str(last).splitlines()[0][:300]}"


def _transport_error(error: BaseException) -> BaseException | None:
    """The retryable transport error behind ``error`` (instructor may wrap it), if any."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, RETRYABLE):
            return error
        error = error.__cause__
    return None
