"""One OpenAI-compatible endpoint, through the openai SDK (its HTTP client is httpx2) and
instructor for structured answers: chat completions streamed as they are written,
structured answers (tool calling, JSON schema or JSON mode, re-asked with the validation
errors) and embeddings. The SDK's own retries are off: retries, limits and caching are
the client's (client.py). Errors leave here as errors.py's (``StatusError`` by HTTP
status, ``TransportError``, ``InvalidOutput``), which the rest of the package reads
without importing either library.
"""

from __future__ import annotations

import contextlib
import functools
import ssl
from typing import TypeVar

import httpx2
import instructor
import numpy as np
import openai
from instructor.core.exceptions import InstructorRetryException
from openai.types.chat.chat_completion_message_function_tool_call import ChatCompletionMessageFunctionToolCall, Function
from pydantic import BaseModel, Field, create_model

from .errors import InvalidOutput, StatusError, TransportError, causes, first_line

T = TypeVar("T", bound=BaseModel)
DEFAULT_BASE_URL = "https://api.openai.com/v1"
INSTRUCTOR_MODES = {
    "tools": instructor.Mode.TOOLS,
    "json_schema": instructor.Mode.JSON_SCHEMA,
    "json": instructor.Mode.JSON,
}


class Endpoint:
    """One OpenAI-compatible base URL and key, or with ``api_version`` an Azure OpenAI
    resource (the SDK sends the key as ``api-key``, the version as ``api-version`` and the
    model as the deployment). ``verify`` is the TLS context for https (built once by the
    caller: loading a trust store is slow)."""

    def __init__(
        self, base_url: str, api_key: str | None, timeout: float, verify: ssl.SSLContext, api_version: str | None = None
    ):
        options = {
            "api_key": api_key or "not-needed",  # local servers (Ollama, vLLM) need no key; the SDK insists on one
            "max_retries": 0,  # retries are the client's: backoff with jitter, Retry-After, none on 4xx
            "timeout": timeout,
            "http_client": openai.DefaultAsyncHttpxClient(
                verify=verify,
                # Concurrency is limited by the caller's slots; the pool must not be a second limit.
                limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100),
            ),
        }
        if api_version:
            self._client = openai.AsyncAzureOpenAI(azure_endpoint=base_url, api_version=api_version, **options)
        else:
            self._client = openai.AsyncOpenAI(base_url=base_url, **options)
        self._structured: dict[str, instructor.AsyncInstructor] = {}

    async def close(self) -> None:
        await self._client.close()

    def structured_client(self, mode: str) -> instructor.AsyncInstructor:
        """instructor over this endpoint in ``mode``, made once."""
        if mode not in self._structured:
            client = instructor.from_openai(self._client, mode=INSTRUCTOR_MODES[mode])
            client.on("completion:kwargs", _instructions_in_user_turn)
            client.on("completion:response", functools.partial(_answer_as_asked, tools=mode == "tools"))
            self._structured[mode] = client
        return self._structured[mode]

    async def chat_stream(self, body: dict) -> EventStream:
        """A streamed completion, opened: errors before the first chunk surface here."""
        with translated_errors():
            return EventStream(await self._client.chat.completions.create(**body, stream=True))

    async def embeddings(self, model: str, inputs: list[str]) -> tuple[list[np.ndarray], int]:
        """One vector per input, in order, and the prompt tokens billed. An answer of another
        shape (a vector per token, vectors of different lengths) is refused here, before
        anything caches it."""
        with translated_errors():
            answer = await self._client.embeddings.create(model=model, input=inputs)
        items = sorted(answer.data, key=lambda item: item.index)
        if len(items) != len(inputs):
            raise InvalidOutput(f"{len(items)} embeddings for {len(inputs)} inputs")
        vectors = [np.asarray(item.embedding, dtype=np.float32) for item in items]
        check_embeddings(model, vectors)
        usage = answer.usage
        return vectors, (usage.prompt_tokens if usage else 0)


class EventStream:
    """The chunks of a streamed completion, as dicts."""

    def __init__(self, stream: openai.AsyncStream):
        self._stream = stream
        self._chunks = stream.__aiter__()

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> dict:
        with translated_errors():
            return (await self._chunks.__anext__()).model_dump()

    async def close(self) -> None:
        await self._stream.close()


def check_embeddings(model: str, vectors: list[np.ndarray]) -> None:
    """One flat vector per input, all of one length, or ``InvalidOutput`` saying what came."""
    shapes = sorted({vector.shape for vector in vectors})
    if any(len(shape) != 1 for shape in shapes):
        raise InvalidOutput(
            f"embedding model {model!r} answered a {' or '.join('x'.join(map(str, s)) for s in shapes)} array per "
            "input instead of one vector (per-token embeddings: serve the model with pooling, e.g. llama.cpp's "
            "--pooling mean, or set GRAPHRAG_EMBEDDING_MODEL to a sentence-embedding model)"
        )
    if len(shapes) > 1:
        lengths = ", ".join(str(shape[0]) for shape in shapes)
        raise InvalidOutput(f"embedding model {model!r} answered vectors of different lengths ({lengths})")


