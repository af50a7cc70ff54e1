"""The OpenAI-compatible HTTP API, spoken directly over one HTTP client (httpx2): chat completions
(whole or streamed as Server-Sent Events), structured answers (tool calling, JSON schema
or JSON mode, with re-asks after invalid output) and embeddings.

Why not the openai SDK and instructor: of the API they cover we use a few fields of two
endpoints, and importing them (hundreds of pydantic models for API types we never send)
took about 1.5 s before a run's first request, and their layers some milliseconds of CPU
per call, on the one core that also runs the event loop and the steps (bench/README.md,
"Fixed costs", third round). What they did for us is here: the requests each structured
mode sends, the parsing of its answer and the re-ask, Server-Sent Events, errors by HTTP
status. Retries, limits and caching are the client's (client.py).
"""

from __future__ import annotations

import base64
import functools
import json
import ssl
from typing import TypeVar

import httpx2  # httpx's maintained fork: its connection pool stays cheap with many requests in flight
import numpy as np
from pydantic import BaseModel, ValidationError

from .errors import EndpointError, InvalidOutput, StatusError, TransportError, first_line
from .models import schema_of

T = TypeVar("T", bound=BaseModel)
DEFAULT_BASE_URL = "https://api.openai.com/v1"


class Endpoint:
    """One OpenAI-compatible base URL and key. ``verify`` is the TLS context for https
    (built once by the caller: loading a trust store is slow)."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float, verify: ssl.SSLContext):
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx2.AsyncClient(
            base_url=base_url.rstrip("/") + "/",
            headers=headers,
            timeout=timeout,
            verify=verify,
            # Concurrency is limited by the caller's slots; the pool must not be a second limit.
            limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100),
        )

    async def close(self) -> None:
        await self._client.aclose()

    async def post(self, path: str, body: dict) -> dict:
        try:
            response = await self._client.post(path, json=body)
        except httpx2.HTTPError as error:
            raise _transport_error(error) from None
        if response.status_code >= 400:
            raise _status_error(response)
        try:
            return response.json()
        except ValueError:
            raise EndpointError(f"the answer to {path} is not JSON: {response.text[:200]!r}") from None

    async def chat_stream(self, body: dict) -> EventStream:
        """A streamed completion, opened: errors before the first event surface here."""
        request = self._client.build_request("POST", "chat/completions", json=body | {"stream": True})
        try:
            response = await self._client.send(request, stream=True)
            if response.status_code >= 400:
                await response.aread()
                await response.aclose()
                raise _status_error(response)
        except httpx2.HTTPError as error:
            raise _transport_error(error) from None
        return EventStream(response)

    async def embeddings(self, model: str, inputs: list[str]) -> tuple[list[np.ndarray], int]:
        """One vector per input, in order, and the prompt tokens billed. Asked for as base64
        (a quarter of the bytes of JSON numbers, and no number parsing); servers that answer
        with lists are read too."""
        answer = await self.post("embeddings", {"model": model, "input": inputs, "encoding_format": "base64"})
        items = sorted(answer.get("data") or [], key=lambda item: item.get("index", 0))
        if len(items) != len(inputs):
            raise EndpointError(f"{len(items)} embeddings for {len(inputs)} inputs")
        vectors = [
            np.frombuffer(base64.b64decode(item["embedding"]), dtype="<f4")
            if isinstance(item["embedding"], str)
            else np.asarray(item["embedding"], dtype=np.float32)
            for item in items
        ]
        return vectors, int((answer.get("usage") or {}).get("prompt_tokens") or 0)


class EventStream:
    """The chunks of a streamed completion as dicts, up to ``data: [DONE]``."""

    def __init__(self, response: httpx2.Response):
        self._response = response
        self._lines = response.aiter_lines()

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> dict:
        try:
            async for line in self._lines:
                if not line.startswith("data:"):
                    continue  # blank separators, comments, event names
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                return json.loads(data)
        except httpx2.HTTPError as error:
            raise _transport_error(error) from None
        raise StopAsyncIteration

    async def close(self) -> None:
        await self._response.aclose()


# -- structured answers -------------------------------------------------------------------
async def structured(
    endpoint: Endpoint, mode: str, model: str, messages: list[dict], response_model: type[T], max_repairs: int
) -> tuple[T, int, int]:
    """A validated ``response_model`` and the prompt and completion tokens of every attempt.
    An answer that does not validate is shown to the model with the error, at most
    ``max_repairs`` times."""
    conversation = list(messages)
    prompt_tokens = completion_tokens = 0
    for attempt in range(max_repairs + 1):
        answer = await endpoint.post("chat/completions", structured_request(mode, model, conversation, response_model))
        usage = answer.get("usage") or {}
        prompt_tokens += usage.get("prompt_tokens") or 0
        completion_tokens += usage.get("completion_tokens") or 0
        message = ((answer.get("choices") or [{}])[0]).get("message") or {}
        try:
            return parse_structured(mode, message, response_model), prompt_tokens, completion_tokens
        except ValueError as error:  # pydantic's ValidationError among them
            problem = error
            if attempt < max_repairs:
                conversation += repair_messages(mode, message, problem)
    raise InvalidOutput(
        f"no valid {response_model.__name__} after {max_repairs + 1} attempt(s): "
        f"{first_line(problem) or type(problem).__name__}"
    )


def structured_request(mode: str, model: str, messages: list[dict], response_model: type[BaseModel]) -> dict:
    """The chat completion request that asks for ``response_model`` in ``mode``."""
    schema = schema_of(response_model)
    name = response_model.__name__
    body = {"model": model, "temperature": 0}
    if mode == "tools":
        function = {"name": name, "description": _description(response_model), "parameters": schema}
        return body | {
            "messages": messages,
            "tools": [{"type": "function", "function": function}],
            "tool_choice": {"type": "function", "function": {"name": name}},
        }
    if mode == "json_schema":
        response_format = {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
        return body | {"messages": messages, "response_format": response_format}
    # JSON mode promises JSON but no shape: the schema goes into the system message.
    instruction = _json_instruction(response_model)
    if messages and messages[0].get("role") == "system":
        messages = [{**messages[0], "content": f"{messages[0]['content']}\n\n{instruction}"}, *messages[1:]]
    else:
        messages = [{"role": "system", "content": instruction}, *messages]
    return body | {"messages": messages, "response_format": {"type": "json_object"}}


def parse_structured(mode: str, message: dict, response_model: type[T]) -> T:
    """The answer of ``message`` as ``response_model``; ``ValueError`` (a pydantic
    ``ValidationError`` among them) when it is not one."""
    if mode == "tools":
        calls = message.get("tool_calls") or []
        if calls:
            return response_model.model_validate_json(calls[0]["function"]["arguments"] or "{}")
        if not (message.get("content") or "").strip():
            raise ValueError("the answer calls no function")
        # Some servers (local ones among them) answer a forced function call in the text.
    return response_model.model_validate_json(_without_fences(message.get("content") or ""))


def repair_messages(mode: str, message: dict, error: Exception) -> list[dict]:
    """What is added to the conversation to re-ask: the model's answer, then the error."""
    request = f"That answer is not valid:\n{_problems(error)}\nAnswer again, correcting these errors."
    calls = message.get("tool_calls") or []
    if mode == "tools" and calls:
        answered = {"role": "assistant", "content": message.get("content"), "tool_calls": calls[:1]}
        return [answered, {"role": "tool", "tool_call_id": calls[0].get("id", ""), "content": request}]
    return [{"role": "assistant", "content": message.get("content") or ""}, {"role": "user", "content": request}]


