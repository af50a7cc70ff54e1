"""Jobs: read a set of files, then build a corpus's graph (chunking and extraction first).

Both run their steps in one process (so do runs from the UI and automation: the
definitions' executor): the DuckDB pool admits one step at a time anyway, and a process
per step costs seconds of imports each. A failed step (the index file held too long by
another process, an endpoint down) is retried with backoff (``STEP_RETRIES``, on the graph
assets and the source job); a refused key or model is not (``Failure(allow_retries=False)``,
see ``defs/resources.py``)."""

from dagster import AssetSelection, Backoff, Jitter, RetryPolicy, define_asset_job, in_process_executor

# The asset groups (defs/assets/shared.py): a new asset joins its job by its group.
SOURCE_ASSETS = AssetSelection.groups("sources")
GRAPH_ASSETS = AssetSelection.groups("graph")
STEP_RETRIES = RetryPolicy(max_retries=2, delay=10, backoff=Backoff.EXPONENTIAL, jitter=Jitter.PLUS_MINUS)

index_sources_job = define_asset_job(
    "index_sources",
    selection=SOURCE_ASSETS,
    description="Read the selected source files (one run for a range of partitions).",
    executor_def=in_process_executor,
    op_retry_policy=STEP_RETRIES,
)
build_graph_job = define_asset_job(
    "build_graph",
    selection=GRAPH_ASSETS,
    description="Chunk and extract what is new, then merge, cluster, report and embed one corpus.",
    executor_def=in_process_executor,
)
