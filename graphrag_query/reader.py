"""Reading the index: the published snapshot (or, before the first publish, the live
file, read-only with retry), one corpus at a time, plus vector search in LanceDB pinned
to the table versions published with the snapshot."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from graphrag_assets.core.claims import COVARIATE_COLUMNS, resolve_claims
from graphrag_assets.core.embedding import Embedder, HashedNgramEmbedder
from graphrag_assets.storage.connection import connect
from graphrag_assets.storage.snapshot import read_pointer

DEFAULT_DATABASE = "data/graphrag.duckdb"
DEFAULT_VECTORS = "data/lancedb"


class IndexNotFound(FileNotFoundError):
    pass


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@dataclass
class IndexReader:
    """Tables of one corpus, loaded once per reader (cheap: they are what GraphRAG keeps
    in memory at query time anyway)."""

    database: str | None = None
    vectors: str | None = None
    corpus: str = "default"
    _frames: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.database = self.database or os.environ.get("GRAPHRAG_DB") or DEFAULT_DATABASE
        pointer = read_pointer(self.database)
        self.pointer = pointer
        if pointer is not None:
            self.source = Path(pointer["snapshot"])
            self.vectors = self.vectors or pointer["lancedb"]
        else:
            self.source = Path(self.database)
            self.vectors = self.vectors or os.environ.get("GRAPHRAG_VECTORS") or DEFAULT_VECTORS
        if not self.source.exists():
            raise IndexNotFound(f"no index at {self.database}: run graphrag-index first (or set GRAPHRAG_DB)")

    def table(self, name: str) -> pl.DataFrame:
        if name not in self._frames:
            with connect(self.source, read_only=True) as connection:
                self._frames[name] = connection.execute(f'SELECT * FROM "{name}" WHERE corpus = ?', [self.corpus]).pl()
        return self._frames[name]

    def load(self) -> "IndexReader":
        """Load every table a query may need (so timing a query excludes the one-off load)."""
        for name in ["entities", "relationships", "communities", "community_reports", "text_units", "documents"]:
            self.table(name)
        if self.table("entities").is_empty():
            raise IndexNotFound(f"corpus {self.corpus!r} has no entities in {self.source}: index it first")
        self.claims  # noqa: B018
        self.embedding_model  # noqa: B018  (resolves the embedder)
        return self

    @cached_property
    def claims(self) -> pl.DataFrame:
        """The corpus's claims (table ``covariates``) with subject and object resolved to the
        entities they were merged into (``subject_entity_id``); empty when claims were not
        extracted, or the index predates them."""
        try:
            covariates, merges = self.table("covariates"), self.table("entity_merges")
        except duckdb.CatalogException:
            covariates, merges = pl.DataFrame(schema=COVARIATE_COLUMNS), None
        return resolve_claims(covariates, self.table("entities"), merges)

    @cached_property
    def embedding_model(self) -> str:
        with connect(self.source, read_only=True) as connection:
            row = connection.execute("SELECT any_value(model) FROM embeddings WHERE corpus = ?", [self.corpus]).fetchone()
        if row is None or row[0] is None:
            raise IndexNotFound(f"corpus {self.corpus!r} has no embeddings in {self.source}")
        return row[0]

    @cached_property
    def embedder(self) -> Embedder:
        """The embedder the index was built with (the question must live in its space)."""
        model = self.embedding_model
        if model.startswith("hashed-ngram-crc32-"):
            return HashedNgramEmbedder(int(model.rsplit("-", 1)[1]))
        from graphrag_assets.core.embedding import MiniLMEmbedder
        from graphrag_assets.llm.settings import LLMSettings

        if model == MiniLMEmbedder.name:
            return MiniLMEmbedder()
        endpoint = LLMSettings.from_env()
        if endpoint.embeddings_enabled and endpoint.embedding_model == model:
            from .llm import EndpointEmbedder

            return EndpointEmbedder(endpoint)
        raise IndexNotFound(f"index embedded with {model!r}: set GRAPHRAG_EMBEDDING_MODEL={model} (and its endpoint) to query it")

    def embed(self, text: str) -> np.ndarray:
        return self.embedder.embed([text])[0]

    @cached_property
    def _lancedb(self):
        import lancedb  # imported on first vector search: it is slow to import

        return lancedb.connect(str(self.vectors))

    def _vector_table(self, kind: str):
        table = self._lancedb.open_table(kind)
        version = (self.pointer or {}).get("lancedb_versions", {}).get(kind)
        if version is not None:
            table.checkout(version)  # the vectors that match the snapshot's tables
        return table

    def nearest(self, kind: str, vector: np.ndarray, k: int, exclude: list[str] | None = None) -> pl.DataFrame:
        """(id, similarity) of the k nearest rows of a kind in this corpus, best first."""
        where = f"corpus = {_quote(self.corpus)}"
        if exclude:
            where += " AND id NOT IN (" + ", ".join(_quote(e) for e in exclude) + ")"
        hits = (
            self._vector_table(kind)
            .search(vector.astype(np.float32), vector_column_name="vector")
            .distance_type("cosine")
            .where(where, prefilter=True)
            .limit(k)
            .to_arrow()
        )
        frame = pl.from_arrow(hits.select(["id", "_distance"]))
        return frame.select("id", (1 - pl.col("_distance")).alias("similarity"))
