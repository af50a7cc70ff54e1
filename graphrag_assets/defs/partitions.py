"""How the asset graph is partitioned (see docs/architecture.md).

- ``sources``: one dynamic partition per input file, keyed ``<corpus>/<path>``: reading,
  chunking and extraction are per file, so one changed file re-runs only its partition.
- ``corpora``: one dynamic partition per corpus: entities, relationships, communities,
  reports and embeddings are graph-wide, so their unit of work is the whole corpus.
"""

from dagster import DynamicPartitionsDefinition

source_partitions = DynamicPartitionsDefinition(name="sources")
corpus_partitions = DynamicPartitionsDefinition(name="corpora")

# Every asset that opens the DuckDB file runs in this pool; dagster_home/dagster.yaml gives
# pools one slot, because DuckDB admits a single writer process.
DUCKDB_POOL = "graphrag_duckdb"
