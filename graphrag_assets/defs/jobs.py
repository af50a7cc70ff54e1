"""Jobs: index the sources of a set of files, then build a corpus's graph."""

from dagster import AssetSelection, define_asset_job

SOURCE_ASSETS = AssetSelection.assets("documents", "text_units", "extractions")
GRAPH_ASSETS = AssetSelection.assets(
    "entities", "relationships", "communities", "community_reports", "embeddings", "published_index"
)

index_sources_job = define_asset_job(
    "index_sources",
    selection=SOURCE_ASSETS,
    description="Read, chunk and extract the selected source files (one run for a range of partitions).",
)
build_graph_job = define_asset_job(
    "build_graph",
    selection=GRAPH_ASSETS,
    description="Merge, cluster, report and embed one corpus.",
)
