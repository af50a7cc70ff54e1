"""What can go wrong with a model call, and key-free descriptions of it: an item's failure
(``LLMError``, recorded and the stage goes on), a refusal of the settings
(``EndpointRefused``, the step stops with the setting to fix) and a spent token budget."""

from __future__ import annotations

import re
from collections.abc import Iterable

import polars as pl

from .settings import MODEL_OF_STAGE, LLMSettings

# One item's failed call, as every LLM stage returns it: the steps add the scope and the
# time and store it in llm_failures (storage/schema.py), where the next build retries it.
FAILURE_COLUMNS = {"item_id": pl.String, "stage": pl.String, "error": pl.String}


def failure_frame(failures: Iterable[dict]) -> pl.DataFrame:
    """Failures (``item_id``, ``stage``, ``error``) as a frame of ``FAILURE_COLUMNS``."""
    return pl.DataFrame(list(failures), schema=FAILURE_COLUMNS)


# What the endpoint's answers can be (openai_sdk.py raises them); here, with no HTTP library
# imported, because the job definitions import this module.
class EndpointError(Exception):
    """A request that got no usable answer."""


class StatusError(EndpointError):
    """The endpoint answered with an HTTP error status."""

    def __init__(self, status_code: int, message: str, retry_after: float | None = None):
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code
        self.message = message
        self.retry_after = retry_after  # seconds, from a Retry-After header


class TransportError(EndpointError):
    """No answer: the connection failed, broke off or timed out."""


class InvalidOutput(EndpointError):
    """The model's output did not validate, after every re-ask allowed."""


def causes(error: BaseException | None):
    """``error`` and the errors it was raised from or while handling, each once."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def first_line(error: BaseException) -> str:
    """The first line of an error's message, cut to a readable length."""
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else ""


# What an endpoint says of a request it will never accept, whatever its status: local
# servers answer an unsupported option with HTTP 500 ("Input should be 'text' or
# 'json_object'") as often as with 400.
_INVALID_REQUEST = re.compile(
    r"invalid|unsupported|not supported|input should be|validation error|unrecognized|"
    r"unknown (?:field|parameter|argument)|extra (?:inputs|fields)|not allowed|not permitted",
    re.IGNORECASE,
)


def invalid_request(error: BaseException) -> bool:
    """An HTTP error whose body says the request is invalid or unsupported: sending it
    again gets the same answer."""
    return isinstance(error, StatusError) and bool(_INVALID_REQUEST.search(error.message))


def retryable(error: BaseException) -> bool:
    """Worth another attempt: a rate limit, a server error (one not refusing the request
    itself) or a transport failure."""
    if isinstance(error, StatusError):
        return error.status_code == 429 or (error.status_code >= 500 and not invalid_request(error))
    return isinstance(error, TransportError)


class LLMError(RuntimeError):
    pass


class EndpointRefused(RuntimeError):
    """The endpoint refused the settings (HTTP 401/403/404). Not an ``LLMError``: no stage
    records it as one item's failure and goes on; the step fails with this message."""


# Which settings an HTTP refusal points at, for completions and for embeddings.
_REFUSAL_HINTS = {
    401: ("the API key was refused", "{key}"),
    403: ("the API key may not use this model or endpoint", "{key} and {model}"),
    404: ("no such model or endpoint", "{model} and {base_url}"),
}


