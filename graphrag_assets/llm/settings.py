"""LLM settings from the environment. The API key is a secret: it is never part of a
repr, a log line, Dagster metadata, a cache row or an error message."""

from __future__ import annotations

import os

from pydantic import BaseModel, SecretStr

from .prices import PRICES_VARIABLE, ModelPrice, read_price_file

MODES = ("tools", "json_schema", "json")
DEFAULT_CLAIM_DESCRIPTION = "facts, allegations, decisions and commitments about an entity that someone searching these documents would want to find"
# Stages that share another stage's model setting.
MODEL_OF_STAGE = {"claims": "extraction", "glean": "extraction"}


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

    base_url: str | None = None  # GRAPHRAG_LLM_BASE_URL (None: api.openai.com)
    api_key: SecretStr | None = None  # GRAPHRAG_LLM_API_KEY, else OPENAI_API_KEY
    model: str | None = None  # GRAPHRAG_LLM_MODEL
    extraction_model: str | None = None  # GRAPHRAG_LLM_EXTRACTION_MODEL (default: model)
    summary_model: str | None = None  # GRAPHRAG_LLM_SUMMARY_MODEL (default: model)
    report_model: str | None = None  # GRAPHRAG_LLM_REPORT_MODEL (default: model)
    query_model: str | None = None  # GRAPHRAG_LLM_QUERY_MODEL (default: model)
    embedding_model: str | None = None  # GRAPHRAG_EMBEDDING_MODEL
    embedding_base_url: str | None = None  # GRAPHRAG_EMBEDDING_BASE_URL (default: base_url)
    embedding_api_key: SecretStr | None = None  # GRAPHRAG_EMBEDDING_API_KEY (default: api_key)
    mode: str = "tools"  # GRAPHRAG_LLM_MODE: tools | json_schema | json
    concurrency: int = 16  # GRAPHRAG_LLM_CONCURRENCY: completions in flight
    # Endpoints limit embedding models apart from chat models, and an embedding request is
    # short: queued behind the completions it would wait for all of them.
    embedding_concurrency: int = 4  # GRAPHRAG_EMBEDDING_CONCURRENCY: embedding requests in flight
    requests_per_minute: int = 0  # GRAPHRAG_LLM_RPM (0: unlimited)
    tokens_per_minute: int = 0  # GRAPHRAG_LLM_TPM (0: unlimited)
    max_retries: int = 6  # GRAPHRAG_LLM_MAX_RETRIES: transport retries (429/5xx/timeouts)
    max_repairs: int = 2  # GRAPHRAG_LLM_MAX_REPAIRS: re-asks after invalid JSON
    timeout_seconds: float = 120.0  # GRAPHRAG_LLM_TIMEOUT
    gleanings: int = 1  # GRAPHRAG_GLEANINGS
    confirm_merges: bool = True  # GRAPHRAG_LLM_CONFIRM_MERGES: the model confirms resolution merges (see above)
    claims: bool = False  # GRAPHRAG_LLM_CLAIMS: extract claims per text unit (see above)
    claim_description: str = DEFAULT_CLAIM_DESCRIPTION  # GRAPHRAG_LLM_CLAIM_DESCRIPTION
    entity_types: str = "organization,person,geo,event"  # GRAPHRAG_ENTITY_TYPES
    report_budget: int = 8_000  # GRAPHRAG_REPORT_MAX_INPUT_TOKENS
    token_budget: int = 0  # GRAPHRAG_LLM_TOKEN_BUDGET: stop a run cleanly past this many tokens (0: none)
    price_input_per_million: float = 0.0  # GRAPHRAG_LLM_PRICE_INPUT (USD per 1M prompt tokens)
    price_output_per_million: float = 0.0  # GRAPHRAG_LLM_PRICE_OUTPUT
    # GRAPHRAG_LLM_PRICES: a CSV or TOML file of prices per model (llm/prices.py), read when
    # the settings are, so an edited file prices the calls made after it and no earlier one.
    model_prices: dict[str, ModelPrice] = {}

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "LLMSettings":
        environ = os.environ if environ is None else environ
        names = {
            "base_url": "GRAPHRAG_LLM_BASE_URL",
            "api_key": "GRAPHRAG_LLM_API_KEY",
            "model": "GRAPHRAG_LLM_MODEL",
            "extraction_model": "GRAPHRAG_LLM_EXTRACTION_MODEL",
            "summary_model": "GRAPHRAG_LLM_SUMMARY_MODEL",
            "report_model": "GRAPHRAG_LLM_REPORT_MODEL",
            "query_model": "GRAPHRAG_LLM_QUERY_MODEL",
            "embedding_model": "GRAPHRAG_EMBEDDING_MODEL",
            "embedding_base_url": "GRAPHRAG_EMBEDDING_BASE_URL",
            "embedding_api_key": "GRAPHRAG_EMBEDDING_API_KEY",
            "mode": "GRAPHRAG_LLM_MODE",
            "concurrency": "GRAPHRAG_LLM_CONCURRENCY",
            "embedding_concurrency": "GRAPHRAG_EMBEDDING_CONCURRENCY",
            "requests_per_minute": "GRAPHRAG_LLM_RPM",
            "tokens_per_minute": "GRAPHRAG_LLM_TPM",
            "max_retries": "GRAPHRAG_LLM_MAX_RETRIES",
            "max_repairs": "GRAPHRAG_LLM_MAX_REPAIRS",
            "timeout_seconds": "GRAPHRAG_LLM_TIMEOUT",
            "gleanings": "GRAPHRAG_GLEANINGS",
            "confirm_merges": "GRAPHRAG_LLM_CONFIRM_MERGES",
            "claims": "GRAPHRAG_LLM_CLAIMS",
            "claim_description": "GRAPHRAG_LLM_CLAIM_DESCRIPTION",
            "entity_types": "GRAPHRAG_ENTITY_TYPES",
            "report_budget": "GRAPHRAG_REPORT_MAX_INPUT_TOKENS",
            "token_budget": "GRAPHRAG_LLM_TOKEN_BUDGET",
            "price_input_per_million": "GRAPHRAG_LLM_PRICE_INPUT",
            "price_output_per_million": "GRAPHRAG_LLM_PRICE_OUTPUT",
        }
        values = {field: environ[variable] for field, variable in names.items() if environ.get(variable)}
        if "api_key" not in values and environ.get("OPENAI_API_KEY"):
            values["api_key"] = environ["OPENAI_API_KEY"]
        if environ.get(PRICES_VARIABLE):
            values["model_prices"] = read_price_file(environ[PRICES_VARIABLE])
        try:
            settings = cls(**values)
        except Exception as error:  # pydantic's message names the field, never the key value
            raise ValueError(f"invalid LLM setting: {error.errors()[0]['loc'][0]} ({error.errors()[0]['msg']})") from None
        if settings.mode not in MODES:
            raise ValueError(f"GRAPHRAG_LLM_MODE must be one of {', '.join(MODES)}, got {settings.mode!r}")
        return settings

    @property
    def enabled(self) -> bool:
        """An LLM is configured: a model, and a key or a base URL (local servers need no key)."""
        return bool(self.model and (self.api_key or self.base_url))

    @property
    def embeddings_enabled(self) -> bool:
        return bool(self.embedding_model and (self.embedding_api_key or self.api_key or self.embedding_base_url or self.base_url))

    def model_for(self, stage: str) -> str:
        stage = MODEL_OF_STAGE.get(stage, stage)
        return getattr(self, f"{stage}_model", None) or self.model or ""

    def price_of(self, model: str) -> ModelPrice:
        """The model's price from GRAPHRAG_LLM_PRICES, else GRAPHRAG_LLM_PRICE_INPUT / _OUTPUT."""
        return self.model_prices.get(model, ModelPrice(self.price_input_per_million, self.price_output_per_million))

    def entity_type_list(self) -> list[str]:
        return [t.strip().upper() for t in self.entity_types.split(",") if t.strip()]

    def public(self) -> dict:
        """What may be shown (metadata, logs): everything but secrets."""
        return self.model_dump(exclude={"api_key", "embedding_api_key"})
