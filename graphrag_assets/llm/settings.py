"""LLM settings from the environment, as ``configuration.LLM_SETTINGS`` declares them. The
API key is a secret: it is never part of a repr, a log line, Dagster metadata, a cache row
or an error message."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, SecretStr, model_validator

from ..configuration import LLM_SETTINGS, check_fields, configured_fields, default_of, value_of
from .prices import PRICES_VARIABLE, ModelPrice, read_price_file

# Stages that share another stage's model setting.
MODEL_OF_STAGE = {"claims": "extraction", "glean": "extraction"}
# Stages that share another stage's completion-token cap (GRAPHRAG_LLM_*_MAX_TOKENS).
MAX_TOKENS_OF_STAGE = MODEL_OF_STAGE | {"confirm_merges": "summary"}


class LLMSettings(BaseModel):
    """Endpoint, models, limits and prices of the LLM path (enabled by a model and a key or
    base URL).

    ``confirm_merges`` (GRAPHRAG_LLM_CONFIRM_MERGES) has the model confirm every merge the
    entity-resolution rules propose (spelling variants, abbreviations, aliases);
    names equal after normalisation merge without asking. It is on by default when an LLM
    is configured: a wrong merge (two members of one family, a person and the firm named
    after them) fuses two entities' descriptions, relationships and communities and no
    later stage undoes it, while the confirmation costs a few batched calls per corpus
    (extraction makes one per text unit), cached like every call. Set it to false to
    apply the rules unconfirmed.

    ``claims`` (GRAPHRAG_LLM_CLAIMS) adds one call per text unit that lists the claims the
    text makes about its entities (subject, object, type, status, period, description,
    quoted source), stored in ``covariates`` and used by LLM community reports and local
    search. Off by default: it costs as many calls as extraction itself.
    ``claim_description`` (GRAPHRAG_LLM_CLAIM_DESCRIPTION) tells the model which claims
    matter for the collection.
    """

    base_url: str | None = default_of("GRAPHRAG_LLM_BASE_URL")
    api_version: str | None = default_of("GRAPHRAG_LLM_API_VERSION")  # set: Azure OpenAI
    api_key: SecretStr | None = default_of("GRAPHRAG_LLM_API_KEY")
    model: str | None = default_of("GRAPHRAG_LLM_MODEL")
    extraction_model: str | None = default_of("GRAPHRAG_LLM_EXTRACTION_MODEL")
    summary_model: str | None = default_of("GRAPHRAG_LLM_SUMMARY_MODEL")
    report_model: str | None = default_of("GRAPHRAG_LLM_REPORT_MODEL")
    query_model: str | None = default_of("GRAPHRAG_LLM_QUERY_MODEL")
    embedding_model: str | None = default_of("GRAPHRAG_EMBEDDING_MODEL")
    embedding_base_url: str | None = default_of("GRAPHRAG_EMBEDDING_BASE_URL")
    embedding_api_key: SecretStr | None = default_of("GRAPHRAG_EMBEDDING_API_KEY")
    mode: str = default_of("GRAPHRAG_LLM_MODE")
    concurrency: int = default_of("GRAPHRAG_LLM_CONCURRENCY")
    embedding_concurrency: int = default_of("GRAPHRAG_EMBEDDING_CONCURRENCY")
    rpm: int = default_of("GRAPHRAG_LLM_RPM")
    tpm: int = default_of("GRAPHRAG_LLM_TPM")
    max_retries: int = default_of("GRAPHRAG_LLM_MAX_RETRIES")
    max_repairs: int = default_of("GRAPHRAG_LLM_MAX_REPAIRS")
    timeout: float = default_of("GRAPHRAG_LLM_TIMEOUT")  # seconds
    extraction_max_tokens: int = default_of("GRAPHRAG_LLM_EXTRACTION_MAX_TOKENS")
    summary_max_tokens: int = default_of("GRAPHRAG_LLM_SUMMARY_MAX_TOKENS")
    report_max_tokens: int = default_of("GRAPHRAG_LLM_REPORT_MAX_TOKENS")
    query_max_tokens: int = default_of("GRAPHRAG_LLM_QUERY_MAX_TOKENS")
    gleanings: int = default_of("GRAPHRAG_GLEANINGS")
    confirm_merges: bool = default_of("GRAPHRAG_LLM_CONFIRM_MERGES")
    claims: bool = default_of("GRAPHRAG_LLM_CLAIMS")
    claim_description: str = default_of("GRAPHRAG_LLM_CLAIM_DESCRIPTION")
    entity_types: str = default_of("GRAPHRAG_ENTITY_TYPES")
    report_max_input_tokens: int = default_of("GRAPHRAG_REPORT_MAX_INPUT_TOKENS")
    token_budget: int = default_of("GRAPHRAG_LLM_TOKEN_BUDGET")
    price_input: float = default_of("GRAPHRAG_LLM_PRICE_INPUT")
    price_output: float = default_of("GRAPHRAG_LLM_PRICE_OUTPUT")
    # From the file GRAPHRAG_LLM_PRICES names (llm/prices.py), read when the settings are,
    # so an edited file prices the calls made after it and no earlier one.
    model_prices: dict[str, ModelPrice] = {}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMSettings:
        values = configured_fields(LLM_SETTINGS, environ)
        prices = value_of(PRICES_VARIABLE, environ)
        if prices:
            values["model_prices"] = read_price_file(prices)
        return cls(**values)

    @model_validator(mode="after")
    def check_values(self) -> LLMSettings:
        """A value a setting does not admit (a concurrency of 0 would wait forever) is refused
        as the settings are made, naming its variable, not inside a step after its retries."""
        check_fields(LLM_SETTINGS, self)
        return self

    @property
    def enabled(self) -> bool:
        """An LLM is configured: a model, and a key or a base URL (local servers need no key)."""
        return bool(self.model and (self.api_key or self.base_url))

    @property
    def embeddings_enabled(self) -> bool:
        return bool(
            self.embedding_model
            and (self.embedding_api_key or self.api_key or self.embedding_base_url or self.base_url)
        )

    def model_for(self, stage: str) -> str:
        stage = MODEL_OF_STAGE.get(stage, stage)
        return getattr(self, f"{stage}_model", None) or self.model or ""

    def max_tokens_for(self, stage: str) -> int:
        """The completion tokens a call of ``stage`` may take; a stage of no group of its
        own has the query calls' cap."""
        return getattr(self, f"{MAX_TOKENS_OF_STAGE.get(stage, stage)}_max_tokens", self.query_max_tokens)

    def price_of(self, model: str) -> ModelPrice:
        """The model's price from GRAPHRAG_LLM_PRICES, else GRAPHRAG_LLM_PRICE_INPUT / _OUTPUT."""
        return self.model_prices.get(
            model, ModelPrice(input_per_million=self.price_input, output_per_million=self.price_output)
        )

    def entity_type_list(self) -> list[str]:
        return [t.strip().upper() for t in self.entity_types.split(",") if t.strip()]
