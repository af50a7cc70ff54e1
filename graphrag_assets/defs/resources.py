"""Dagster resources: the index's DuckDB file, and the LLM and embedding endpoints.

The endpoints read GRAPHRAG_LLM_* / GRAPHRAG_EMBEDDING_* from the environment when a step
runs, instead of holding them as config fields: Dagster stores resource config with each
run (visible in the UI), and an API key must never be stored or shown anywhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
from dagster import ConfigurableResource, Failure
from dagster_duckdb import DuckDBResource
from pydantic import Field

from ..llm.cache import CallSite
from ..llm.errors import EndpointRefused
from ..llm.session import LLMSession
from ..llm.settings import LLMSettings
from ..storage.duckdb_store import IndexStore
from ..storage.location import IndexLocation, index_location


class IndexDatabase(DuckDBResource):
    """The index's DuckDB file (GRAPHRAG_DB), or its DuckLake, as Dagster's DuckDB resource: configured once
    (``build_definitions``), shown with its path among the UI's resources, and the one way
    a step opens the file. Its connection waits while another process holds the file,
    saying who (storage/connection.py; dagster-duckdb's retries ten times then fails), and
    is closed when the step ends, failed or not. Steps write through ``store()``, the one
    write path (storage/duckdb_store.py), on that connection."""

    ducklake_catalog: str = Field(
        default="", description="GRAPHRAG_DUCKLAKE_CATALOG: the DuckLake catalog holding the tables (empty: the file)"
    )
    ducklake_data_path: str = Field(default="", description="GRAPHRAG_DUCKLAKE_DATA_PATH: the DuckLake's data files")

    @property
    def location(self) -> IndexLocation:
        return index_location(self.database, self.ducklake_catalog, self.ducklake_data_path)

    @contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        location = self.location
        if location.lake is None:
            Path(self.database).parent.mkdir(parents=True, exist_ok=True)
        connection = location.connect(config=self.connection_config)
        try:
            yield connection
        finally:
            connection.close()

    @contextmanager
    def store(self) -> Iterator[IndexStore]:
        """The index store on one connection, for the length of a step."""
        with self.get_connection() as connection:
            yield IndexStore.over(self.location, connection)


class EndpointResource(ConfigurableResource):
    """Settings read from the environment when a step runs (never stored in run config)."""

    def get_settings(self) -> LLMSettings:
        return LLMSettings.from_env()

    @contextmanager
    def session(self, store: IndexStore, corpus: str, run_id: str) -> Iterator[LLMSession]:
        """The endpoint for one step of a Dagster run on a corpus, caching and recording its
        calls in the step's open index store."""
        with LLMSession(self.get_settings(), store.open_connection, CallSite(corpus, run_id)) as session:
            try:
                yield session
            except Exception as error:
                # The calls the step made, failed ones too, stay countable (the run's summary)
                # on its failure. Wrong settings: retrying the step (the jobs' retry policy)
                # cannot help.
                raise Failure(
                    description=str(error),
                    allow_retries=not isinstance(error, EndpointRefused),
                    metadata=session.usage.metadata(),
                ) from error


class LLMResource(EndpointResource):
    """Completions (extraction, summaries, reports). Offline methods run when no model is
    configured (GRAPHRAG_LLM_MODEL unset)."""


class EmbeddingResource(EndpointResource):
    """Embeddings through the endpoint when GRAPHRAG_EMBEDDING_MODEL is set; otherwise the
    offline embedder chosen by GRAPHRAG_EMBEDDER."""
