"""Index settings, read from the environment (GRAPHRAG_*) with documented defaults.

One object carries every knob and is the Dagster resource the assets receive; the
definitions, the CLI and the tests build it the same way (``IndexSettings.from_env``).
Which settings each stage reads, and so what a changed setting re-runs, is declared in
``fingerprints``.
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import ConfigurableResource

from .core.chunking import ChunkingSettings
from .core.communities import CommunitySettings
from .core.embedding import Embedder, make_embedder
from .core.graph import GraphSettings
from .core.inputs import TableColumns, check_corpus_name
from .core.resolution import ResolutionSettings
from .storage.duckdb_store import IndexStore
from .storage.vector_store import VectorStore


class IndexSettings(ConfigurableResource):
    input_dir: str = "sample_corpus"  # GRAPHRAG_INPUT_DIR: <input dir>/<corpus>/...
    database: str = "data/graphrag.duckdb"  # GRAPHRAG_DB
    vectors: str = "data/lancedb"  # GRAPHRAG_VECTORS
    corpus: str = ""  # GRAPHRAG_CORPUS: index the whole input dir as this one corpus
    text_column: str = "text"  # GRAPHRAG_TEXT_COLUMN (CSV/JSONL/Parquet)
    title_column: str = "title"  # GRAPHRAG_TITLE_COLUMN
    id_column: str = "id"  # GRAPHRAG_ID_COLUMN
    chunk_size: int = 1200  # GRAPHRAG_CHUNK_SIZE (tokens, cl100k_base)
    chunk_overlap: int = 100  # GRAPHRAG_CHUNK_OVERLAP
    chunking_mode: str = "tokens"  # GRAPHRAG_CHUNKING_MODE: tokens | sentences
    min_name_mentions: int = 2  # GRAPHRAG_MIN_NAME_MENTIONS
    min_concept_frequency: int = 3  # GRAPHRAG_MIN_CONCEPT_FREQUENCY
    min_edge_weight_pct: float = 40.0  # GRAPHRAG_MIN_EDGE_WEIGHT_PCT
    max_cluster_size: int = 10  # GRAPHRAG_MAX_CLUSTER_SIZE
    leiden_seed: int = 0xDEADBEEF  # GRAPHRAG_LEIDEN_SEED
    leiden_trials: int = 100  # GRAPHRAG_LEIDEN_TRIALS: runs per partition, best kept (stability)
    leiden_iterations: int = 2  # GRAPHRAG_LEIDEN_ITERATIONS
    embedder: str = "hashed"  # GRAPHRAG_EMBEDDER: hashed | minilm
    embedding_dimensions: int = 256  # GRAPHRAG_EMBEDDING_DIMENSIONS (hashed only)
    entity_resolution: bool = True  # GRAPHRAG_ENTITY_RESOLUTION: merge names that denote one entity, on evidence

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides) -> "IndexSettings":
        environ = os.environ if environ is None else environ
        names = {
            "input_dir": "GRAPHRAG_INPUT_DIR",
            "database": "GRAPHRAG_DB",
            "vectors": "GRAPHRAG_VECTORS",
        }
        values = {}
        for name, field in cls.model_fields.items():
            variable = names.get(name, f"GRAPHRAG_{name.upper()}")
            raw = environ.get(variable, "")
            if raw == "":
                continue
            kind = field.annotation
            try:
                if kind is bool:
                    if raw.lower() not in ("1", "true", "yes", "0", "false", "no"):
                        raise ValueError(raw)
                    values[name] = raw.lower() in ("1", "true", "yes")
                else:
                    values[name] = int(raw, 0) if kind is int else float(raw) if kind is float else raw
            except ValueError:
                raise ValueError(f"{variable}={raw!r} is not a valid {kind.__name__}") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        settings.validate()
        return settings

    def validate(self) -> None:
        self.chunking()
        self.graph()
        self.communities()
        if self.embedder not in ("hashed", "minilm"):
            raise ValueError(f"GRAPHRAG_EMBEDDER must be 'hashed' or 'minilm', got {self.embedder!r}")
        if self.corpus:
            check_corpus_name(self.corpus, "GRAPHRAG_CORPUS (--corpus)")

    def chunking(self) -> ChunkingSettings:
        return ChunkingSettings(self.chunk_size, self.chunk_overlap, self.chunking_mode)  # type: ignore[arg-type]

    def table_columns(self) -> TableColumns:
        return TableColumns(self.text_column, self.title_column or None, self.id_column or None)

    def graph(self) -> GraphSettings:
        return GraphSettings(self.min_name_mentions, self.min_concept_frequency, self.min_edge_weight_pct)

    def communities(self) -> CommunitySettings:
        return CommunitySettings(self.max_cluster_size, self.leiden_seed, self.leiden_trials, self.leiden_iterations)

    def resolution(self) -> ResolutionSettings:
        return ResolutionSettings(enabled=self.entity_resolution)

    def make_embedder(self) -> Embedder:
        return make_embedder(self.embedder, self.embedding_dimensions)

    def store(self) -> IndexStore:
        return IndexStore(self.database)

    def vector_store(self) -> VectorStore:
        return VectorStore(self.vectors)

    def forced_corpus(self) -> str | None:
        return self.corpus or None

    def source_path(self, corpus: str, relative_path: str) -> Path:
        """Where the file of a source partition lives under this input dir."""
        root = Path(self.input_dir)
        return root / relative_path if self.forced_corpus() or not (root / corpus).is_dir() else root / corpus / relative_path
