"""Query a GraphRAG index built by graphrag_assets: global, local, DRIFT and basic search.

    from graphrag_query import search
    result = search("What are the main themes?", database="data/graphrag.duckdb")
    print(result.method, result.route_reason)
    print(result.answer)
    result.context["reports"]  # the context actually used, as Polars frames

Imports no Dagster. Reads the published snapshot of the index, so it works while the
indexer writes.
"""

from .api import PUBLIC_SEARCHES, asearch, search, search_stream
from .reader import IndexNotFound, IndexReader
from .result import Citation, SearchResult, Usage

# ``global_search``, ``local_search``, ...: one per registered mode (``modes.MODES``).
globals().update(PUBLIC_SEARCHES)

__all__ = [
    "Citation",
    "IndexNotFound",
    "IndexReader",
    "SearchResult",
    "Usage",
    "asearch",
    "search",
    "search_stream",
    *PUBLIC_SEARCHES,
]
