"""GraphRAG indexing as a partitioned Dagster asset graph stored in DuckDB.

Layout:
- ``core``: the functional core. Plain functions over Polars frames (reading inputs,
  chunking, offline extraction, graph merging, Leiden, reports, embeddings). No Dagster.
- ``storage``: the one owned write path to DuckDB and the LanceDB vector tables.
- ``defs``: the thin Dagster shell (partitions, resources, assets, checks, jobs).
- ``cli``: ``graphrag-index``, the same assets run headless against DAGSTER_HOME.
"""
