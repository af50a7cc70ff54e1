"""Opening the DuckDB file, waiting while another process holds its lock. Kept free of
the rest of the package so that readers (``graphrag_query``) import only DuckDB."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb

LOCK_RETRY_SECONDS = 30.0


def _is_lock_error(error: Exception) -> bool:
    return "lock" in str(error).lower()


def connect(path: str | Path, read_only: bool = False, wait_seconds: float = LOCK_RETRY_SECONDS) -> duckdb.DuckDBPyConnection:
    """Open the index, retrying while another process holds the write lock."""
    deadline = time.monotonic() + wait_seconds
    delay = 0.05
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as error:
            if not _is_lock_error(error) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
