"""How the asset graph is partitioned (see docs/architecture.md).

- ``sources``: one dynamic partition per input file, keyed ``<corpus>/<path>``: reading is
  per file (and where files fail), so one changed file is read again alone.
- ``corpora``: one dynamic partition per corpus: chunking and extraction of what was read
  since the last build, then entities, relationships, communities, reports and
  embeddings, graph-wide, so their unit of work is the whole corpus.
"""

from dagster import AllPartitionMapping, DynamicPartitionsDefinition

source_partitions = DynamicPartitionsDefinition(name="sources")
corpus_partitions = DynamicPartitionsDefinition(name="corpora")
# A corpus depends on every source partition (Dagster has no key-prefix mapping); the corpus
# assets read only their corpus's rows.
ALL_SOURCES = AllPartitionMapping()

# Every asset that opens the DuckDB file runs in this pool; dagster_home/dagster.yaml gives
# pools one slot, because DuckDB admits a single writer process.
DUCKDB_POOL = "graphrag_duckdb"

# Dagster stores partition ranges for single-run backfills in these run tags.
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


def contiguous_ranges(ordered_keys: list[str], wanted: set[str]) -> list[tuple[str, str]]:
    """Runs of consecutive wanted keys in partition order: one Dagster run per range."""
    ranges, start, previous = [], None, None
    for key in ordered_keys:
        if key in wanted:
            start = start or key
            previous = key
        elif start is not None:
            ranges.append((start, previous))
            start = None
    if start is not None:
        ranges.append((start, previous))
    return ranges
