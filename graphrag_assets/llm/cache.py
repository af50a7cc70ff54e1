"""The model's answers by key, and the record of every call, in the index's DuckDB file
(``llm_cache`` and ``llm_calls``, declared in storage/schema.py)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
import threading
from dataclasses import dataclass
from typing import NamedTuple

import duckdb
import polars as pl

from ..storage.connection import same_catalog
from ..storage.schema import TABLES, create_statement
from .prices import ModelPrice, call_cost_usd


class CacheRow(NamedTuple):
    key: str
    stage: str
    model: str
    value: str
    prompt_tokens: int
    completion_tokens: int


class LLMCall(NamedTuple):
    """One call as ``llm_calls`` records it (storage/schema.py describes the columns)."""

    called_at: dt.datetime
    corpus: str | None
    stage: str
    run_id: str | None
    model: str
    cached: bool
    prompt_tokens: int
    completion_tokens: int
    price_input_per_million: float
    price_output_per_million: float
    cost_usd: float


@dataclass(frozen=True)
class CallSite:
    """What the client's calls are made for, which the client cannot know itself."""

    corpus: str | None = None
    run_id: str | None = None  # the Dagster run, when there is one


def call_record(
    site: CallSite, stage: str, model: str, price: ModelPrice, prompt_tokens: int, completion_tokens: int, cached: bool
) -> LLMCall:
    cost = 0.0 if cached else call_cost_usd(prompt_tokens, completion_tokens, price)
    return LLMCall(
        dt.datetime.now(dt.UTC),
        site.corpus,
        stage,
        site.run_id,
        model,
        cached,
        prompt_tokens,
        completion_tokens,
        *price,
        cost,
    )


# One thread writes every cache row: a commit waits on the disk for milliseconds, which on
# the event loop's thread would hold up every call in flight.
_CACHE_WRITER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="llm-cache-writer")
# From this many rows a batch goes to DuckDB as a Polars frame (one columnar insert) rather
# than row by row: each value of a row-wise insert costs DuckDB a failed `import pandas`.
_FRAME_ROWS = 4


class _Batch:
    """Rows and call records waiting for the next commit, and the future that commit resolves."""

    def __init__(self) -> None:
        self.rows: list[CacheRow] = []
        self.calls: list[LLMCall] = []
        self.done: concurrent.futures.Future = concurrent.futures.Future()


