"""LanceDB vector tables, one per embedding kind, shared by all corpora.

The DuckDB ``embeddings`` table is the source of truth; LanceDB mirrors it for fast
nearest-neighbour search. Writing a corpus replaces that corpus's rows of each table.
"""

from __future__ import annotations

from pathlib import Path

import lancedb
import polars as pl
import pyarrow as pa

from ..core.embedding import EMBEDDING_KINDS


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class VectorStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)

    def _db(self):
        self.path.mkdir(parents=True, exist_ok=True)
        return lancedb.connect(str(self.path))

    def replace_corpus(self, corpus: str, embeddings: pl.DataFrame) -> dict[str, int]:
        """Mirror the corpus's embedding rows (id, kind, corpus, vector) into LanceDB."""
        db = self._db()
        existing = set(db.list_tables().tables)
        counts = {}
        for kind in EMBEDDING_KINDS:
            rows = embeddings.filter(pl.col("kind") == kind)
            dimensions = len(rows["vector"][0]) if rows.height else None
            table = None
            if kind in existing:
                table = db.open_table(kind)
                stored = table.schema.field("vector").type.list_size
                if dimensions is not None and stored != dimensions:
                    # A new embedding model: vectors of another size cannot share a column.
                    db.drop_table(kind)
                    table = None
                else:
                    table.delete(f"corpus = {_quote(corpus)}")
            if rows.height:
                arrow = pa.table(
                    {
                        "id": pa.array(rows["id"].to_list(), pa.string()),
                        "corpus": pa.array(rows["corpus"].to_list(), pa.string()),
                        "vector": pa.array(rows["vector"].to_list(), pa.list_(pa.float32(), dimensions)),
                    }
                )
                if table is None:
                    db.create_table(kind, arrow)
                else:
                    table.add(arrow)
            counts[kind] = rows.height
        return counts

    def count(self, kind: str, corpus: str) -> int:
        db = self._db()
        try:
            table = db.open_table(kind)
        except (FileNotFoundError, ValueError):
            return 0
        return table.count_rows(f"corpus = {_quote(corpus)}")