def _problems(error: Exception) -> str:
    """A validation error as one line per problem, where and what (without pydantic's links)."""
    if isinstance(error, ValidationError):
        return "\n".join(f"{'.'.join(map(str, e['loc'])) or 'the answer'}: {e['msg']}" for e in error.errors())
    return str(error)


@functools.cache
def _json_instruction(response_model: type[BaseModel]) -> str:
    """JSON mode's instruction for a model, written once (the schema serialized)."""
    return (
        "Answer with a single JSON object (an instance, not a schema) that validates against this JSON schema:\n"
        + json.dumps(schema_of(response_model), ensure_ascii=False)
    )


def _description(response_model: type[BaseModel]) -> str:
    doc = " ".join((response_model.__doc__ or "").split())
    return doc or f"Returns a {response_model.__name__}"


def _without_fences(text: str) -> str:
    """JSON a model wrapped in a markdown code block, unwrapped."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped


def _status_error(response: httpx2.Response) -> StatusError:
    try:
        detail = response.json()
        message = (detail.get("error") or {}).get("message") if isinstance(detail, dict) else None
        message = message or json.dumps(detail)[:300]
    except ValueError:
        message = response.text[:300] or response.reason_phrase
    try:
        retry_after = float(response.headers["retry-after"])
    except (KeyError, ValueError):
        retry_after = None
    return StatusError(response.status_code, str(message), retry_after)


def _transport_error(error: httpx2.HTTPError) -> TransportError:
    kind = "timed out" if isinstance(error, httpx2.TimeoutException) else "failed"
    return TransportError(f"request {kind}: {type(error).__name__}: {error}".rstrip(": "))
