"""LanceDB vector tables, one per embedding kind, shared by all corpora.

The DuckDB ``embeddings`` table is the source of truth; LanceDB mirrors it for tools that
read vectors from LanceDB. Writing a corpus replaces that corpus's rows of each table and
then records which build of the corpus the directory holds (``graphrag_mirror.json``), so
``graphrag-index`` sees a mirror that is missing, deleted or behind without importing
LanceDB, and rebuilds it from DuckDB.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl

from ..core.embedding import EMBEDDING_KINDS

MIRROR_STAMPS = "graphrag_mirror.json"


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class VectorStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)

    def _db(self):
        import lancedb  # about a second to import: only when vectors are written

        self.path.mkdir(parents=True, exist_ok=True)
        return lancedb.connect(str(self.path))

    def mirrored_builds(self) -> dict[str, int]:
        """corpus -> the build (``corpus_builds.built_at``, epoch microseconds) whose
        vectors the directory holds completely."""
        try:
            return json.loads((self.path / MIRROR_STAMPS).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def _stamp(self, stamps: dict[str, int]) -> None:
        staged = self.path / f".{MIRROR_STAMPS}.tmp"
        staged.write_text(json.dumps(stamps, indent=2, sort_keys=True))
        os.replace(staged, self.path / MIRROR_STAMPS)

    def replace_corpus(self, corpus: str, embeddings: pl.DataFrame, build: int) -> dict[str, int]:
        """Mirror the corpus's embedding rows (id, kind, corpus, vector) into LanceDB, then
        record ``build`` as the corpus's mirrored build."""
        import pyarrow as pa

        db = self._db()
        existing = set(db.list_tables().tables)
        stamps = self.mirrored_builds()
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
                    # The other corpora lose their rows of this kind: their mirror is behind.
                    db.drop_table(kind)
                    table = None
                    stamps = {}
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
        self._stamp(stamps | {corpus: build})
        return counts
