"""Jobs: read a set of files, then build a corpus's graph (chunking and extraction first)."""

from dagster import AssetSelection, define_asset_job

SOURCE_ASSETS = AssetSelection.assets("documents")
GRAPH_ASSETS = AssetSelection.assets(
    "text_units", "extractions", "entities", "relationships", "communities", "community_reports", "embeddings", "published_index"
)

index_sources_job = define_asset_job(
    "index_sources",
    selection=SOURCE_ASSETS,
    description="Read the selected source files (one run for a range of partitions).",
)
build_graph_job = define_asset_job(
    "build_graph",
    selection=GRAPH_ASSETS,
    description="Chunk and extract what is new, then merge, cluster, report and embed one corpus.",
)
