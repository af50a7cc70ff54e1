"""A corpus's tables as readers see them: the published snapshot (or, before the first
publish, the live file, read-only with retry). What the query side's ``IndexReader`` and
the export to Microsoft GraphRAG's layout both read, so neither package imports the
other."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from graphrag_assets.configuration import value_of

from .connection import connect, same_catalog
from .location import configured_location
from .snapshot import PublishedElsewhere, open_published, pointer_for_readers, published_description, published_exists


class IndexNotFound(FileNotFoundError):
    pass


@dataclass
class PublishedTables:
    """Tables of one corpus, loaded once each."""

    database: str | None = None
    corpus: str = "default"
    _frames: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)
    _snapshot: duckdb.DuckDBPyConnection | None = field(default=None, repr=False)

    def __post_init__(self):
        self.database = self.database or value_of("GRAPHRAG_DB")
        location = configured_location(self.database)
        try:
            pointer = pointer_for_readers(location)
        except PublishedElsewhere as error:
            raise IndexNotFound(str(error)) from None
        self.pointer = pointer if published_exists(pointer) else None
        self.source = published_description(pointer) if self.pointer else self.database
        if self.pointer is None and (pointer is not None or location.lake or not Path(self.database).exists()):
            raise IndexNotFound(f"no index at {location.describe()}: run graphrag-index first (or set GRAPHRAG_DB)")

    @contextmanager
    def _connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection for one read. The published snapshot is opened once and kept: no
        process writes it, so holding it blocks nobody, and opening the file costs ~25 ms
        a read (a cursor per read keeps threads apart). The live file, read before the
        first publish, is opened per read: any open connection to it stops the indexer."""
        if self.pointer is None:
            with connect(self.source, read_only=True) as connection:
                yield connection
            return
        if self._snapshot is None:
            self._snapshot = open_published(self.pointer)
        with same_catalog(self._snapshot) as cursor:
            yield cursor

    def table(self, name: str) -> pl.DataFrame:
        if name not in self._frames:
            with self._connection() as connection:
                self._frames[name] = connection.execute(f'SELECT * FROM "{name}" WHERE corpus = ?', [self.corpus]).pl()
        return self._frames[name]
