"""Index settings, read from the environment (GRAPHRAG_*) as ``configuration`` declares them.

One object carries every knob and is the Dagster resource the assets receive; the
definitions, the CLI and the tests build it the same way (``IndexSettings.from_env``).
Which settings each stage reads, and so what a changed setting re-runs, is declared in
``configuration`` too, and hashed by ``fingerprints``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from dagster import ConfigurableResource
from pydantic import ValidationError, model_validator

from .configuration import INDEX_SETTINGS, check_fields, configured_fields, default_of
from .core.chunking import ChunkingSettings
from .core.communities import CommunitySettings
from .core.embedding import Embedder, make_embedder
from .core.extraction.offline import ExtractionSettings
from .core.graph import GraphSettings
from .core.inputs import TableColumns, check_corpus_name
from .core.resolution import ResolutionSettings
from .core.shards import CHARACTERS_PER_TOKEN, shard_count
from .storage.duckdb_store import IndexStore
from .storage.location import IndexLocation, index_location
from .storage.vector_store import VectorStore


class IndexSettings(ConfigurableResource):
    """The indexer's settings; each field's variable, default and meaning are declared in
    ``configuration.INDEX_SETTINGS``."""

    input_dir: str = default_of("GRAPHRAG_INPUT_DIR")
    db: str = default_of("GRAPHRAG_DB")
    ducklake_catalog: str = default_of("GRAPHRAG_DUCKLAKE_CATALOG")
    ducklake_data_path: str = default_of("GRAPHRAG_DUCKLAKE_DATA_PATH")
    shards: int = default_of("GRAPHRAG_SHARDS")
    shard_min_tokens: int = default_of("GRAPHRAG_SHARD_MIN_TOKENS")
    vectors: str = default_of("GRAPHRAG_VECTORS")
    corpus: str = default_of("GRAPHRAG_CORPUS")
    text_column: str = default_of("GRAPHRAG_TEXT_COLUMN")
    title_column: str = default_of("GRAPHRAG_TITLE_COLUMN")
    id_column: str = default_of("GRAPHRAG_ID_COLUMN")
    chunk_size: int = default_of("GRAPHRAG_CHUNK_SIZE")
    chunk_overlap: int = default_of("GRAPHRAG_CHUNK_OVERLAP")
    chunking_mode: str = default_of("GRAPHRAG_CHUNKING_MODE")
    keep_wrapping: bool = default_of("GRAPHRAG_KEEP_WRAPPING")
    max_document_pairs: int = default_of("GRAPHRAG_MAX_DOCUMENT_PAIRS")
    min_name_mentions: int = default_of("GRAPHRAG_MIN_NAME_MENTIONS")
    min_concept_frequency: int = default_of("GRAPHRAG_MIN_CONCEPT_FREQUENCY")
    min_edge_weight_pct: float = default_of("GRAPHRAG_MIN_EDGE_WEIGHT_PCT")
    max_cluster_size: int = default_of("GRAPHRAG_MAX_CLUSTER_SIZE")
    leiden_seed: int = default_of("GRAPHRAG_LEIDEN_SEED")
    leiden_trials: int = default_of("GRAPHRAG_LEIDEN_TRIALS")
    leiden_iterations: int = default_of("GRAPHRAG_LEIDEN_ITERATIONS")
    embedder: str = default_of("GRAPHRAG_EMBEDDER")
    embedding_dimensions: int = default_of("GRAPHRAG_EMBEDDING_DIMENSIONS")
    entity_resolution: bool = default_of("GRAPHRAG_ENTITY_RESOLUTION")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides) -> IndexSettings:
        """From the environment, ``overrides`` (by field; None: not given) winning over it."""
        try:
            return cls(**configured_fields(INDEX_SETTINGS, environ, overrides))
        except ValidationError as error:
            # The check's own message, naming the variable, not pydantic's report around it.
            cause = error.errors()[0].get("ctx", {}).get("error")
            raise ValueError(str(cause) if cause else str(error)) from None

    @model_validator(mode="after")
    def check_values(self) -> IndexSettings:
        """However the settings were given (environment, Dagster config, code), a value a
        setting does not admit is refused here, before any step runs, naming its variable."""
        check_fields(INDEX_SETTINGS, self)
        self.chunking()
        if self.corpus:
            check_corpus_name(self.corpus, "GRAPHRAG_CORPUS (--corpus)")
        return self

    def chunking(self) -> ChunkingSettings:
        return ChunkingSettings(
            chunk_size=self.chunk_size,
            chunk_overlap=self.chunk_overlap,
            chunking_mode=self.chunking_mode,
            keep_wrapping=self.keep_wrapping,
        )

    def extraction(self) -> ExtractionSettings:
        """The offline extraction's settings (the model's are LLMSettings)."""
        return ExtractionSettings(max_document_pairs=self.max_document_pairs)

    def table_columns(self) -> TableColumns:
        return TableColumns(
            text_column=self.text_column, title_column=self.title_column or None, id_column=self.id_column or None
        )

    def graph(self) -> GraphSettings:
        return GraphSettings(
            min_name_mentions=self.min_name_mentions,
            min_concept_frequency=self.min_concept_frequency,
            min_edge_weight_pct=self.min_edge_weight_pct,
        )

    def communities(self) -> CommunitySettings:
        return CommunitySettings(
            max_cluster_size=self.max_cluster_size,
            leiden_seed=self.leiden_seed,
            leiden_trials=self.leiden_trials,
            leiden_iterations=self.leiden_iterations,
        )

    def resolution(self) -> ResolutionSettings:
        return ResolutionSettings(entity_resolution=self.entity_resolution)

    def make_embedder(self) -> Embedder:
        return make_embedder(embedder=self.embedder, embedding_dimensions=self.embedding_dimensions)

    def location(self) -> IndexLocation:
        """The DuckDB file GRAPHRAG_DB, or the DuckLake GRAPHRAG_DUCKLAKE_CATALOG names."""
        return index_location(
            db=self.db, ducklake_catalog=self.ducklake_catalog, ducklake_data_path=self.ducklake_data_path
        )

    def environment(self) -> dict[str, str]:
        """These settings as the GRAPHRAG_* variables that load them again (``from_env``): what
        a run's step processes read, when they are processes of their own."""
        values = self.model_dump()
        return {
            setting.variable: str(value).lower() if isinstance(value, bool) else str(value)
            for setting in INDEX_SETTINGS
            if setting.field and (value := values[setting.field]) is not None
        }

    def parallel_shards(self) -> int:
        """Shards that can run at the same time: GRAPHRAG_SHARDS where the index admits several
        writer processes, else 1."""
        return self.shards if self.location().several_writers else 1

    def shards_for(self, pending_characters: int) -> int:
        """How many shards chunking and extraction of this much text are split into."""
        return shard_count(pending_characters, self.parallel_shards(), CHARACTERS_PER_TOKEN * self.shard_min_tokens)

    def store(self, look_only: bool = False) -> IndexStore:
        """The index's store; ``look_only``: for a pass that writes nothing (a dry run), the
        index opened read-only, or an empty one in memory while there is none yet."""
        if not look_only:
            return IndexStore(self.location())
        location = self.location()
        return IndexStore(location, read_only=True) if location.exists() else IndexStore(IndexLocation(":memory:"))

    def vector_store(self) -> VectorStore:
        return VectorStore(self.vectors)

    def forced_corpus(self) -> str | None:
        return self.corpus or None

    def source_path(self, corpus: str, relative_path: str) -> Path:
        """Where the file of a source partition lives under this input dir."""
        root = Path(self.input_dir)
        return (
            root / relative_path
            if self.forced_corpus() or not (root / corpus).is_dir()
            else root / corpus / relative_path
        )
