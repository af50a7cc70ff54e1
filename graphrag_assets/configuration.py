"""Every setting, declared once: its environment variable, type, default, meaning and what
it affects. ``IndexSettings``, ``LLMSettings``, the query side and the few modules that read
a variable on their own all load it from here (``resolve``, ``value_of``), the stage
fingerprints take the settings each stage reads from here, and the README's settings table
is generated from here (``graphrag-index --show-settings --markdown``; a test compares).

One name per knob: a setting's field, and the argument of every function receiving it (by
keyword), is its variable's name after ``GRAPHRAG_`` (``GRAPHRAG_LLM_`` for the LLM
settings), lower-cased; the core's settings default to the value declared here. What a
value may be (a number's range, a text's choices) is declared here too and checked as the
settings are read or given (``checked``), so a bad one stops a command at start-up, naming
its variable, before it can hang a run or fail a step after its retries.

``stages`` says what a setting affects:
- a stage of ``fingerprints.STAGES``: the setting is part of that stage's fingerprint, so
  changing it redoes the stage for every source, and the stages after it;
- ``query``: read when answering questions;
- ``runtime``: read by the indexer as it runs, without changing what it writes (where files
  are, the endpoint, limits, prices), so changing it redoes nothing.

Imports only the standard library: readers (``graphrag_query``) and ``storage.connection``
read their settings here without loading pydantic or Dagster.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

QUERY = "query"
RUNTIME = "runtime"
DEFAULT = "default"
ENVIRONMENT = "environment"
COMMAND_LINE = "command line"
# Spellings of a boolean accepted in the environment (pydantic's, which LLMSettings read before).
TRUE_WORDS = ("1", "true", "yes", "on", "t", "y")
FALSE_WORDS = ("0", "false", "no", "off", "f", "n")


@dataclass(frozen=True)
class Setting:
    variable: str
    kind: type  # str, int, float or bool: how the environment's text is read
    default: object  # None: unset
    description: str
    stages: tuple[str, ...]
    field: str | None = None  # the attribute it loads into (IndexSettings or LLMSettings)
    secret: bool = False  # never shown (--show-settings prints <redacted>)
    fallback: str | None = None  # a variable read when this one is unset
    # What a value may be, checked wherever one is read or given (``checked``): a numeric
    # setting's least and greatest value, a text setting's choices (none: any text).
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()


# Loaded into IndexSettings (graphrag_assets/settings.py), the indexer's Dagster resource.
INDEX_SETTINGS = (
    Setting(
        "GRAPHRAG_INPUT_DIR",
        str,
        "sample_corpus",
        "input folder, laid out as `<input>/<corpus>/...` (`--input`)",
        (RUNTIME,),
        "input_dir",
    ),
    Setting(
        "GRAPHRAG_DB",
        str,
        "data/graphrag.duckdb",
        (
            "the DuckDB index; queries read its published snapshot (`--db`); with a DuckLake, the name its "
            "published pointer and logs are kept beside"
        ),
        (RUNTIME, QUERY),
        "db",
    ),
    Setting(
        "GRAPHRAG_DUCKLAKE_CATALOG",
        str,
        "",
        (
            "keep the tables in a DuckLake with this catalog instead of the GRAPHRAG_DB file: a DuckDB file path "
            "(one writer process), `sqlite:PATH` or `postgres:CONNINFO` (several); GRAPHRAG_DB then names where "
            "the published pointer, query log and pictures go (needs the `ducklake` extra)"
        ),
        (RUNTIME, QUERY),
        "ducklake_catalog",
    ),
    Setting(
        "GRAPHRAG_DUCKLAKE_DATA_PATH",
        str,
        "",
        "folder or object store URL of the DuckLake's parquet files (unset: `<GRAPHRAG_DB without suffix>.lake/`)",
        (RUNTIME,),
        "ducklake_data_path",
    ),
    Setting(
        "GRAPHRAG_SHARDS",
        int,
        1,
        (
            "processes chunking and extraction of a large build are split into, each a step writing its own rows "
            "(with a DuckLake catalog on SQLite or PostgreSQL; a DuckDB file or catalog has one writer)"
        ),
        (RUNTIME,),
        "shards",
        minimum=1,
        maximum=256,
    ),
    Setting(
        "GRAPHRAG_SHARD_MIN_TOKENS",
        int,
        250_000,
        "the least text worth a shard of its own (estimated as characters / 4): below it a process costs more",
        (RUNTIME,),
        "shard_min_tokens",
        minimum=1,
        maximum=10**12,
    ),
    Setting(
        "GRAPHRAG_VECTORS",
        str,
        "data/lancedb",
        "LanceDB vector tables, a mirror for other tools (`--vectors`)",
        (RUNTIME,),
        "vectors",
    ),
    Setting(
        "GRAPHRAG_CORPUS",
        str,
        "",
        "index the whole input folder as this corpus (`--corpus`; unset: one corpus per folder)",
        (RUNTIME,),
        "corpus",
    ),
    Setting(
        "GRAPHRAG_TEXT_COLUMN", str, "text", "text column of CSV/JSONL/Parquet inputs", ("reading",), "text_column"
    ),
    Setting(
        "GRAPHRAG_TITLE_COLUMN",
        str,
        "title",
        "title column of CSV/JSONL/Parquet inputs (empty: none)",
        ("reading",),
        "title_column",
    ),
    Setting(
        "GRAPHRAG_ID_COLUMN",
        str,
        "id",
        "id column of CSV/JSONL/Parquet inputs (empty: none)",
        ("reading",),
        "id_column",
    ),
    Setting(
        "GRAPHRAG_CHUNK_SIZE",
        int,
        1200,
        "tokens per text unit (cl100k_base, offline)",
        ("chunking",),
        "chunk_size",
        minimum=1,
        maximum=100_000,
    ),
    Setting(
        "GRAPHRAG_CHUNK_OVERLAP",
        int,
        100,
        "tokens shared by consecutive text units",
        ("chunking",),
        "chunk_overlap",
        minimum=0,
        maximum=99_999,
    ),
    Setting(
        "GRAPHRAG_CHUNKING_MODE",
        str,
        "tokens",
        "`tokens`, or `sentences` (whole sentences up to the size)",
        ("chunking",),
        "chunking_mode",
        choices=("tokens", "sentences"),
    ),
    Setting(
        "GRAPHRAG_KEEP_WRAPPING",
        bool,
        False,
        "also index text that is not the document's content: an e-book's distributor header and licence, tables "
        "of contents, illustration markers, end marks, page numbers (unset: left out, listed in `document_wrapping`)",
        ("chunking",),
        "keep_wrapping",
    ),
    # A document of names alone (a list, a dump of identifiers) relates every name of a text
    # unit to every other: a few megabytes made millions of relationships and kept Leiden
    # busy for half an hour. A Christmas Carol adds 27,000 pairs; the default leaves room for
    # a novel about twenty times as long. Offline only: a model chooses its relationships.
    Setting(
        "GRAPHRAG_MAX_DOCUMENT_PAIRS",
        int,
        500_000,
        "co-occurrence pairs of names one document may add to the offline graph (each text unit's names paired): "
        "past it the rest of the document is chunked and searchable but left out of the graph, named in the log "
        "and in `document_wrapping` (kind `graph_limit`)",
        ("extraction",),
        "max_document_pairs",
        minimum=1,
        maximum=10**15,
    ),
    Setting(
        "GRAPHRAG_MIN_NAME_MENTIONS",
        int,
        2,
        "mentions a single-word proper name needs to become an entity",
        ("graph",),
        "min_name_mentions",
        minimum=1,
        maximum=1_000_000,
    ),
    Setting(
        "GRAPHRAG_MIN_CONCEPT_FREQUENCY",
        int,
        3,
        "text units a lower-case noun phrase needs to become an entity",
        ("graph",),
        "min_concept_frequency",
        minimum=1,
        maximum=1_000_000,
    ),
    Setting(
        "GRAPHRAG_MIN_EDGE_WEIGHT_PCT",
        float,
        40.0,
        "relationships below this weight percentile are pruned",
        ("graph",),
        "min_edge_weight_pct",
        minimum=0,
        maximum=99.9,
    ),
    Setting(
        "GRAPHRAG_ENTITY_RESOLUTION",
        bool,
        True,
        "merge names that denote one entity, on evidence (see entity resolution, below)",
        ("graph",),
        "entity_resolution",
    ),
    Setting(
        "GRAPHRAG_MAX_CLUSTER_SIZE",
        int,
        10,
        "hierarchical Leiden: communities larger than this are split",
        ("clustering",),
        "max_cluster_size",
        minimum=2,
        maximum=1_000_000,
    ),
    Setting(
        "GRAPHRAG_LEIDEN_SEED",
        int,
        0xDEADBEEF,
        "Leiden's random seed (0xDEADBEEF; hex is accepted)",
        ("clustering",),
        "leiden_seed",
        minimum=0,
        maximum=2**64 - 1,
    ),
    # Many trials make the partition canonical (the best by modularity whatever the seed), so
    # a small change of the corpus moves only the communities around it.
    Setting(
        "GRAPHRAG_LEIDEN_TRIALS",
        int,
        100,
        "Leiden runs per partition, the best by modularity kept",
        ("clustering",),
        "leiden_trials",
        minimum=1,
        maximum=10_000,
    ),
    Setting(
        "GRAPHRAG_LEIDEN_ITERATIONS",
        int,
        2,
        "refinement cycles per Leiden run",
        ("clustering",),
        "leiden_iterations",
        minimum=1,
        maximum=1_000,
    ),
    Setting(
        "GRAPHRAG_EMBEDDER",
        str,
        "hashed",
        "offline embedder: `hashed`, or `minilm` (needs the `minilm` extra, below)",
        ("embeddings",),
        "embedder",
        choices=("hashed", "minilm"),
    ),
    Setting(
        "GRAPHRAG_EMBEDDING_DIMENSIONS",
        int,
        256,
        "dimensions of the hashed embedder",
        ("embeddings",),
        "embedding_dimensions",
        minimum=1,
        maximum=8192,
    ),
)

# Loaded into LLMSettings (graphrag_assets/llm/settings.py): the LLM path, on when a model and
# a key or base URL are set. Per-stage models fall back to GRAPHRAG_LLM_MODEL when used
# (``LLMSettings.model_for``), not when loaded, so what is shown is what was set.
LLM_SETTINGS = (
    Setting(
        "GRAPHRAG_LLM_BASE_URL",
        str,
        None,
        "OpenAI-compatible endpoint (unset: OPENAI_BASE_URL, else api.openai.com); for Azure OpenAI the resource's "
        "`https://NAME.openai.azure.com`",
        (RUNTIME, QUERY),
        "base_url",
        fallback="OPENAI_BASE_URL",
    ),
    Setting(
        "GRAPHRAG_LLM_API_VERSION",
        str,
        None,
        "Azure OpenAI's `api-version` (unset: OPENAI_API_VERSION); setting it makes the endpoint Azure OpenAI, its "
        "models deployment names and its key sent as `api-key`",
        (RUNTIME, QUERY),
        "api_version",
        fallback="OPENAI_API_VERSION",
    ),
    Setting(
        "GRAPHRAG_LLM_API_KEY",
        str,
        None,
        "the endpoint's API key (unset: OPENAI_API_KEY); local servers need none",
        (RUNTIME, QUERY),
        "api_key",
        secret=True,
        fallback="OPENAI_API_KEY",
    ),
    Setting(
        "GRAPHRAG_LLM_MODEL",
        str,
        None,
        "the chat model; setting it (with a key or base URL) turns the LLM path on",
        ("extraction", "graph", "reports", QUERY),
        "model",
    ),
    Setting(
        "GRAPHRAG_LLM_EXTRACTION_MODEL",
        str,
        None,
        "model for extraction, gleaning and claims (unset: GRAPHRAG_LLM_MODEL)",
        ("extraction",),
        "extraction_model",
    ),
    Setting(
        "GRAPHRAG_LLM_SUMMARY_MODEL",
        str,
        None,
        "model for description summaries and merge confirmations (unset: GRAPHRAG_LLM_MODEL)",
        ("graph",),
        "summary_model",
    ),
    Setting(
        "GRAPHRAG_LLM_REPORT_MODEL",
        str,
        None,
        "model for community reports (unset: GRAPHRAG_LLM_MODEL)",
        ("reports",),
        "report_model",
    ),
    Setting(
        "GRAPHRAG_LLM_QUERY_MODEL", str, None, "model for queries (unset: GRAPHRAG_LLM_MODEL)", (QUERY,), "query_model"
    ),
    Setting(
        "GRAPHRAG_EMBEDDING_MODEL",
        str,
        None,
        "embed through the endpoint with this model (unset: GRAPHRAG_EMBEDDER)",
        ("embeddings", QUERY),
        "embedding_model",
    ),
    Setting(
        "GRAPHRAG_EMBEDDING_BASE_URL",
        str,
        None,
        "endpoint for embeddings (unset: GRAPHRAG_LLM_BASE_URL)",
        (RUNTIME, QUERY),
        "embedding_base_url",
    ),
    Setting(
        "GRAPHRAG_EMBEDDING_API_KEY",
        str,
        None,
        "API key for embeddings (unset: GRAPHRAG_LLM_API_KEY)",
        (RUNTIME, QUERY),
        "embedding_api_key",
        secret=True,
    ),
    Setting(
        "GRAPHRAG_LLM_MODE",
        str,
        "tools",
        "structured output by `tools`, `json_schema` or `json`",
        ("extraction", QUERY),
        "mode",
        choices=("tools", "json_schema", "json"),
    ),
    Setting(
        "GRAPHRAG_LLM_CONCURRENCY",
        int,
        16,
        "completions in flight",
        (RUNTIME, QUERY),
        "concurrency",
        minimum=1,
        maximum=1024,
    ),
    # Endpoints limit embedding models apart from chat models, and an embedding request is
    # short: queued behind the completions it would wait for all of them.
    Setting(
        "GRAPHRAG_EMBEDDING_CONCURRENCY",
        int,
        4,
        "embedding requests in flight, limited apart from completions",
        (RUNTIME, QUERY),
        "embedding_concurrency",
        minimum=1,
        maximum=1024,
    ),
    Setting(
        "GRAPHRAG_LLM_RPM",
        int,
        0,
        "requests per minute (0: unlimited)",
        (RUNTIME, QUERY),
        "rpm",
        minimum=0,
        maximum=10**9,
    ),
    Setting(
        "GRAPHRAG_LLM_TPM",
        int,
        0,
        "tokens per minute (0: unlimited)",
        (RUNTIME, QUERY),
        "tpm",
        minimum=0,
        maximum=10**12,
    ),
    Setting(
        "GRAPHRAG_LLM_MAX_RETRIES",
        int,
        6,
        "transport retries of a call (429, 5xx, timeouts)",
        (RUNTIME, QUERY),
        "max_retries",
        minimum=0,
        maximum=100,
    ),
    Setting(
        "GRAPHRAG_LLM_MAX_REPAIRS",
        int,
        2,
        "re-asks after an answer that is not valid JSON",
        (RUNTIME, QUERY),
        "max_repairs",
        minimum=0,
        maximum=100,
    ),
    Setting(
        "GRAPHRAG_LLM_TIMEOUT",
        float,
        120.0,
        "seconds a call may take",
        (RUNTIME, QUERY),
        "timeout",
        minimum=0.1,
        maximum=86_400,
    ),
    # The completion tokens a call may take, per group of stages (the groups of the per-stage
    # models): without a cap a weak model can run on for thousands of tokens, holding a slot
    # of a local server for minutes. A cut-off structured answer is invalid and re-asked. Not
    # part of the cache key: an answer that fitted is valid whatever the cap.
    Setting(
        "GRAPHRAG_LLM_EXTRACTION_MAX_TOKENS",
        int,
        4096,
        "completion tokens of an extraction, gleaning or claims call",
        (RUNTIME,),
        "extraction_max_tokens",
        minimum=1,
        maximum=1_000_000,
    ),
    Setting(
        "GRAPHRAG_LLM_SUMMARY_MAX_TOKENS",
        int,
        1024,
        "completion tokens of a description summary or merge confirmation call",
        (RUNTIME,),
        "summary_max_tokens",
        minimum=1,
        maximum=1_000_000,
    ),
    Setting(
        "GRAPHRAG_LLM_REPORT_MAX_TOKENS",
        int,
        2048,
        "completion tokens of a community report call",
        (RUNTIME,),
        "report_max_tokens",
        minimum=1,
        maximum=1_000_000,
    ),
    Setting(
        "GRAPHRAG_LLM_QUERY_MAX_TOKENS",
        int,
        2048,
        "completion tokens of a query call (map, rating, answer)",
        (QUERY,),
        "query_max_tokens",
        minimum=1,
        maximum=1_000_000,
    ),
    Setting(
        "GRAPHRAG_GLEANINGS",
        int,
        1,
        "extraction passes that ask only for what was missed",
        ("extraction",),
        "gleanings",
        minimum=0,
        maximum=10,
    ),
    Setting(
        "GRAPHRAG_LLM_CONFIRM_MERGES",
        bool,
        True,
        "with an LLM, the model confirms each merge the resolution rules propose (see entity resolution, below)",
        ("graph",),
        "confirm_merges",
    ),
    Setting(
        "GRAPHRAG_LLM_CLAIMS",
        bool,
        False,
        "also extract claims per text unit into `covariates`: one more call per text unit",
        ("extraction",),
        "claims",
    ),
    Setting(
        "GRAPHRAG_LLM_CLAIM_DESCRIPTION",
        str,
        (
            "facts, allegations, decisions and commitments about an entity that someone searching these documents "
            "would want to find"
        ),
        "which claims matter for the collection",
        ("extraction",),
        "claim_description",
    ),
    Setting(
        "GRAPHRAG_ENTITY_TYPES",
        str,
        "organization,person,geo,event",
        "entity types extraction asks for, comma-separated",
        ("extraction",),
        "entity_types",
    ),
    Setting(
        "GRAPHRAG_REPORT_MAX_INPUT_TOKENS",
        int,
        8000,
        "context tokens of a community report",
        ("reports",),
        "report_max_input_tokens",
        minimum=100,
        maximum=10_000_000,
    ),
    Setting(
        "GRAPHRAG_LLM_TOKEN_BUDGET",
        int,
        0,
        "stop a run cleanly past this many tokens (0: no limit)",
        (RUNTIME,),
        "token_budget",
        minimum=0,
        maximum=10**15,
    ),
    Setting(
        "GRAPHRAG_LLM_PRICE_INPUT",
        float,
        0.0,
        "USD per 1M prompt tokens of a model GRAPHRAG_LLM_PRICES does not list",
        (RUNTIME, QUERY),
        "price_input",
        minimum=0,
        maximum=1_000_000,
    ),
    Setting(
        "GRAPHRAG_LLM_PRICE_OUTPUT",
        float,
        0.0,
        "USD per 1M completion tokens of a model GRAPHRAG_LLM_PRICES does not list",
        (RUNTIME, QUERY),
        "price_output",
        minimum=0,
        maximum=1_000_000,
    ),
)

# Read where they are used, by ``value_of``.
OTHER_SETTINGS = (
    Setting(
        "GRAPHRAG_LLM_PRICES",
        str,
        None,
        "CSV or TOML file of USD prices per model (format: llm/prices.py), read with the LLM settings",
        (RUNTIME, QUERY),
    ),
    Setting(
        "GRAPHRAG_PROMPTS_DIR",
        str,
        None,
        (
            "folder of the prompt files (unset: the package's own, `graphrag_assets/prompts/`, linked as `prompts/`); "
            "a prompt's hash is part of the code version of the stages using it"
        ),
        (RUNTIME, QUERY),
    ),
    Setting(
        "GRAPHRAG_EVAL_QUESTIONS",
        str,
        None,
        (
            "questions each published build of a corpus is evaluated with (`graphrag-eval`'s default too): "
            "`CORPUS=FILE` pairs separated by commas, or one FILE for every corpus; JSONL with `question`, optional "
            "`answers`, `gold_titles`, `gold_ids` (unset: no evaluation)"
        ),
        (RUNTIME, QUERY),
    ),
    Setting(
        "GRAPHRAG_EVAL_MODES",
        str,
        "basic,local,global,drift",
        "query modes the evaluation asks in, comma-separated (`auto` too)",
        (RUNTIME, QUERY),
    ),
    Setting(
        "GRAPHRAG_EVAL_LLM",
        bool,
        False,
        "the evaluation's answers are written by the configured model (unset: extractive, no calls)",
        (RUNTIME, QUERY),
    ),
    Setting(
        "GRAPHRAG_EVAL_MAX_DROP",
        float,
        5.0,
        (
            "percentage points a mode's answer or evidence rate may fall below the previous build's before the "
            "`answers_did_not_regress` check fails"
        ),
        (RUNTIME,),
        minimum=0,
        maximum=100,
    ),
    Setting(
        "GRAPHRAG_EVAL_BLOCKS_PUBLISHING",
        bool,
        False,
        "a build whose answers regressed is not published (readers keep the previous one); unset: a warning",
        (RUNTIME,),
    ),
    Setting(
        "GRAPHRAG_LOCK_WAIT_SECONDS",
        float,
        600.0,
        "seconds a writer waits for a process holding the DuckDB file before its step fails",
        (RUNTIME,),
        minimum=0,
        maximum=86_400,
    ),
)

SETTINGS = INDEX_SETTINGS + LLM_SETTINGS + OTHER_SETTINGS
_BY_VARIABLE = {setting.variable: setting for setting in SETTINGS}


@dataclass(frozen=True)
class Resolved:
    setting: Setting
    value: object
    source: str  # DEFAULT, ENVIRONMENT (naming a fallback variable when it was read) or COMMAND_LINE


def declared(variable: str) -> Setting:
    return _BY_VARIABLE[variable]


def default_of(variable: str) -> Any:  # Any: it initialises fields of every type
    return declared(variable).default


def checked(setting: Setting, value: Any) -> Any:
    """``value`` if the setting admits it (its choices, its range); else a ValueError naming
    the variable. Every way a setting is given comes here: the environment, the command
    line, a resource built in code or Dagster config."""
    if setting.choices and value not in setting.choices:
        raise ValueError(f"{setting.variable}={value!r} is not one of: {', '.join(setting.choices)}")
    # Written so that NaN, which compares false with everything, is refused too.
    if setting.minimum is not None and value is not None and not setting.minimum <= value <= setting.maximum:
        raise ValueError(f"{setting.variable}={value!r} is out of range: {setting.minimum} to {setting.maximum}")
    return value


def check(variable: str, value: Any) -> Any:
    return checked(declared(variable), value)


def check_fields(settings: Iterable[Setting], loaded: object) -> None:
    """Each setting's value on ``loaded`` (an IndexSettings or LLMSettings) as ``checked``."""
    for setting in settings:
        if setting.field:
            checked(setting, getattr(loaded, setting.field))


