"""Dagster's SQLite event log, writing a batch of events in one transaction per database.

A run over a range of source partitions writes a planned and a materialization event per
partition. Dagster hands such events over in batches (``DagsterEventBatchMetadata``, when
``DAGSTER_EVENT_BATCH_SIZE`` is set), but its SQLite storage still stores them one by one:
for each event a new SQLAlchemy engine and a committed transaction in the run's database,
then the same in the cross-run index database: milliseconds per event, most of a first
index of many small files (measured in bench/README.md, "Many small files").
Here a batch is two transactions; the rows written are the ones ``store_event`` writes, so
the UI, partition statuses and asset queries see the same events.

dagster_home/dagster.yaml selects this class; PostgreSQL storage has its own batch writes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from dagster._config import Field, StringSource
from dagster._core.events import ASSET_CHECK_EVENTS, ASSET_EVENTS
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.schema import SqlEventLogStorageTable
from dagster._serdes import ConfigurableClassData

BATCH_SIZE_VARIABLE = "DAGSTER_EVENT_BATCH_SIZE"
# Events per transaction: a first index of 20,000 files writes 40 transactions of events
# instead of 80,000, and a batch still fits easily in memory.
DEFAULT_BATCH_SIZE = "1000"


class BatchingSqliteEventLogStorage(SqliteEventLogStorage):
    def __init__(self, base_dir: str | None = None, inst_data: ConfigurableClassData | None = None):
        # Dagster reads the batch size from the environment only; the instance is what every
        # process writing events (graphrag-index, run workers, the daemon) loads, so it is set
        # here, unless chosen otherwise.
        os.environ.setdefault(BATCH_SIZE_VARIABLE, DEFAULT_BATCH_SIZE)
        # Dagster's default place for the event log, so that switching keeps the history.
        super().__init__(base_dir or os.path.join(os.environ["DAGSTER_HOME"], "history", "runs"), inst_data)

    @classmethod
    def config_type(cls):
        return {"base_dir": Field(StringSource, is_required=False)}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None, config_value) -> BatchingSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        """What ``store_event`` writes for each event, in one transaction per database. A
        batch holds events of one run (one step's, or a run's planned events)."""
        rows = [self._event_to_row(event) for event in events]  # serialized once, for both databases
        with self.run_connection(events[0].run_id) as connection:
            connection.execute(SqlEventLogStorageTable.insert(), rows)
        indexed = [
            i
            for i, event in enumerate(events)
            if event.is_dagster_event and event.dagster_event_type in ASSET_EVENTS | ASSET_CHECK_EVENTS
        ]
        if not indexed:
            return
        with self.index_transaction() as connection:
            inserted = connection.execute(
                SqlEventLogStorageTable.insert().returning(SqlEventLogStorageTable.c.id, sort_by_parameter_order=True),
                [rows[i] for i in indexed],
            )
            ids = dict(zip(indexed, (row[0] for row in inserted)))
            assets = [i for i in indexed if events[i].dagster_event_type in ASSET_EVENTS]
            self._store_asset_event_tags(connection, [events[i] for i in assets], [ids[i] for i in assets])
            # An asset's row holds what the last event of each type set: earlier ones of the
            # batch would only be overwritten.
            last_of_kind = {(events[i].dagster_event.asset_key, events[i].dagster_event_type): i for i in assets}
            for i in sorted(last_of_kind.values()):
                self._store_asset_event(connection, events[i], ids[i])
        for i in indexed:
            if events[i].dagster_event_type in ASSET_CHECK_EVENTS:
                self.store_asset_check_event(events[i], ids[i])