class LLMCache:
    """Completions and embeddings by key, and the record of every call (``llm_calls``), in
    the index's DuckDB file. The keys are held in memory (a few MB for a large corpus), so
    a miss, the common case of a first run, costs no query.

    Writes are group commits: ``put`` returns once its rows are committed, so an answer
    the caller has seen survives a crash (a killed run pays only for what was missing),
    and the record of a paid call is committed with its answer. Rows that arrive while a
    commit is running wait for it and go together in the next one, so with 64 calls in
    flight one commit serves many answers, and there is no timer: a lone answer is
    committed at once. Records of cache hits wait for the next write (or ``flush``): a
    commit per hit would slow a rerun, and losing them in a crash loses no cost."""

    def __init__(self, connection: duckdb.DuckDBPyConnection):
        self.connection = connection
        connection.execute(create_statement(TABLES["llm_cache"]))
        connection.execute(create_statement(TABLES["llm_calls"]))
        self.keys = {row[0] for row in connection.execute("SELECT key FROM llm_cache").fetchall()}
        self._writer = same_catalog(connection)  # used on the writer thread only
        self._unwritten_calls: list[LLMCall] = []
        self._lock = threading.Lock()
        self._batch = _Batch()  # guarded by _lock, like _writing
        self._writing = False  # a commit is queued or running on the writer thread
        self._unsaved: dict[str, str] = {}  # key -> value handed to put and not committed yet

    def get(self, key: str) -> str | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: list[str]) -> dict[str, str]:
        """The cached values of those keys that are cached, in one query."""
        known = [key for key in dict.fromkeys(keys) if key in self.keys]
        if not known:
            return {}
        found = {key: self._unsaved[key] for key in known if key in self._unsaved}
        rest = [key for key in known if key not in found]
        if rest:
            rows = self.connection.execute(
                "SELECT key, any_value(value) FROM llm_cache WHERE key IN (SELECT unnest(?)) GROUP BY key", [rest]
            ).fetchall()
            found.update(rows)
        return found

    def note(self, call: LLMCall) -> None:
        """Record a call answered from the cache, with the next write."""
        self._unwritten_calls.append(call)

    async def put(self, rows: list[CacheRow], calls: list[LLMCall]) -> None:
        """Cache the rows not cached yet and record the calls; returns once they are committed."""
        fresh = list({row.key: row for row in rows if row.key not in self.keys}.values())
        calls = [*self._take_unwritten(), *calls]
        if not fresh and not calls:
            return
        self.keys.update(row.key for row in fresh)
        self._unsaved.update((row.key, row.value) for row in fresh)
        # Shielded: the commit serves every put of its batch. Unshielded, a caller cancelled
        # while it waits (its step stopped by a refusal) would cancel the shared future; the
        # writer could then not resolve it, and every later row and ``close`` would wait forever.
        await asyncio.shield(asyncio.wrap_future(self._submit(fresh, calls)))

    def flush(self) -> None:
        """Write the records still waiting, and wait for every write queued so far."""
        self._submit([], self._take_unwritten()).result()

    def take_calls(self) -> list[LLMCall]:
        """The calls recorded so far, removed from the cache's table: for an in-memory
        cache (queries), whose calls are logged elsewhere."""
        self.flush()
        return _CACHE_WRITER.submit(self._take_recorded).result()

    def close(self) -> None:
        self.flush()
        self._writer.close()

    def _take_unwritten(self) -> list[LLMCall]:
        calls, self._unwritten_calls = self._unwritten_calls, []
        return calls

    def _submit(self, rows: list[CacheRow], calls: list[LLMCall]) -> concurrent.futures.Future:
        """Add to the next commit, starting one unless one is queued or running (whose end
        starts the next): the future of the commit that will hold these rows."""
        with self._lock:
            batch = self._batch
            batch.rows += rows
            batch.calls += calls
            if not self._writing:
                self._writing = True
                _CACHE_WRITER.submit(self._commit_pending)
        return batch.done

    def _commit_pending(self) -> None:
        """On the writer thread: commit what is waiting, then whatever came meanwhile."""
        while True:
            with self._lock:
                batch, self._batch = self._batch, _Batch()
                if not batch.rows and not batch.calls:
                    self._writing = False
                    batch.done.set_result(None)
                    return
            try:
                self._insert(batch.rows, batch.calls)
            except BaseException as error:
                for row in batch.rows:  # not cached after all: a later call asks again
                    self.keys.discard(row.key)
                    self._unsaved.pop(row.key, None)
                batch.done.set_exception(error)
                continue
            for row in batch.rows:
                self._unsaved.pop(row.key, None)
            batch.done.set_result(None)

    def _take_recorded(self) -> list[LLMCall]:
        self._writer.execute("BEGIN TRANSACTION")
        calls = [LLMCall(*row) for row in self._writer.execute("SELECT * FROM llm_calls ORDER BY called_at").fetchall()]
        self._writer.execute("DELETE FROM llm_calls")
        self._writer.execute("COMMIT")
        return calls

    def _insert(self, rows: list[CacheRow], calls: list[LLMCall]) -> None:
        now = dt.datetime.now(dt.UTC)
        self._writer.execute("BEGIN TRANSACTION")
        try:
            if rows:
                self._insert_rows("llm_cache", [(*row, now) for row in rows])
            if calls:
                self._insert_rows("llm_calls", calls)
        except BaseException:
            self._writer.execute("ROLLBACK")
            raise
        self._writer.execute("COMMIT")

    def _insert_rows(self, table: str, rows: list[tuple]) -> None:
        if len(rows) < _FRAME_ROWS:
            columns = len(TABLES[table].columns)
            self._writer.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * columns)})", rows)
            return
        frame = pl.DataFrame(rows, schema=TABLES[table].columns, orient="row")
        self._writer.register("pending_rows", frame)
        try:
            self._writer.execute(f"INSERT INTO {table} SELECT * FROM pending_rows")
        finally:
            self._writer.unregister("pending_rows")
