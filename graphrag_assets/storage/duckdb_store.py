"""The one write path into the DuckDB index.

Every table is created up front from ``schema.TABLES``; a partition is replaced by a
delete and an ``INSERT ... BY NAME`` inside one transaction, so readers never see a
half-replaced partition and a crash leaves the previous rows in place. An empty frame
still deletes (a source whose documents all went away must lose its rows).

DuckDB allows a single writer process. A Dagster step opens the file once, through the
``database`` resource (``defs/resources.IndexDatabase``, dagster-duckdb's DuckDBResource),
and closes it when it ends, so the file is free between steps for other processes; opening
retries while another process holds the file. ``graphrag-index`` holds it the same way
(``with settings.store() as store``); used without ``with``, each statement opens and
closes its own connection.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb
import polars as pl

from graphrag_common.ids import content_hash

from .connection import connect
from .schema import TABLES, conform, create_statement, duckdb_type


class Transaction:
    def __init__(self, connection: duckdb.DuckDBPyConnection):
        self._connection = connection
        self._frames = 0

    def replace(self, table_name: str, frame: pl.DataFrame, partition_values: Sequence[str]) -> int:
        """Replace the rows of the given partitions (values of the table's partition
        column) by ``frame``. Returns the number of rows inserted."""
        table = TABLES[table_name]
        frame = conform(table, frame)
        outside = set(frame[table.partition_column].unique().to_list()) - set(partition_values)
        if outside:
            raise ValueError(f"rows for {table_name} belong to partitions not being replaced: {sorted(outside)[:5]}")
        self._connection.execute(
            f'DELETE FROM "{table_name}" WHERE "{table.partition_column}" IN (SELECT unnest(?))',
            [list(partition_values)],
        )
        if frame.height:
            name = f"frame_{self._frames}"
            self._frames += 1
            self._connection.register(name, frame.to_arrow())
            self._connection.execute(f'INSERT INTO "{table_name}" BY NAME SELECT * FROM {name}')
            self._connection.unregister(name)
        return frame.height

    def execute(self, sql: str, parameters: Sequence | None = None) -> None:
        self._connection.execute(sql, parameters or [])

    def register(self, name: str, frame: pl.DataFrame) -> None:
        self._connection.register(name, frame.to_arrow())


class IndexStore:
    """The DuckDB file holding every corpus of the index."""

    def __init__(self, path: str | Path, read_only: bool = False, lock_wait_seconds: float | None = None):
        """``read_only`` with ``lock_wait_seconds=0``: a look at the live file that gives up
        at once instead of waiting for the indexer (the schedule's consistency pass)."""
        self.path = Path(path)
        self.read_only = read_only
        self.lock_wait_seconds = lock_wait_seconds
        self._open: duckdb.DuckDBPyConnection | None = None

    @classmethod
    def over(cls, path: str | Path, connection: duckdb.DuckDBPyConnection) -> IndexStore:
        """The store on a connection its caller opened and closes (a Dagster step's, from
        the ``database`` resource): every statement runs on it, as inside ``with store:``."""
        store = cls(path)
        store._open = connection
        return store

    def __enter__(self) -> IndexStore:
        """Hold one connection until ``__exit__``: opening the file costs tens of
        milliseconds (catalog and WAL are read again each time), and a step runs dozens of
        statements."""
        if not self.read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._open = connect(self.path, read_only=self.read_only, wait_seconds=self.lock_wait_seconds)
        return self

    def __exit__(self, *exc) -> None:
        self._open.close()
        self._open = None

    @property
    def open_connection(self) -> duckdb.DuckDBPyConnection:
        """The connection held by ``with store:`` (for the LLM cache of the same step)."""
        if self._open is None:
            raise RuntimeError("the store is not open: use `with settings.store() as store:`")
        return self._open

    @contextmanager
    def connection(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        if self._open is not None:
            yield self._open
            return
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = connect(self.path, read_only=read_only)
        try:
            yield connection
        finally:
            connection.close()

    def ensure_schema(self) -> None:
        """Create missing tables, and add columns a newer version introduced to the tables
        of an existing index (filled with NULL), so upgrading never needs a rebuild."""
        with self.connection() as connection:
            existing = connection.execute(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'"
            ).fetchall()
            present = {(table, column) for table, column in existing}
            tables_present = {table for table, _ in present}
            for table in TABLES.values():
                if table.name not in tables_present:
                    connection.execute(create_statement(table))
                    continue
                for name, dtype in table.columns.items():
                    if (table.name, name) not in present:
                        connection.execute(f'ALTER TABLE "{table.name}" ADD COLUMN "{name}" {duckdb_type(dtype)}')

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """All writes inside commit together or not at all."""
        with self.connection() as connection:
            connection.execute("BEGIN TRANSACTION")
            try:
                yield Transaction(connection)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

    def read(self, sql: str, parameters: Sequence | None = None) -> pl.DataFrame:
        """Run a query and return a Polars frame (call ``ensure_schema`` first)."""
        with self.connection() as connection:
            return connection.execute(sql, parameters or []).pl()

    def retract_sources(self, keys: Sequence[str]) -> None:
        """Remove every per-source row of these source partitions, their recorded LLM
        failures included, in one transaction."""
        with self.transaction() as tx:
            for table in TABLES.values():
                if table.partition_column == "source_partition":
                    tx.replace(table.name, pl.DataFrame(schema=table.columns), list(keys))
            tx.replace("llm_failures", pl.DataFrame(schema=TABLES["llm_failures"].columns), list(keys))

    def sources_fingerprint(self, corpus: str) -> str:
        """Fingerprint of the sources of a corpus and how far each was indexed: what a graph
        build saw (``corpus_builds.sources_hash``)."""
        frame = self.read(
            (
                "SELECT source_partition, source_hash, settings_hash FROM sources WHERE corpus = ? ORDER BY "
                "source_partition"
            ),
            [corpus],
        )
        return content_hash(frame.write_csv())

    def sources_not_extracted(self, corpus: str) -> pl.DataFrame:
        """(source_partition, chunked) of every source of a corpus read since the last build
        and not yet extracted: new or changed files (a changed reading fingerprint makes
        ``graphrag-index`` read the files again), and sources with a failed text unit.
        ``chunked`` is false until the corpus's ``text_units`` step has chunked what was read.
        A source indexed with other settings is not listed: only reading it again, with the
        settings of the moment, makes it pending, so no step stamps new settings on rows
        built with old ones."""
        return self.read(
            "SELECT DISTINCT d.source_partition, s.source_partition IS NOT NULL AS chunked FROM documents d "
            "LEFT JOIN sources s ON s.source_partition = d.source_partition "
            "WHERE d.corpus = ? AND s.settings_hash IS NULL ORDER BY d.source_partition",
            [corpus],
        )

    def short_ids(self, table_name: str, corpora: Sequence[str]) -> pl.DataFrame:
        """(id, human_readable_id) of every row of these corpora: all that numbering new
        rows needs, without reading the rows themselves."""
        return self.read(
            f'SELECT id, human_readable_id FROM "{table_name}" WHERE corpus IN (SELECT unnest(?))', [list(corpora)]
        )

    def read_table(self, table_name: str, where_column: str, values: Sequence[str]) -> pl.DataFrame:
        table = TABLES[table_name]
        frame = self.read(f'SELECT * FROM "{table_name}" WHERE "{where_column}" IN (SELECT unnest(?))', [list(values)])
        return (
            frame.select(list(table.columns)).cast(table.columns)
            if frame.height
            else pl.DataFrame(schema=table.columns)
        )
