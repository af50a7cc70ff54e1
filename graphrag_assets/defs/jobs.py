"""Jobs: read a set of files, then build a corpus's graph (chunking and extraction first).

Their steps run in the executor of the definitions (``defs/build.py``): in one process,
since the DuckDB pool admits one step at a time anyway and a process per step costs
seconds of imports each; with shards on an index that admits several writers, the
multiprocess executor, so that the shards of chunking and extraction run side by side.
A failed step (the index file held too long by another process, an endpoint down) is
retried with backoff (``STEP_RETRIES``, on the graph assets and the source job); a refused
key or model is not (``Failure(allow_retries=False)``, see ``defs/resources.py``)."""

from dagster import (
    AssetSelection,
    Backoff,
    ExecutorDefinition,
    Jitter,
    RetryPolicy,
    define_asset_job,
    in_process_executor,
    multiprocess_executor,
)

# The asset groups (defs/assets/shared.py): a new asset joins its job by its group.
SOURCE_ASSETS = AssetSelection.groups("sources")
GRAPH_ASSETS = AssetSelection.groups("graph")
STEP_RETRIES = RetryPolicy(max_retries=2, delay=10, backoff=Backoff.EXPONENTIAL, jitter=Jitter.PLUS_MINUS)

index_sources_job = define_asset_job(
    "index_sources",
    selection=SOURCE_ASSETS,
    description="Read the selected source files (one run for a range of partitions).",
    op_retry_policy=STEP_RETRIES,
)
build_graph_job = define_asset_job(
    "build_graph",
    selection=GRAPH_ASSETS,
    description="Chunk and extract what is new, then merge, cluster, report and embed one corpus.",
)


def multiprocess_config(parallel_shards: int) -> dict:
    """A process per step, that many at a time, each forked from a server that has imported
    the indexer's definitions once (a fresh interpreter per step would import them again:
    seconds; the code location adds the evaluation's few modules to them)."""
    return {
        "max_concurrent": parallel_shards,
        "start_method": {"forkserver": {"preload_modules": ["graphrag_assets.defs.build"]}},
    }


def executor_for(parallel_shards: int) -> ExecutorDefinition:
    """Steps in one process, or with parallel shards a process per step (``multiprocess_config``)."""
    if parallel_shards <= 1:
        return in_process_executor
    return multiprocess_executor.configured(multiprocess_config(parallel_shards))
