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
