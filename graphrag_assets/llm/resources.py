"""Dagster resources for the LLM and embedding endpoints.

They read GRAPHRAG_LLM_* / GRAPHRAG_EMBEDDING_* from the environment when a step runs,
instead of holding them as config fields: Dagster stores resource config with each run
(visible in the UI), and an API key must never be stored or shown anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import duckdb
import numpy as np
from dagster import ConfigurableResource, Failure

from ..core.embedding import Embedder
from ..storage.duckdb_store import IndexStore
from .client import CallSite, EndpointRefused, LLMCache, LLMClient, Usage, run_with
from .settings import LLMSettings


class LLMSession:
    """One step's use of the LLM: a cache connection, usage counters, a client factory
    (a fresh client per event loop, sharing cache and counters, its calls recorded for
    ``site``)."""

    def __init__(self, settings: LLMSettings, connection: duckdb.DuckDBPyConnection, site: CallSite):
        self.settings = settings
        self.cache = LLMCache(connection)
        self.usage = Usage()
        self.site = site

    def client(self) -> LLMClient:
        return LLMClient(self.settings, self.cache, self.usage, self.site)

    def __enter__(self) -> LLMSession:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        self.cache.close()
        if isinstance(error, EndpointRefused):
            # Wrong settings: retrying the step (the jobs' retry policy) cannot help.
            raise Failure(description=str(error), allow_retries=False) from error


class OpenAIEmbedder:
    """An ``Embedder`` over the configured embeddings endpoint (batched, cached)."""

    def __init__(self, session: LLMSession):
        self.session = session
        self.name = session.settings.embedding_model or ""
        self.dimensions = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        vectors = run_with(self.session.client, lambda client: client.embed(texts))
        self.dimensions = vectors.shape[1] if vectors.size else self.dimensions
        return vectors


class EndpointResource(ConfigurableResource):
    """Settings read from the environment when a step runs (never stored in run config)."""

    def get_settings(self) -> LLMSettings:
        return LLMSettings.from_env()

    def session(self, store: IndexStore, corpus: str, run_id: str) -> LLMSession:
        """The endpoint for one step of a Dagster run on a corpus, caching and recording its
        calls in the step's open index store."""
        return LLMSession(self.get_settings(), store.open_connection, CallSite(corpus, run_id))


@contextmanager
def chosen_embedder(
    endpoint: LLMSettings, offline: Callable[[], Embedder], open_session: Callable[[], LLMSession]
) -> Iterator[tuple[Embedder, Usage | None]]:
    """The embedder of every writer of embeddings (the embeddings step, graphrag-import):
    the endpoint's model when GRAPHRAG_EMBEDDING_MODEL is set, its calls cached and recorded
    by the session, else the offline one (GRAPHRAG_EMBEDDER). With the endpoint's usage;
    None offline."""
    if not endpoint.embeddings_enabled:
        yield offline(), None
        return
    with open_session() as session:
        yield OpenAIEmbedder(session), session.usage


class LLMResource(EndpointResource):
    """Completions (extraction, summaries, reports). Offline methods run when no model is
    configured (GRAPHRAG_LLM_MODEL unset)."""


class EmbeddingResource(EndpointResource):
    """Embeddings through the endpoint when GRAPHRAG_EMBEDDING_MODEL is set; otherwise the
    offline embedder chosen by GRAPHRAG_EMBEDDER."""