def refusal(error: BaseException, stage: str, settings: LLMSettings) -> EndpointRefused | None:
    for cause in causes(error):
        if isinstance(cause, StatusError) and cause.status_code in _REFUSAL_HINTS:
            what, fix = _REFUSAL_HINTS[cause.status_code]
            if stage == "embedding":
                names = {
                    "key": "GRAPHRAG_EMBEDDING_API_KEY (default GRAPHRAG_LLM_API_KEY)",
                    "model": f"GRAPHRAG_EMBEDDING_MODEL (now {settings.embedding_model!r})",
                    "base_url": "GRAPHRAG_EMBEDDING_BASE_URL "
                    f"(now {settings.embedding_base_url or settings.base_url or 'api.openai.com'!r})",
                }
            else:
                own_model = f"{MODEL_OF_STAGE.get(stage, stage)}_model"
                model_variable = (
                    f"GRAPHRAG_LLM_{own_model.upper()} or GRAPHRAG_LLM_MODEL"
                    if own_model in LLMSettings.model_fields
                    else "GRAPHRAG_LLM_MODEL"
                )
                names = {
                    "key": "GRAPHRAG_LLM_API_KEY (or OPENAI_API_KEY)",
                    "model": f"{model_variable} (now {settings.model_for(stage)!r})",
                    "base_url": f"GRAPHRAG_LLM_BASE_URL (now {settings.base_url or 'api.openai.com'!r})",
                }
            return EndpointRefused(
                f"{stage} call refused (HTTP {cause.status_code}): {what}; check {fix.format(**names)}"
            )
    return None


# Calls of a stage that fail alike, with no call of it answered, before the run stops:
# one such failure may belong to its input, several identical ones are the settings'.
REFUSED_ALIKE = 3
# Words of an endpoint's refusal that point at the structured-output mode.
_MODE_WORDS = re.compile(r"response_format|json_schema|json_object|tool|function", re.IGNORECASE)


def refused_alike(error: StatusError, stage: str, settings: LLMSettings) -> EndpointRefused:
    """The stop of a run whose first calls of ``stage`` the endpoint refused alike
    (``invalid_request``), naming the settings that shape the request."""
    if stage == "embedding":
        fix = f"GRAPHRAG_EMBEDDING_MODEL (now {settings.embedding_model!r})"
    elif _MODE_WORDS.search(error.message):
        fix = f"GRAPHRAG_LLM_MODE (now {settings.mode!r}; tools, json_schema or json: see the README's model section)"
    else:
        fix = (
            f"GRAPHRAG_LLM_MODE (now {settings.mode!r}), the model (now {settings.model_for(stage)!r}) "
            "and the GRAPHRAG_LLM_*_MAX_TOKENS caps"
        )
    return EndpointRefused(
        f"{stage} calls refused alike {REFUSED_ALIKE} times (HTTP {error.status_code}: {error.message}): "
        f"the endpoint does not accept these requests; check {fix}"
    )


class BudgetExhausted(LLMError):
    """The token budget (GRAPHRAG_LLM_TOKEN_BUDGET) is spent: no further calls."""


def describe(error: BaseException) -> str:
    """A short, key-free description: the endpoint's error behind a wrapper, cut to a
    readable length."""
    for current in causes(error):
        if isinstance(current, StatusError):
            return f"HTTP {current.status_code}: {current.message[:300]}"
        if isinstance(current, EndpointError):
            return f"{type(current).__name__}: {str(current)[:300]}"
    return f"{type(error).__name__}: {first_line(error)}".rstrip(": ")


def cause_of(error: BaseException) -> str:
    """What made a call fail, by kind, for the run's summary: "connection refused",
    "timeout", "HTTP <status>: <the endpoint's message>", "invalid output: <problem>", or
    the error's type. Calls failing for one reason share one description."""
    for current in causes(error):
        if isinstance(current, StatusError):
            return f"HTTP {current.status_code}: {current.message[:120]}"
        if isinstance(current, TransportError):
            text = str(current).lower()
            if "timed out" in text or "timeout" in text:
                return "timeout"
            if "refused" in text or "connect" in text:
                return "connection refused"
            return f"connection failed: {first_line(current)[:120]}"
        if isinstance(current, InvalidOutput):
            return f"invalid output: {first_line(current).split(': ', 1)[-1][:120]}"
        if isinstance(current, BudgetExhausted):
            return "token budget reached"
    return type(error).__name__


def transport_error(error: BaseException) -> BaseException | None:
    """The retryable failure behind ``error`` (a rate limit, a server error, no answer), if any."""
    return next((cause for cause in causes(error) if retryable(cause)), None)