async def structured(
    endpoint: Endpoint,
    mode: str,
    model: str,
    messages: list[dict],
    response_model: type[T],
    max_repairs: int,
    max_tokens: int,
) -> tuple[T, int, int]:
    """A validated ``response_model`` and the prompt and completion tokens of every attempt.
    An answer that does not validate, one cut off at ``max_tokens`` among them, is shown to
    the model with the error (instructor's re-ask), at most ``max_repairs`` times."""
    try:
        with translated_errors():
            result, completion = await endpoint.structured_client(mode).chat.completions.create_with_completion(
                model=model,
                messages=messages,
                response_model=_instructor_model(response_model),
                max_retries=max_repairs,
                temperature=0,
                max_tokens=max_tokens,
            )
    except InstructorRetryException as error:
        # instructor wraps an API error of an attempt too: that error is what happened.
        cause = next((e for e in causes(error) if isinstance(e, openai.APIError)), None)
        if cause is not None:
            with translated_errors():
                raise cause from None
        problem = error.failed_attempts[-1].exception if error.failed_attempts else error
        raise InvalidOutput(
            f"no valid {response_model.__name__} after {error.n_attempts} attempt(s): "
            f"{first_line(problem) or type(problem).__name__}"
        ) from None
    usage = completion.usage  # instructor sums it over the attempts
    return result, (usage.prompt_tokens if usage else 0), (usage.completion_tokens if usage else 0)


@functools.cache
def _instructor_model(response_model: type[T]) -> type[T]:
    """The model as instructor wraps it, once: given a plain model, instructor builds a new
    wrapper class and its schema on every call, holding up the event loop each time."""
    return instructor.response_schema(answer_required(response_model))


def answer_required(response_model: type[T]) -> type[T]:
    """``response_model`` as it is asked for: a list field the stages default to empty is
    required of the model, so an answer that leaves it out (``{ }``) is invalid and re-asked
    rather than taken for "nothing found", and a server whose grammar follows the schema
    cannot produce it. The response model itself, and so the cache key, is unchanged."""
    defaulted = {
        name: (field.annotation, Field(description=field.description))
        for name, field in response_model.model_fields.items()
        if field.default_factory is list
    }
    if not defaulted:
        return response_model
    return create_model(response_model.__name__, __base__=response_model, __doc__=response_model.__doc__, **defaulted)


def _instructions_in_user_turn(*_, messages: list[dict] | None = None, **__) -> None:
    """The system message a mode adds (JSON mode's schema) joined to the first user turn:
    the chat templates of some models (Gemma's) drop system messages, and the model then
    never sees the schema."""
    if not messages or not any(m.get("role") == "system" for m in messages):
        return
    system = "\n\n".join(str(m["content"]) for m in messages if m.get("role") == "system")
    rest = [m for m in messages if m.get("role") != "system"]
    first_user = next((i for i, m in enumerate(rest) if m.get("role") == "user"), None)
    if first_user is None:
        return
    rest[first_user] = rest[first_user] | {"content": f"{system}\n\n{rest[first_user]['content']}"}
    messages[:] = rest  # the list instructor sends; the caller's own list has no system message


def _answer_as_asked(response, tools: bool) -> None:
    """An answer as the mode expects it, before instructor reads it: JSON a model wrapped in
    a markdown code block, unwrapped; asked for a function call, an answer some servers
    (local ones among them) give in the text instead becomes that call, so that it is
    validated (and re-asked) like any other; and an answer cut off at ``max_tokens`` is
    validated too (instructor would give up on it at once): cut off mid-JSON, it fails
    and is re-asked with the error."""
    for choice in getattr(response, "choices", None) or []:
        if choice.finish_reason == "length":
            choice.finish_reason = "stop"
        message = choice.message
        if not (message.content or "").strip():
            continue
        message.content = _without_fences(message.content)
        if tools and not message.tool_calls:
            message.tool_calls = [
                ChatCompletionMessageFunctionToolCall(
                    id="answer-in-text", type="function", function=Function(name="answer", arguments=message.content)
                )
            ]


def _without_fences(text: str) -> str:
    """JSON a model wrapped in a markdown code block, unwrapped."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped


@contextlib.contextmanager
def translated_errors():
    """The SDK's errors as errors.py's: an HTTP status (with Retry-After), or no answer."""
    try:
        yield
    except openai.APIStatusError as error:
        raise _status_error(error) from None
    except openai.APIConnectionError as error:  # APITimeoutError among them
        kind = "timed out" if isinstance(error, openai.APITimeoutError) else "failed"
        raise TransportError(f"request {kind}: {first_line(error.__cause__ or error)}".rstrip(": ")) from None


def _status_error(error: openai.APIStatusError) -> StatusError:
    body = error.body
    message = (body.get("message") if isinstance(body, dict) else None) or error.message
    try:
        retry_after = float(error.response.headers["retry-after"])
    except (KeyError, ValueError):
        retry_after = None
    return StatusError(error.status_code, str(message)[:300], retry_after)
