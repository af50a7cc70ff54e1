"""The record of query-time LLM calls: JSON lines appended to a file beside the index.

A query reads a read-only snapshot and must never block the indexer, nor be blocked by
it or by a SQL user: a DuckDB file would be held by whoever has it open. Appending to a
text file needs only a short lock among query processes, and the snapshot's view
``query_llm_calls`` reads the file as it is when queried. A call that cannot be recorded
(the file held too long, a read-only disk) never fails the query: a warning says so.
"""

from __future__ import annotations

import fcntl
import json
import time
import warnings
from pathlib import Path

from graphrag_assets.llm.cache import LLMCall
from graphrag_assets.storage.snapshot import query_calls_path

LOCK_WAIT_SECONDS = 2.0


def call_lines(calls: list[LLMCall], corpus: str, stage: str) -> bytes:
    """The calls as JSON lines, made for ``corpus`` in ``stage`` (the query mode)."""
    rows = (
        call._replace(corpus=corpus, stage=stage)._asdict() | {"called_at": call.called_at.isoformat()}
        for call in calls
    )
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()


class QueryCallLog:
    """Where the queries of one corpus of an index record their calls."""

    def __init__(self, database: str | Path, corpus: str):
        self.path = query_calls_path(database)
        self.corpus = corpus

    def append(self, calls: list[LLMCall], stage: str) -> None:
        if not calls:
            return
        try:
            with open(self.path, "a+b") as log:
                _lock(log)
                # A line cut off by a killed writer is ended first, so it spoils only itself.
                log.seek(0, 2)
                if log.tell() and (log.seek(-1, 2), log.read(1))[1] != b"\n":
                    log.write(b"\n")
                log.write(call_lines(calls, self.corpus, stage))
        except OSError as error:
            warnings.warn(
                f"{len(calls)} LLM call(s) of this query not recorded in {self.path}: {error}",
                RuntimeWarning,
                stacklevel=2,
            )


def _lock(log) -> None:
    """An exclusive lock on the open file (released when it closes), waiting at most
    LOCK_WAIT_SECONDS for another query process appending."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(log, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise BlockingIOError(f"held by another process for more than {LOCK_WAIT_SECONDS:.0f} s") from None
            time.sleep(0.01)
