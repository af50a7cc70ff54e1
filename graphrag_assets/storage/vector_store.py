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

from . import lance_mirror

MIRROR_STAMPS = "graphrag_mirror.json"


class VectorStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)

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
        """Mirror the corpus's embedding rows (id, kind, corpus, vector) into LanceDB (by the
        mirror process, lance_mirror.py), then record ``build`` as the corpus's mirrored
        build. A table whose vectors change size is made anew, so the other corpora's
        mirror of it is behind: their stamps go."""
        counts, remade = lance_mirror.replace_corpus(self.path, corpus, embeddings)
        self._stamp(({} if remade else self.mirrored_builds()) | {corpus: build})
        return counts

    def table_versions(self) -> dict[str, int]:
        """kind -> the version of its LanceDB table, for the tables that exist."""
        return lance_mirror.table_versions(self.path) if self.path.exists() else {}
