"""One unit of work's use of the endpoints: the cache connection, the usage counters and
the client factory the LLM stages take, and the choice between the endpoint's embedder
and the offline one. No Dagster here: the steps reach it through defs/resources.py,
graphrag-import directly."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

import duckdb
import numpy as np

from ..core.embedding import Embedder
from .cache import CallSite, LLMCache
from .client import LLMClient, run_with
from .settings import LLMSettings
from .usage import UsageByStage


class LLMSession:
    """One step's use of the LLM: a cache connection, usage counters, a client factory
    (a fresh client per event loop, sharing cache and counters, its calls recorded for
    ``site``)."""

    def __init__(self, settings: LLMSettings, connection: duckdb.DuckDBPyConnection, site: CallSite):
        self.settings = settings
        self.cache = LLMCache(connection)
        self.usage = UsageByStage()
        self.site = site

    def client(self) -> LLMClient:
        return LLMClient(self.settings, self.cache, self.usage, self.site)

    def __enter__(self) -> LLMSession:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        self.cache.close()


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


@contextmanager
def chosen_embedder(
    endpoint: LLMSettings,
    offline: Callable[[], Embedder],
    open_session: Callable[[], AbstractContextManager[LLMSession]],
) -> Iterator[tuple[Embedder, UsageByStage | None]]:
    """The embedder of every writer of embeddings (the embeddings step, graphrag-import):
    the endpoint's model when GRAPHRAG_EMBEDDING_MODEL is set, its calls cached and recorded
    by the session, else the offline one (GRAPHRAG_EMBEDDER). With the endpoint's usage;
    None offline."""
    if not endpoint.embeddings_enabled:
        yield offline(), None
        return
    with open_session() as session:
        yield OpenAIEmbedder(session), session.usage
