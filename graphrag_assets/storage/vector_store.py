"""LanceDB vector tables, one per embedding kind, shared by all corpora.

The DuckDB ``embeddings`` table is the source of truth; LanceDB mirrors it for tools that
read vectors from LanceDB. Writing a corpus replaces that corpus's rows of each table and
then records which build of the corpus the directory holds (``graphrag_mirror.json``), so
``graphrag-index`` sees a mirror that is missing, deleted or behind without importing
LanceDB, and rebuilds it from DuckDB. The size of every file of the tables is recorded
with it (``graphrag_mirror_files.json``): a file gone or cut short since is a damaged
mirror, rebuilt the same way.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl

from . import lance_mirror

MIRROR_STAMPS = "graphrag_mirror.json"
MIRROR_FILES = "graphrag_mirror_files.json"


class VectorStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)

    def mirrored_builds(self) -> dict[str, int]:
        """corpus -> the build (``corpus_builds.built_at``, epoch microseconds) whose
        vectors the directory holds completely (none while it is damaged)."""
        if self.damage():
            return {}
        try:
            return json.loads((self.path / MIRROR_STAMPS).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def damage(self) -> str | None:
        """What changed in the tables' files since the mirror was last written (a file gone or
        of another size), None when nothing did or nothing was recorded."""
        try:
            recorded = json.loads((self.path / MIRROR_FILES).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        present = self._table_files()
        for name, size in recorded.items():
            if name not in present:
                return f"{self.path / name} is gone"
            if present[name] != size:
                return f"{self.path / name} has {present[name]} bytes, {size} when written"
        return None

    def _table_files(self) -> dict[str, int]:
        return {
            str(file.relative_to(self.path)): file.stat().st_size
            for file in self.path.glob("*.lance/**/*")
            if file.is_file()
        }

    def _stamp(self, stamps: dict[str, int]) -> None:
        for name, content in ((MIRROR_FILES, self._table_files()), (MIRROR_STAMPS, stamps)):
            staged = self.path / f".{name}.tmp"
            staged.write_text(json.dumps(content, indent=2, sort_keys=True))
            os.replace(staged, self.path / name)

    def replace_corpus(self, corpus: str, embeddings: pl.DataFrame, build: int) -> dict[str, int]:
        """Mirror the corpus's embedding rows (id, kind, corpus, vector) into LanceDB (by the
        mirror process, lance_mirror.py), then record ``build`` as the corpus's mirrored
        build. A table whose vectors change size is made anew, so the other corpora's
        mirror of it is behind: their stamps go."""
        mirrored = self.mirrored_builds()  # before the write, which records the files anew
        counts, remade = lance_mirror.replace_corpus(self.path, corpus, embeddings)
        self._stamp(({} if remade else mirrored) | {corpus: build})
        return counts

    def table_versions(self) -> dict[str, int]:
        """kind -> the version of its LanceDB table, for the tables that exist."""
        return lance_mirror.table_versions(self.path) if self.path.exists() else {}
