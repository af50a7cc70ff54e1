"""The LLM client every stage uses: structured completions, streamed plain-text
completions and embeddings through any OpenAI-compatible endpoint.

- The endpoint through the openai SDK, structured answers through instructor (openai_sdk.py).
- Structured outputs by tool calling, JSON schema or plain JSON mode; an answer that does
  not validate is re-asked at most ``max_repairs`` times.
- Plain-text answers streamed piece by piece as the model writes them; a failure before
  the first piece is retried like any call, the text is cached once complete.
- At most ``concurrency`` completions and ``embedding_concurrency`` embedding requests
  in flight, rate limits that wait asynchronously, and
  retries with exponential backoff and jitter on 429, 5xx, timeouts and connection
  errors, honouring Retry-After; never on 400/401/403/404. A 401, 403 or 404 means a
  wrong key, model or address: every other call would fail alike, so it stops the run
  (``EndpointRefused``, errors.py) with the setting to fix instead of being recorded per item.
- Every answer is cached in DuckDB (``llm_cache``, cache.py) under a key of model, messages,
  parameters, schema and prompt version, committed before the caller gets the answer
  (answers that arrive during a commit share the next one): a rerun makes no call for
  anything already answered, even after a crash.
- Every call, answered by the endpoint or by the cache, is recorded (``llm_calls``) with
  its stage, corpus, run, tokens and the price of its model at that moment, in the same
  transaction as its answer; cache hits ride along with the next write.
- Calls, cache hits, tokens and cost are counted per stage (usage.py); an optional token budget
  stops the run cleanly.
- The API key never appears in errors, logs, metadata or cache rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import random
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import numpy as np
from pydantic import BaseModel

from graphrag_common.ids import content_hash
from graphrag_common.tokens import count_tokens, get_encoding

from .cache import CacheRow, CallSite, LLMCache, LLMCall, call_record
from .errors import (
    REFUSED_ALIKE,
    BudgetExhausted,
    EndpointRefused,
    LLMError,
    StatusError,
    cause_of,
    causes,
    describe,
    invalid_request,
    refusal,
    refused_alike,
    transport_error,
)
from .models import schema_of
from .rate_limit import RateLimiter
from .settings import LLMSettings
from .usage import UsageByStage

if TYPE_CHECKING:
    from .openai_sdk import Endpoint

R = TypeVar("R")
T = TypeVar("T", bound=BaseModel)
EMBEDDING_MAX_TOKENS = 8_000  # per input text; longer texts are split and averaged
EMBEDDING_BATCH_TEXTS = 64
EMBEDDING_BATCH_TOKENS = 32_000
COMPLETION_ALLOWANCE = 1_000  # completion tokens assumed for a call when rate limiting by tokens
EMBED_AHEAD_BATCH = 16  # texts per request when embedding ahead piecemeal (one report at a time)


NO_SITE = CallSite()


def run_with(make_client: ClientFactory, work: Callable[[LLMClient], Awaitable[R]]) -> R:
    """``work(client)`` on a new event loop, the client's connections closed before the
    loop ends."""

    async def main() -> R:
        async with make_client() as client:
            return await work(client)

    return asyncio.run(main())


@functools.cache
def _tls_context(https: bool) -> ssl.SSLContext:
    """The TLS settings for the endpoints, built once (loading the trust store is slow, and
    every client, one per step and endpoint, would otherwise load it before its first
    request): the system's trust store, or SSL_CERT_FILE / SSL_CERT_DIR, as httpx2 chooses.
    A plain-HTTP endpoint (a local server) gets a context that trusts nothing: never used
    there, and were it used it would refuse rather than accept an unverified peer."""
    if not https:
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    import httpx2

    return httpx2.create_ssl_context()


class _Request(NamedTuple):
    """One completion: the stage it is counted under, its model and its cache key."""

    stage: str
    model: str
    key: str


class LLMClient:
    def __init__(
        self, settings: LLMSettings, cache: LLMCache, usage: UsageByStage | None = None, site: CallSite = NO_SITE
    ):
        self.settings = settings
        self.cache = cache
        self.usage = usage or UsageByStage()
        self.site = site
        self._secrets = [s.get_secret_value() for s in (settings.api_key, settings.embedding_api_key) if s]
        self._loop = None
        self._stream_usage = True  # ask for usage in streams until the server refuses the option
        self._ahead: list[str] = []  # texts to embed ahead, not sent yet
        self._ahead_requests: list[asyncio.Task] = []
        self._refused: EndpointRefused | None = None  # once refused, every call fails at once
        self._refusals: dict[tuple, int] = {}  # (stage, status, message) -> calls refused so far

    def _bind_loop(self) -> None:
        """HTTP connections, concurrency slots, the limiter and embed-ahead requests belong
        to one event loop; a client used from a new loop (another ``asyncio.run``) gets
        fresh ones."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop = loop
            self._completion_slots = asyncio.Semaphore(self.settings.concurrency)
            self._embedding_slots = asyncio.Semaphore(self.settings.embedding_concurrency)
            self._limiter = RateLimiter(rpm=self.settings.rpm, tpm=self.settings.tpm)
            self._chat_api = None
            self._embeddings = None
            self._ahead, self._ahead_requests = [], []

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc) -> None:
        """Finish embedding ahead, or after a refusal let the requests in flight end; then
        close the HTTP connections on the loop that opened them (left to the garbage
        collector, they are closed after the loop is gone, with a warning)."""
        if exc[0] is None:
            self.embed_ahead([], flush=True)
        elif self._refused is not None:
            await self._requests_in_flight_ended()
        requests, self._ahead_requests = self._ahead_requests, []
        for request in requests:
            if exc[0] is None:
                await request
            else:
                request.cancel()
        apis = (getattr(self, "_chat_api", None), getattr(self, "_embeddings", None))
        for api in {id(api): api for api in apis if api is not None}.values():  # shared: closed once
            await api.close()

    async def _requests_in_flight_ended(self) -> None:
        """Returns once no request is in flight (it holds every slot), or after the request
        timeout. A refusal stops the step at once, but the requests already sent are paid
        for: their answers reach the cache, so the rerun does not pay for them again, where
        the end of the event loop would cancel them. Calls still waiting get a slot only
        to be refused, so nothing new is sent meanwhile."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.settings.timeout):
                for slots, size in (
                    (self._completion_slots, self.settings.concurrency),
                    (self._embedding_slots, self.settings.embedding_concurrency),
                ):
                    for _ in range(size):
                        await slots.acquire()

    # -- plumbing ---------------------------------------------------------------------
    def _redact(self, text: str) -> str:
        # A placeholder such as "ollama" for a local server is no secret, and replacing a
        # short word everywhere would garble the message.
        for secret in self._secrets:
            if len(secret) >= 8:
                text = text.replace(secret, "***")
        return text

    def _endpoint(self, base_url: str | None, key) -> Endpoint:
        # Imported with the first client that sends a request: the job definitions import
        # this module, and an offline pass or a rerun answered by the cache never needs it.
        from .openai_sdk import DEFAULT_BASE_URL, Endpoint

        url = base_url or DEFAULT_BASE_URL
        return Endpoint(
            url,
            key.get_secret_value() if key else None,  # local servers (Ollama, vLLM) need no key
            self.settings.timeout,
            _tls_context(not url.startswith("http://")),
            self.settings.api_version,
        )

    @property
    def chat_api(self) -> Endpoint:
        if self._chat_api is None:
            self._chat_api = self._endpoint(self.settings.base_url, self.settings.api_key)
        return self._chat_api

    @property
    def embeddings_api(self) -> Endpoint:
        if self._embeddings is None:
            base_url = self.settings.embedding_base_url or self.settings.base_url
            key = self.settings.embedding_api_key or self.settings.api_key
            if base_url == self.settings.base_url and key == self.settings.api_key:
                self._embeddings = self.chat_api  # one endpoint, one connection pool
            else:
                self._embeddings = self._endpoint(base_url, key)
        return self._embeddings

    def _check_budget(self) -> None:
        if self.settings.token_budget and self.usage.tokens >= self.settings.token_budget:
            raise BudgetExhausted(
                f"token budget of {self.settings.token_budget} reached (GRAPHRAG_LLM_TOKEN_BUDGET); "
                "finished calls are cached, rerun with a larger budget to continue"
            )

    def _token_estimate(self, messages: list[dict]) -> int:
        """What a call counts against the tokens-per-minute limit. Counted only under such a
        limit: tokenizing a long prompt holds up the event loop."""
        return _prompt_tokens(messages) + COMPLETION_ALLOWANCE if self.settings.tpm else 0

    async def _with_retries(
        self, stage: str, call, estimated_tokens: int, slots: asyncio.Semaphore, *, keep_slot: bool = False
    ):
        """``call()`` within the budget, the rate limits and one of ``slots``, retried on
        transport errors. With ``keep_slot`` a successful call keeps its slot (a stream
        still being read): the caller releases it when it is done."""
        stats = self.usage.stage(stage)
        for attempt in range(self.settings.max_retries + 1):
            self._check_budget()
            await self._limiter.acquire(estimated_tokens)
            try:
                async with contextlib.AsyncExitStack() as slot:
                    await slot.enter_async_context(slots)
                    if self._refused is not None:
                        raise self._refused  # calls that waited for a slot are not sent
                    result = await call()
                    if keep_slot:
                        slot.pop_all()
                    return result
            except EndpointRefused:
                raise
            except Exception as error:  # classified below; anything else is not retried
                refused = refusal(error, stage, self.settings)
                if refused is not None:
                    stats.failed(cause_of(error))
                    self._refused = EndpointRefused(self._redact(str(refused)))
                    raise self._refused from None
                cause = transport_error(error)
                if cause is None or attempt == self.settings.max_retries:
                    stats.failed(self._redact(cause_of(error)))
                    self._stop_if_refused_alike(stage, error)
                    raise LLMError(
                        self._redact(f"{stage} call failed after {attempt + 1} attempt(s): {describe(error)}")
                    ) from None
                stats.retries += 1
                delay = getattr(cause, "retry_after", None)
                if delay is None:
                    delay = min(60.0, 0.5 * 2**attempt) * random.uniform(0.5, 1.5)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    def _stop_if_refused_alike(self, stage: str, error: BaseException) -> None:
        """Stops the run (``EndpointRefused``) once ``REFUSED_ALIKE`` calls of a stage that
        has had no answer yet were refused with one same invalid-request error."""
        refused = next((cause for cause in causes(error) if invalid_request(cause)), None)
        if refused is None or self.usage.stage(stage).calls:
            return
        alike = (stage, refused.status_code, refused.message)
        self._refusals[alike] = self._refusals.get(alike, 0) + 1
        if self._refusals[alike] >= REFUSED_ALIKE:
            self._refused = EndpointRefused(self._redact(str(refused_alike(refused, stage, self.settings))))
            raise self._refused from None

    # -- completions ------------------------------------------------------------------
    def _request(
        self, stage: str, prompt_version: str, messages: list[dict], parameters: dict, schema: dict | None
    ) -> _Request:
        model = self.settings.model_for(stage)
        return _Request(stage, model, completion_key(model, prompt_version, messages, parameters, schema))

    def _call(self, stage: str, model: str, prompt_tokens: int, completion_tokens: int, cached: bool) -> LLMCall:
        """The record of one call at its model's price now, its cost counted in the stage's usage."""
        call = call_record(
            self.site, stage, model, self.settings.price_of(model), prompt_tokens, completion_tokens, cached
        )
        self.usage.stage(stage).cost_usd += call.cost_usd
        return call

    def _cached(self, request: _Request) -> str | None:
        cached = self.cache.get(request.key)
        if cached is not None:
            self.usage.stage(request.stage).cache_hits += 1
            self.cache.note(self._call(request.stage, request.model, 0, 0, cached=True))
        return cached

    async def _record(
        self, request: _Request, value: str | None, prompt_tokens: int, completion_tokens: int, failed: bool = False
    ) -> None:
        """Counts and records a call and its tokens; caches ``value`` unless it is None (a
        stream the reader closed or that broke off: its tokens are paid for all the same).
        A ``failed`` call is counted among the failures already, not among the answered."""
        stats = self.usage.stage(request.stage)
        stats.calls += not failed
        stats.prompt_tokens += prompt_tokens
        stats.completion_tokens += completion_tokens
        rows = (
            []
            if value is None
            else [CacheRow(request.key, request.stage, request.model, value, prompt_tokens, completion_tokens)]
        )
        await self.cache.put(
            rows, [self._call(request.stage, request.model, prompt_tokens, completion_tokens, cached=False)]
        )

    async def structured(self, stage: str, prompt_version: str, messages: list[dict], response_model: type[T]) -> T:
        """A validated ``response_model`` for the messages, from the cache or the model."""
        self._bind_loop()
        request = self._request(
            stage, prompt_version, messages, structured_parameters(self.settings), schema_of(response_model)
        )
        cached = self._cached(request)
        if cached is not None:
            return response_model.model_validate_json(cached)

        from .openai_sdk import structured

        async def call():
            return await structured(
                self.chat_api,
                self.settings.mode,
                request.model,
                messages,
                response_model,
                self.settings.max_repairs,
                self.settings.max_tokens_for(stage),
            )

        result, prompt_tokens, completion_tokens = await self._with_retries(
            stage, call, self._token_estimate(messages), self._completion_slots
        )
        await self._record(request, result.model_dump_json(), prompt_tokens, completion_tokens)
        return result

    async def stream_text(self, stage: str, prompt_version: str, messages: list[dict]) -> AsyncIterator[str]:
        """The model's plain-text answer, piece by piece as it is written.

        Cached like ``structured``: a hit yields the whole text at once, and a text is
        cached only once the stream is complete. A failure before the first piece is
        retried like any call; one after it raises ``LLMError``. The call holds its
        concurrency slot until the stream ends or the iterator is closed; its tokens are
        counted either way, as the server reports them or, where it does not, with the
        local tokenizer."""
        self._bind_loop()
        request = self._request(stage, prompt_version, messages, {"temperature": 0, "format": "text"}, None)
        cached = self._cached(request)
        if cached is not None:
            yield cached
            return
        stream, first = await self._with_retries(
            stage,
            lambda: self._open_stream(request.model, messages, self.settings.max_tokens_for(stage)),
            self._token_estimate(messages),
            self._completion_slots,
            keep_slot=True,
        )
        pieces: list[str] = []
        reported = None
        complete = broken = False
        try:
            async with contextlib.aclosing(_chunks(first, stream)) as chunks:
                async for chunk in chunks:
                    reported = chunk.get("usage") or reported
                    piece = _chunk_text(chunk)
                    if piece:
                        pieces.append(piece)
                        yield piece
            complete = True
        except Exception as error:
            broken = True
            self.usage.stage(stage).failed(self._redact(f"stream broken off: {cause_of(error)}"))
            raise LLMError(
                self._redact(f"{stage} stream broke off after {len(pieces)} piece(s): {describe(error)}")
            ) from None
        finally:
            self._completion_slots.release()
            await stream.close()
            text = "".join(pieces)
            if reported is not None:
                prompt_tokens = reported.get("prompt_tokens") or 0
                completion_tokens = reported.get("completion_tokens") or 0
            else:
                prompt_tokens, completion_tokens = _prompt_tokens(messages), count_tokens(text)
            await self._record(request, text if complete else None, prompt_tokens, completion_tokens, failed=broken)

    async def _open_stream(self, model: str, messages: list[dict], max_tokens: int):
        """A streamed completion, read up to its first text: (stream, chunks read). Errors
        before any text surface here, where they can still be retried."""
        options = {"stream_options": {"include_usage": True}} if self._stream_usage else {}
        body = {"model": model, "messages": messages, "temperature": 0, "max_tokens": max_tokens}
        try:
            stream = await self.chat_api.chat_stream(body | options)
        except StatusError as error:
            if error.status_code != 400 or not options or "stream_options" not in error.message:
                raise
            self._stream_usage = False  # the server refuses the option; tokens are counted here instead
            return await self._open_stream(model, messages, max_tokens)
        first = []
        try:
            while (chunk := await anext(stream, None)) is not None:
                first.append(chunk)
                if _chunk_text(chunk):
                    break
        except BaseException:
            await stream.close()
            raise
        return stream, first

    # -- embeddings -------------------------------------------------------------------
    def embed_ahead(self, texts: list[str], flush: bool = False) -> None:
        """Start embedding texts a later step will embed, while this step's completions
        are in flight; the vectors land in the cache, where the ``embeddings`` asset finds
        them, so its requests do not wait at the end of the graph build. Texts given
        one at a time are sent ``EMBED_AHEAD_BATCH`` per request (``flush`` sends what is
        waiting now; closing the client sends the rest). A failed request is only
        counted: the ``embeddings`` asset makes it again and records it if it fails
        there too."""
        if not self.settings.embeddings_enabled:
            return
        self._bind_loop()
        self._ahead.extend(texts)
        while len(self._ahead) >= EMBED_AHEAD_BATCH or (flush and self._ahead):
            batch = self._ahead if flush else self._ahead[:EMBED_AHEAD_BATCH]
            self._ahead = [] if flush else self._ahead[EMBED_AHEAD_BATCH:]
            self._ahead_requests.append(asyncio.create_task(self._embed_quietly(batch)))

    async def _embed_quietly(self, texts: list[str]) -> None:
        with contextlib.suppress(LLMError):
            await self.embed(texts)

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
        keys = [content_hash(f"embedding|{model}|{piece}") for _, piece, _ in pieces]
        cached = self.cache.get_many(keys)
        for position, key in enumerate(keys):
            if key in cached:
                stats.cache_hits += 1
                vectors[position] = np.asarray(json.loads(cached[key]), dtype=np.float32)
            else:
                missing.append(position)
        if cached:
            # One record for the texts found, not one per text: a call is a request, and
            # these would have been sent as one.
            self.cache.note(self._call("embedding", model, 0, 0, cached=True))
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
                return await self.embeddings_api.embeddings(model, inputs)

            answered, prompt_tokens = await self._with_retries(
                "embedding", call, sum(pieces[p][2] for p in batch), self._embedding_slots
            )
            stats.calls += 1
            stats.prompt_tokens += prompt_tokens
            rows = []
            for position, vector in zip(batch, answered):
                vectors[position] = vector
                rows.append(CacheRow(keys[position], "embedding", model, json.dumps(vector.tolist()), 0, 0))
            await self.cache.put(rows, [self._call("embedding", model, prompt_tokens, 0, cached=False)])

        await asyncio.gather(*(run(b) for b in batches))
        dimensions = len(next(iter(vectors.values()))) if vectors else 0
        result = np.zeros((len(texts), dimensions), dtype=np.float32)
        for position, (index, _, tokens) in enumerate(pieces):
            result[index] += vectors[position] * tokens  # token-weighted average of the pieces
        norms = np.linalg.norm(result, axis=1, keepdims=True)
        return result / np.where(norms == 0, 1, norms)


def completion_key(model: str, prompt_version: str, messages: list[dict], parameters: dict, schema: dict | None) -> str:
    """The cache key of a completion (``llm_cache.key``)."""
    return content_hash(
        json.dumps(
            {
                "model": model,
                "messages": messages,
                "parameters": parameters,
                "schema": schema,
                "prompt": prompt_version,
            },
            sort_keys=True,
            ensure_ascii=False,
        )
    )


def structured_parameters(settings: LLMSettings) -> dict:
    """The parameters of a structured completion that its answer depends on (cache key)."""
    return {"temperature": 0, "mode": settings.mode}


def _prompt_tokens(messages: list[dict]) -> int:
    return sum(count_tokens(m["content"]) for m in messages)


def _chunk_text(chunk: dict) -> str:
    choices = chunk.get("choices") or []
    return ((choices[0].get("delta") or {}).get("content") or "") if choices else ""


async def _chunks(first: list, stream) -> AsyncIterator:
    """The chunks already read, then the rest of the stream."""
    for chunk in first:
        yield chunk
    while (chunk := await anext(stream, None)) is not None:
        yield chunk


# What the LLM stages take: a fresh client per event loop (``run_with`` makes one loop per
# batch of work), sharing the step's cache and usage counters.
ClientFactory = Callable[[], LLMClient]