def parse(setting: Setting, raw: str) -> object:
    """The environment's text as the setting's type; a ValueError names the variable."""
    try:
        if setting.kind is bool:
            if raw.lower() not in TRUE_WORDS + FALSE_WORDS:
                raise ValueError(raw)
            return raw.lower() in TRUE_WORDS
        if setting.kind is int:
            try:
                return int(raw)
            except ValueError:
                return int(raw, 0)  # 0x / 0o / 0b prefixes: a seed is often written in hex
        return setting.kind(raw)
    except ValueError:
        raise ValueError(f"{setting.variable}={raw!r} is not a valid {setting.kind.__name__}") from None


def resolve(
    settings: Iterable[Setting], environ: Mapping[str, str] | None = None, given: Mapping[str, object] | None = None
) -> list[Resolved]:
    """Each setting's value and where it came from: ``given`` (by field; None: not given),
    else its variable (an empty one counts as unset), else its fallback variable, else its
    default."""
    settings = tuple(settings)
    environ = os.environ if environ is None else environ
    given = {field: value for field, value in (given or {}).items() if value is not None}
    unknown = given.keys() - {setting.field for setting in settings}
    if unknown:
        raise TypeError(f"no such setting: {', '.join(sorted(unknown))}")
    return [_resolve_one(setting, environ, given) for setting in settings]


