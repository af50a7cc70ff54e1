"""The one write path into the index (a DuckDB file or a DuckLake, storage/location.py).

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

A DuckLake with a SQLite or PostgreSQL catalog admits several writers; a commit that
conflicts with another writer's (both replaced rows of one table) fails as a whole, and
the transaction is applied again from the start: a transaction's writes are recorded as
they are made and applied at its end, so it can be replayed.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb
import polars as pl

from graphrag_common.ids import content_hash

from .location import IndexLocation
from .schema import SOURCE_EXTRACTED, SOURCE_READ, TABLES, conform, create_statement, duckdb_type

# A commit another writer's commit conflicted with is applied again, at most this many times,
# after a growing random pause.
CONFLICT_RETRIES = 12
log = logging.getLogger(__name__)


class Transaction:
    """The writes of one transaction, checked as they are made and applied together."""

    def __init__(self):
        self._writes: list[Callable[[duckdb.DuckDBPyConnection], None]] = []

    def replace(self, table_name: str, frame: pl.DataFrame, partition_values: Sequence[str]) -> int:
        """Replace the rows of the given partitions (values of the table's partition
        column) by ``frame``. Returns the number of rows inserted."""
        table = TABLES[table_name]
        frame = conform(table, frame)
        outside = set(frame[table.partition_column].unique().to_list()) - set(partition_values)
        if outside:
            raise ValueError(f"rows for {table_name} belong to partitions not being replaced: {sorted(outside)[:5]}")
        partitions = list(partition_values)
        rows = frame.to_arrow() if frame.height else None
        name = f"frame_{len(self._writes)}"

        def write(connection: duckdb.DuckDBPyConnection) -> None:
            connection.execute(
                f'DELETE FROM "{table_name}" WHERE "{table.partition_column}" IN (SELECT unnest(?))', [partitions]
            )
            if rows is not None:
                connection.register(name, rows)
                connection.execute(f'INSERT INTO "{table_name}" BY NAME SELECT * FROM {name}')
                connection.unregister(name)

        self._writes.append(write)
        return frame.height

    def execute(self, sql: str, parameters: Sequence | None = None) -> None:
        self._writes.append(lambda connection: connection.execute(sql, parameters or []))

    def register(self, name: str, frame: pl.DataFrame) -> None:
        """``frame`` as a view named ``name`` for the statements after it."""
        rows = frame.to_arrow()
        self._writes.append(lambda connection: connection.register(name, rows))

    def apply(self, connection: duckdb.DuckDBPyConnection) -> None:
        for write in self._writes:
            write(connection)


def is_write_conflict(error: duckdb.Error) -> bool:
    """A DuckLake commit that lost to another writer's (or met its lock on a SQLite catalog):
    nothing of it was applied, and applying it again can succeed."""
    message = str(error)
    return "Transaction conflict" in message or "database is locked" in message


class IndexStore:
    """The index holding every corpus: a DuckDB file, or a DuckLake."""

    def __init__(
        self, location: IndexLocation | str | Path, read_only: bool = False, lock_wait_seconds: float | None = None
    ):
        """``location``: a DuckDB file's path, or an ``IndexLocation``. ``read_only`` with
        ``lock_wait_seconds=0``: a look at the live index that gives up at once instead of
        waiting for the indexer (the schedule's consistency pass)."""
        self.location = location if isinstance(location, IndexLocation) else IndexLocation(str(location))
        self.path = Path(self.location.database)
        self.read_only = read_only
        self.lock_wait_seconds = lock_wait_seconds
        self._open: duckdb.DuckDBPyConnection | None = None

    @classmethod
    def over(cls, location: IndexLocation | str | Path, connection: duckdb.DuckDBPyConnection) -> IndexStore:
        """The store on a connection its caller opened and closes (a Dagster step's, from
        the ``database`` resource): every statement runs on it, as inside ``with store:``."""
        store = cls(location)
        store._open = connection
        return store

    def __enter__(self) -> IndexStore:
        """Hold one connection until ``__exit__``: opening the index costs tens of
        milliseconds (its catalog is read again each time), and a step runs dozens of
        statements."""
        self._open = self._connect(self.read_only, self.lock_wait_seconds)
        return self

    def _connect(self, read_only: bool, wait_seconds: float | None = None) -> duckdb.DuckDBPyConnection:
        if not read_only and self.location.lake is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        return self.location.connect(read_only=read_only, wait_seconds=wait_seconds)

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
        connection = self._connect(read_only)
        try:
            yield connection
        finally:
            connection.close()

    def ensure_schema(self) -> None:
        """Create missing tables, and add columns a newer version introduced to the tables
        of an existing index (filled with NULL), so upgrading never needs a rebuild. A store
        opened read-only (a look that writes nothing) is read as it is."""
        if self.read_only:
            return
        # Opened first: opening a lake takes the creation lock itself.
        with self.connection() as connection, self.location.creating():
            existing = connection.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_catalog = current_database() AND table_schema = 'main'"
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
                        if name in table.backfill:
                            connection.execute(f'UPDATE "{table.name}" SET "{name}" = {table.backfill[name]}')

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """All writes inside commit together or not at all, when the block ends."""
        transaction = Transaction()
        yield transaction
        with self.connection() as connection:
            for attempt in range(CONFLICT_RETRIES + 1):
                try:
                    connection.execute("BEGIN TRANSACTION")
                    transaction.apply(connection)
                    connection.execute("COMMIT")
                    return
                except duckdb.Error as error:
                    _roll_back(connection)
                    if not is_write_conflict(error) or attempt == CONFLICT_RETRIES:
                        raise
                    pause = random.uniform(0.05, 0.2) * 2 ** min(attempt, 5)
                    log.info(f"commit conflicted with another writer's, applied again in {pause:.1f} s: {error}")
                    time.sleep(pause)

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
        """(source_partition, status) of every source of a corpus read since the last build
        and not yet extracted: new or changed files, ``read`` (a changed reading fingerprint
        makes ``graphrag-index`` read the files again), and sources with a failed text unit,
        ``failed`` (chunked already). A source indexed with other settings is not listed: only
        reading it again, with the settings of the moment, makes it pending, so no step
        stamps new settings on rows built with old ones."""
        return self.read(
            f"SELECT DISTINCT d.source_partition, coalesce(s.status, '{SOURCE_READ}') AS status FROM documents d "
            "LEFT JOIN sources s ON s.source_partition = d.source_partition "
            f"WHERE d.corpus = ? AND coalesce(s.status, '{SOURCE_READ}') != '{SOURCE_EXTRACTED}' "
            "ORDER BY d.source_partition",
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


def _roll_back(connection: duckdb.DuckDBPyConnection) -> None:
    """End the failed transaction (a failed COMMIT has ended it already)."""
    try:
        connection.execute("ROLLBACK")
    except duckdb.Error:
        pass
