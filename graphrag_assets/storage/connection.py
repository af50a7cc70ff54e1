"""Opening the DuckDB file, waiting while another process holds its lock. Kept free of
the rest of the package so that readers (``graphrag_query``) import only DuckDB."""

from __future__ import annotations

import fcntl
import logging
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ..configuration import value_of

# A writer waits this long for a process holding the file (a SQL shell, a notebook) before
# its step fails; the step is then retried by the job's retry policy. Readers should open
# the published snapshot instead and never hold the live file (see README, "SQL").
LOCK_WAIT_VARIABLE = "GRAPHRAG_LOCK_WAIT_SECONDS"
REPORT_EVERY_SECONDS = 30.0

log = logging.getLogger(__name__)


# DuckDB's words for a file another process holds ("Could not set lock on file ...: Conflicting
# lock is held in ..."); a bare "lock" would also match the "block" of a damaged file's message.
LOCK_MESSAGES = ("could not set lock on file", "conflicting lock")
# DuckDB's words for a file that is not (or no longer) a whole DuckDB database.
DAMAGE_MESSAGES = ("not a valid duckdb database file", "corrupt database file", "could not read enough bytes")


def is_lock_error(error: Exception) -> bool:
    message = str(error).lower()
    return any(words in message for words in LOCK_MESSAGES)


def is_damaged_file_error(error: Exception) -> bool:
    message = str(error).lower()
    return any(words in message for words in DAMAGE_MESSAGES)


def lock_holder(error: Exception) -> str:
    """Who holds the file, from DuckDB's message ("... is held in /usr/bin/python3 (PID 123)")."""
    found = re.search(r"held in (.+?) \(PID (\d+)\)", str(error))
    return f"process {found.group(2)} ({found.group(1)})" if found else "another process"


def lock_wait_seconds() -> float:
    return value_of(LOCK_WAIT_VARIABLE)


def connect(
    path: str | Path, read_only: bool = False, wait_seconds: float | None = None, config: dict | None = None
) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB file, waiting (and saying who it waits for) while another process holds it."""
    return opened_with_lock_wait(
        lambda: duckdb.connect(str(path), read_only=read_only, config=config or {}), path, wait_seconds
    )


def opened_with_lock_wait(
    open_database: Callable[[], duckdb.DuckDBPyConnection], what: str | Path, wait_seconds: float | None = None
) -> duckdb.DuckDBPyConnection:
    """``open_database()``, tried again while the file it opens (``what``) is locked by
    another process, for at most ``wait_seconds`` (GRAPHRAG_LOCK_WAIT_SECONDS)."""
    wait_seconds = lock_wait_seconds() if wait_seconds is None else wait_seconds
    started = time.monotonic()
    reported = started
    delay = 0.05
    while True:
        try:
            return open_database()
        except duckdb.IOException as error:
            waited = time.monotonic() - started
            if not is_lock_error(error) or waited > wait_seconds:
                raise
            if time.monotonic() - reported >= REPORT_EVERY_SECONDS:
                reported = time.monotonic()
                log.warning(
                    f"waiting {waited:.0f} s of at most {wait_seconds:.0f} s ({LOCK_WAIT_VARIABLE}) for {what}: "
                    f"it is held by {lock_holder(error)}"
                )
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def same_catalog(connection: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A cursor of ``connection`` (for another thread) on the same default catalog and schema:
    a cursor starts on the database's own catalog, while a DuckLake index is an attached one
    made the default by ``USE`` (storage/location.py)."""
    catalog, schema = connection.execute("SELECT current_database(), current_schema()").fetchone()
    cursor = connection.cursor()
    cursor.execute(f'USE "{catalog}"."{schema}"')
    return cursor


@contextmanager
def initialising(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_file`` (made if missing) while something is created
    that two processes must not create at once (a fresh DAGSTER_HOME's storage, a fresh
    DuckLake catalog): the second waits, then finds it made. Released when the holder
    ends, however it ends."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
