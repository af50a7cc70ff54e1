"""Reading the index: the published snapshot's tables of one corpus
(``graphrag_assets.storage.published_tables``), with vector and BM25 search over the same
snapshot's rows (``search``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import duckdb
import numpy as np
import polars as pl

from graphrag_assets.core.claims import COVARIATE_COLUMNS, resolve_claims
from graphrag_assets.core.embedding import Embedder, HashedNgramEmbedder, report_inputs
from graphrag_assets.storage.published_tables import IndexNotFound, PublishedTables

from .ranking import MentionGraph
from .search import LexicalIndex, VectorIndex

__all__ = ["IndexNotFound", "IndexReader"]


@dataclass
class IndexReader(PublishedTables):
    """Tables of one corpus, loaded once per reader (cheap: they are what GraphRAG keeps
    in memory at query time anyway), with the searches over them."""

    _vectors: dict[str, VectorIndex] = field(default_factory=dict, repr=False)
    _memos: dict[str, object] = field(default_factory=dict, repr=False)

    def load(self) -> IndexReader:
        """Load every table a query may need (so timing a query excludes the one-off load)."""
        for name in ["entities", "relationships", "communities", "community_reports", "text_units", "documents"]:
            self.table(name)
        if self.table("entities").is_empty():
            raise self._not_indexed("entities")
        self.claims  # noqa: B018
        self.embedding_model  # noqa: B018  (resolves the embedder)
        self.text_unit_search  # noqa: B018
        self.mention_graph  # noqa: B018
        for kind in ("text_unit_text", "entity_description", "community_full_content"):
            self.vector_index(kind)
        return self

    def community_map(self, level: int = 0):
        """The map of the corpus's communities at ``level`` that its last graph build drew
        (beside the index, not in the snapshot), for a notebook to display."""
        from IPython.display import SVG

        # Imported here: drawing needs networkx, which no query loads.
        from graphrag_assets.core.graph_pictures import community_map_path

        path = community_map_path(self.database, self.corpus, level)
        if not path.is_file():
            raise IndexNotFound(
                f"no map of level {level} of corpus {self.corpus!r} at {path}: index the corpus first (is there "
                f"a level {level}?)"
            )
        return SVG(filename=str(path))

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
        with self._connection() as connection:
            row = connection.execute(
                "SELECT any_value(model) FROM embeddings WHERE corpus = ?", [self.corpus]
            ).fetchone()
        if row is None or row[0] is None:
            raise self._not_indexed("embeddings")
        return row[0]

    def _not_indexed(self, what: str) -> IndexNotFound:
        """The error for a corpus without ``what``: an unknown name lists the corpora there are."""
        with self._connection() as connection:
            there = [
                row[0] for row in connection.execute("SELECT DISTINCT corpus FROM documents ORDER BY 1").fetchall()
            ]
        if self.corpus not in there:
            return IndexNotFound(
                f"no corpus {self.corpus!r} in {self.source}; its corpora: {', '.join(there) or 'none'} "
                "(choose one with --corpus, or corpus= in Python)"
            )
        return IndexNotFound(f"corpus {self.corpus!r} has no {what} in {self.source}: index it first")

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
            from .call_log import QueryCallLog
            from .llm import EndpointEmbedder

            return EndpointEmbedder(endpoint, QueryCallLog(self.database, self.corpus))
        raise IndexNotFound(
            f"index embedded with {model!r}: set GRAPHRAG_EMBEDDING_MODEL={model} (and its endpoint) to query it"
        )

    def embed(self, text: str) -> np.ndarray:
        return self.embedder.embed([text])[0]

    def memo(self, name: str, build):
        """What ``build()`` returns, computed once per reader: for the query modes' own
        derived data (the snapshot a reader reads never changes)."""
        if name not in self._memos:
            self._memos[name] = build()
        return self._memos[name]

    def vector_index(self, kind: str) -> VectorIndex:
        """The corpus's vectors of one kind (text_unit_text, entity_description,
        community_full_content), loaded once."""
        if kind not in self._vectors:
            with self._connection() as connection:
                rows = connection.execute(
                    "SELECT id, vector FROM embeddings WHERE corpus = ? AND kind = ? ORDER BY id", [self.corpus, kind]
                ).pl()
            self._vectors[kind] = VectorIndex.from_rows(rows)
        return self._vectors[kind]

    def nearest(self, kind: str, vector: np.ndarray, k: int, exclude: list[str] | None = None) -> pl.DataFrame:
        """(id, similarity) of the k nearest rows of a kind in this corpus, best first."""
        return self.vector_index(kind).nearest(vector, k, exclude or ())

    def _lexical_index(self, kind: str, ids: list[str], texts: list[str]) -> LexicalIndex:
        """BM25 from the terms stored with the index; an index written before they were
        (or imported without them) is tokenized here."""
        try:
            with self._connection() as connection:
                terms = connection.execute(
                    "SELECT id, term, tf FROM search_terms WHERE corpus = ? AND kind = ?", [self.corpus, kind]
                ).pl()
        except duckdb.CatalogException:
            terms = None
        if terms is None or (terms.is_empty() and ids):
            return LexicalIndex.from_texts(ids, texts)
        return LexicalIndex.from_terms(ids, terms)

    @cached_property
    def text_unit_search(self) -> LexicalIndex:
        """BM25 over the corpus's text units."""
        units = self.table("text_units")
        return self._lexical_index("text_unit_text", units["id"].to_list(), units["text"].to_list())

    @cached_property
    def report_search(self) -> LexicalIndex:
        """BM25 over the corpus's community reports (their full content)."""
        reports = report_inputs(self.table("community_reports"))
        return self._lexical_index("community_full_content", reports["id"].to_list(), reports["text"].to_list())

    def passage_before(self, unit_id: str) -> tuple[int, str] | None:
        """The (human_readable_id, text) of the text unit before ``unit_id`` in its document:
        what a pronoun at the start of a passage may stand for. None for a document's first
        unit, or in an index whose text units have no order (an import without
        ``chunk_index``). Looked up only when an answer needs it, not for every search."""
        units = self.table("text_units")
        if "chunk_index" not in units.columns:
            return None
        unit = units.filter(pl.col("id") == unit_id).select("document_id", "chunk_index")
        if unit.is_empty() or unit["chunk_index"][0] is None:
            return None
        document, chunk = unit.row(0)
        before = units.filter((pl.col("document_id") == document) & (pl.col("chunk_index") == chunk - 1))
        return None if before.is_empty() else (before["human_readable_id"][0], before["text"][0])

    @cached_property
    def entity_by_name_key(self) -> dict[str, str]:
        entities = self.table("entities")
        return dict(zip(entities["name_key"], entities["id"]))

    @cached_property
    def mention_graph(self) -> MentionGraph:
        """Text units and the names extracted from them, merged names resolved: the graph
        that local search walks from the question's names to their evidence."""
        try:
            records, merges = self.table("extracted_entities"), self.table("entity_merges")
        except duckdb.CatalogException:  # an index written before these tables existed
            records, merges = None, None
        return MentionGraph.build(self.table("text_units"), self.table("entities"), records, merges)