def _resolve_one(setting: Setting, environ: Mapping[str, str], given: Mapping[str, object]) -> Resolved:
    if setting.field in given:
        return Resolved(setting, checked(setting, given[setting.field]), COMMAND_LINE)
    for variable in filter(None, (setting.variable, setting.fallback)):
        raw = environ.get(variable, "")
        if raw:
            source = ENVIRONMENT if variable == setting.variable else f"{ENVIRONMENT} ({variable})"
            return Resolved(setting, checked(setting, parse(setting, raw)), source)
    return Resolved(setting, setting.default, DEFAULT)


def configured_fields(
    settings: Iterable[Setting], environ: Mapping[str, str] | None = None, given: Mapping[str, object] | None = None
) -> dict[str, object]:
    """field -> value of the settings set in the environment or given; the others keep
    their class default (which is the declared one), as Dagster expects of a resource's
    config."""
    return {
        resolved.setting.field: resolved.value
        for resolved in resolve(settings, environ, given)
        if resolved.source != DEFAULT
    }


def value_of(variable: str, environ: Mapping[str, str] | None = None) -> Any:
    return resolve([declared(variable)], environ)[0].value


def settings_of_stage(stage: str, settings: Iterable[Setting]) -> tuple[Setting, ...]:
    return tuple(setting for setting in settings if stage in setting.stages)


def shown_value(value: object) -> str:
    if value is None or value == "":
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def markdown_table() -> str:
    """The README's settings table: every declared setting, its default and what it affects."""
    rows = ["| Setting | Default | Affects | Meaning |", "|---|---|---|---|"]
    for setting in SETTINGS:
        default = shown_value(setting.default)
        default = default if default == "unset" else f"`{default}`"
        rows.append(f"| `{setting.variable}` | {default} | {', '.join(setting.stages)} | {setting.description} |")
    return "\n".join(rows)


def effective_table(resolved: Iterable[Resolved]) -> str:
    """One line per setting: variable, where its value came from, and the value (secrets
    redacted); the value comes last, as some are long."""
    lines = [
        (
            item.setting.variable,
            item.source,
            "<redacted>" if item.setting.secret and item.value else shown_value(item.value),
        )
        for item in resolved
    ]
    variable_width = max(len(variable) for variable, _, _ in lines)
    source_width = max(len(source) for _, source, _ in lines)
    return "\n".join(
        f"{variable:<{variable_width}}  {source:<{source_width}}  {value}" for variable, source, value in lines
    )
