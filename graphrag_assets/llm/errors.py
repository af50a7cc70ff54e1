"""What can go wrong with a model call, and key-free descriptions of it: an item's failure
(``LLMError``, recorded and the stage goes on), a refusal of the settings
(``EndpointRefused``, the step stops with the setting to fix) and a spent token budget."""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from .settings import MODEL_OF_STAGE, LLMSettings

# One item's failed call, as every LLM stage returns it: the steps add the scope and the
# time and store it in llm_failures (storage/schema.py), where the next build retries it.
FAILURE_COLUMNS = {"item_id": pl.String, "stage": pl.String, "error": pl.String}


def failure_frame(failures: Iterable[dict]) -> pl.DataFrame:
    """Failures (``item_id``, ``stage``, ``error``) as a frame of ``FAILURE_COLUMNS``."""
    return pl.DataFrame(list(failures), schema=FAILURE_COLUMNS)


# openai is imported where a failure is classified, not here: the job definitions import
# this module, and openai is a heavy import that an offline pass (or the start-up of an LLM
# one) should not pay for. By the time a call has failed, the client has imported it.


def _retryable() -> tuple[type[BaseException], ...]:
    import openai

    return (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError, openai.APITimeoutError)


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
    import openai

    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, openai.APIStatusError) and error.status_code in _REFUSAL_HINTS:
            what, fix = _REFUSAL_HINTS[error.status_code]
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
                f"{stage} call refused (HTTP {error.status_code}): {what}; check {fix.format(**names)}"
            )
        error = error.__cause__ or getattr(error, "last_exception", None)
    return None


class BudgetExhausted(LLMError):
    """The token budget (GRAPHRAG_LLM_TOKEN_BUDGET) is spent: no further calls."""


def describe(error: BaseException) -> str:
    """A short, key-free description: the API error behind an instructor wrapper, or the
    last validation error, cut to a readable length."""
    import openai

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


def transport_error(error: BaseException) -> BaseException | None:
    """The retryable transport error behind ``error`` (instructor may wrap it), if any."""
    retryable = _retryable()
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, retryable):
            return error
        error = error.__cause__
    return None
