"""Search over one corpus of an index: exact vector neighbours and BM25.

Both are built from the index's own DuckDB tables (the ``embeddings`` vectors and the
``search_terms`` the indexer stores with them), so a reader of a published snapshot searches exactly the rows it reads:
no second
store to keep in step, nothing to pin, nothing that a deleted LanceDB folder can break.
Exact search is a matrix product: a few milliseconds for the ~10^5 vectors of a corpus of
a million tokens. The LanceDB tables the indexer writes stay a mirror for tools that want
approximate search over bigger collections.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from graphrag_common.lexical import Bm25

HIT_SCHEMA = {"id": pl.String, "similarity": pl.Float64}
LEXICAL_HIT_SCHEMA = {"id": pl.String, "score": pl.Float64}


@dataclass
class VectorIndex:
    ids: list[str]
    matrix: np.ndarray  # one L2-normalised row per id

    @classmethod
    def from_rows(cls, rows: pl.DataFrame) -> VectorIndex:
        """From (id, vector) rows."""
        if rows.is_empty():
            return cls([], np.zeros((0, 0), dtype=np.float32))
        dimensions = len(rows["vector"][0])
        matrix = rows["vector"].list.to_array(dimensions).to_numpy().astype(np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return cls(rows["id"].to_list(), matrix / np.where(norms == 0, 1, norms))

    def nearest(self, vector: np.ndarray, k: int, exclude: Sequence[str] = ()) -> pl.DataFrame:
        """(id, similarity) of the k rows nearest by cosine, best first."""
        if not self.ids or k <= 0:
            return pl.DataFrame(schema=HIT_SCHEMA)
        query = np.asarray(vector, dtype=np.float32)
        query = query / (np.linalg.norm(query) or 1.0)
        similarity = self.matrix @ query
        if exclude:
            excluded = set(exclude)
            similarity = np.where([i in excluded for i in self.ids], -np.inf, similarity)
        wanted = min(k, len(self.ids))
        best = np.argpartition(-similarity, wanted - 1)[:wanted]
        best = best[np.argsort(-similarity[best], kind="stable")]
        best = best[np.isfinite(similarity[best])]
        return pl.DataFrame(
            {"id": [self.ids[i] for i in best], "similarity": similarity[best].astype(np.float64)}, schema=HIT_SCHEMA
        )


@dataclass
class LexicalIndex:
    ids: list[str]
    bm25: Bm25

    @classmethod
    def from_texts(cls, ids: Sequence[str], texts: Sequence[str]) -> LexicalIndex:
        return cls(list(ids), Bm25.from_texts(texts))

    @classmethod
    def from_terms(cls, ids: Sequence[str], terms: pl.DataFrame) -> LexicalIndex:
        """From stored (id, term, tf) rows (table ``search_terms``)."""
        return cls(list(ids), Bm25.from_counts(terms, ids))

    def top(self, question: str, k: int) -> pl.DataFrame:
        """(id, score) of the k best BM25 matches, best first; only texts sharing a term."""
        hits = self.bm25.top(question, k)
        return pl.DataFrame(
            {"id": [self.ids[i] for i, _ in hits], "score": [s for _, s in hits]}, schema=LEXICAL_HIT_SCHEMA
        )
