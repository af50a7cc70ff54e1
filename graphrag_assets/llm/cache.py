"""The model's answers by key, and the record of every call, in the index's DuckDB file
(``llm_cache`` and ``llm_calls``, declared in storage/schema.py)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
from dataclasses import dataclass
from typing import NamedTuple

import duckdb

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


class LLMCache:
    """Completions and embeddings by key, and the record of every call (``llm_calls``), in
    the index's DuckDB file. The keys are held in memory (a few MB for a large corpus), so
    a miss, the common case of a first run, costs no query. Rows are committed before
    ``put`` returns, so an answer the caller has seen survives a crash, and the record of
    a paid call is committed with its answer. Records of cache hits wait for the next
    write (or ``flush``): a commit per hit would slow a rerun, and losing them in a crash
    loses no cost."""

    def __init__(self, connection: duckdb.DuckDBPyConnection):
        self.connection = connection
        connection.execute(create_statement(TABLES["llm_cache"]))
        connection.execute(create_statement(TABLES["llm_calls"]))
        self.keys = {row[0] for row in connection.execute("SELECT key FROM llm_cache").fetchall()}
        self._writer = connection.cursor()  # used on the writer thread only
        self._unwritten_calls: list[LLMCall] = []

    def get(self, key: str) -> str | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: list[str]) -> dict[str, str]:
        """The cached values of those keys that are cached, in one query."""
        known = [key for key in dict.fromkeys(keys) if key in self.keys]
        if not known:
            return {}
        rows = self.connection.execute(
            "SELECT key, any_value(value) FROM llm_cache WHERE key IN (SELECT unnest(?)) GROUP BY key", [known]
        ).fetchall()
        return dict(rows)

    def note(self, call: LLMCall) -> None:
        """Record a call answered from the cache, with the next write."""
        self._unwritten_calls.append(call)

    async def put(self, rows: list[CacheRow], calls: list[LLMCall]) -> None:
        """Cache the rows not cached yet and record the calls, in one transaction."""
        fresh = list({row.key: row for row in rows if row.key not in self.keys}.values())
        calls = [*self._take_unwritten(), *calls]
        if not fresh and not calls:
            return
        self.keys.update(row.key for row in fresh)
        await asyncio.get_running_loop().run_in_executor(_CACHE_WRITER, self._insert, fresh, calls)

    def flush(self) -> None:
        """Write the records still waiting."""
        calls = self._take_unwritten()
        if calls:
            _CACHE_WRITER.submit(self._insert, [], calls).result()

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
                self._writer.executemany(
                    "INSERT INTO llm_cache VALUES (?, ?, ?, ?, ?, ?, ?)", [[*row, now] for row in rows]
                )
            if calls:
                self._writer.executemany(
                    f"INSERT INTO llm_calls VALUES ({', '.join('?' * len(LLMCall._fields))})", calls
                )
        except BaseException:
            self._writer.execute("ROLLBACK")
            raise
        self._writer.execute("COMMIT")
