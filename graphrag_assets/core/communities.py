"""Hierarchical Leiden communities (graspologic-native, the engine graphrag uses).

Level 0 is the coarsest partition; a community larger than ``max_cluster_size`` is split
again on the next level. Every level is kept, with parent/children links, the
relationships inside each community and the text units those relationships come from.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

import graspologic_native as gn
import polars as pl

from .ids import stable_id

COMMUNITY_COLUMNS = {
    "id": pl.String,
    "human_readable_id": pl.Int64,
    "community": pl.Int64,
    "level": pl.Int64,
    "parent": pl.Int64,
    "children": pl.List(pl.Int64),
    "title": pl.String,
    "entity_ids": pl.List(pl.String),
    "relationship_ids": pl.List(pl.String),
    "text_unit_ids": pl.List(pl.String),
    "period": pl.String,
    "size": pl.Int64,
    "corpus": pl.String,
}


@dataclass(frozen=True)
class CommunitySettings:
    max_cluster_size: int = 10
    seed: int = 0xDEADBEEF
    use_lcc: bool = False  # cluster only the largest connected component (graphrag's option)
    exclude_ego_node: bool = True

    def __post_init__(self):
        if self.max_cluster_size < 2:
            raise ValueError(f"max_cluster_size must be >= 2 (GRAPHRAG_MAX_CLUSTER_SIZE), got {self.max_cluster_size}")


def ego_node(relationships: pl.DataFrame) -> str | None:
    """The best-connected entity id (ties by id). It touches nearly every topic, so
    clustering with it folds everything into one community; graphrag prunes it from the
    graph. We keep it in the entity table (a question about it must still find it) and
    only leave it out of clustering."""
    if relationships.is_empty():
        return None
    ends = pl.concat([relationships.select(pl.col("source_id").alias("node")), relationships.select(pl.col("target_id").alias("node"))])
    counts = ends.group_by("node").len().sort(["len", "node"], descending=[True, False])
    return counts["node"][0]


def _largest_component(edges: list[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    import networkx as nx

    graph = nx.Graph()
    graph.add_weighted_edges_from(edges)
    largest = max(nx.connected_components(graph), key=len)
    return [edge for edge in edges if edge[0] in largest]


def detect_communities(
    relationships: pl.DataFrame,
    corpus: str,
    settings: CommunitySettings = CommunitySettings(),
    period: str | None = None,
) -> pl.DataFrame:
    """Communities of all levels from ``relationships`` (needs id, source_id, target_id,
    weight, text_unit_ids). Deterministic for the same graph and seed."""
    period = period or dt.date.today().isoformat()
    excluded = ego_node(relationships) if settings.exclude_ego_node else None
    clustered = relationships
    if excluded is not None:
        clustered = relationships.filter((pl.col("source_id") != excluded) & (pl.col("target_id") != excluded))
    # Sorted input: graspologic-native's result depends on edge order, not only on the seed.
    edges = sorted(zip(clustered["source_id"], clustered["target_id"], clustered["weight"].cast(pl.Float64)))
    if settings.use_lcc and edges:
        edges = _largest_component(edges)
    if not edges:
        return pl.DataFrame(schema=COMMUNITY_COLUMNS)
    clusters = gn.hierarchical_leiden(edges, max_cluster_size=settings.max_cluster_size, seed=settings.seed)

    members: dict[tuple[int, int], list[str]] = defaultdict(list)
    parent_of: dict[int, int] = {}
    for item in clusters:
        members[(item.level, item.cluster)].append(item.node)
        parent_of[item.cluster] = item.parent_cluster if item.parent_cluster is not None else -1
    children: dict[int, list[int]] = defaultdict(list)
    for level, cluster in members:
        if parent_of[cluster] != -1:
            children[parent_of[cluster]].append(cluster)

    # Relationships inside each community: both endpoints among its members (a join, not a
    # scan of every relationship per community).
    membership = pl.DataFrame(
        [(level, cluster, node) for (level, cluster), nodes in members.items() for node in nodes],
        schema={"level": pl.Int64, "community": pl.Int64, "entity_id": pl.String},
        orient="row",
    )
    internal = (
        relationships.select("id", "source_id", "target_id", "text_unit_ids")
        .join(membership.rename({"entity_id": "source_id"}), on="source_id")
        .join(membership.rename({"entity_id": "target_id"}), on=["target_id", "level", "community"])
        .group_by("level", "community")
        .agg(
            pl.col("id").sort().alias("relationship_ids"),
            pl.col("text_unit_ids").explode().drop_nulls().unique().sort().alias("text_unit_ids"),
        )
    )
    inside_of = {(row["level"], row["community"]): row for row in internal.iter_rows(named=True)}
    rows = []
    for (level, cluster), entity_ids in sorted(members.items()):
        links = inside_of.get((level, cluster), {"relationship_ids": [], "text_unit_ids": []})
        rows.append(
            {
                "id": stable_id(corpus, "community", level, *sorted(entity_ids)),
                "human_readable_id": cluster,
                "community": cluster,
                "level": level,
                "parent": parent_of[cluster],
                "children": sorted(children.get(cluster, [])),
                "title": f"Community {cluster}",
                "entity_ids": sorted(entity_ids),
                "relationship_ids": links["relationship_ids"],
                "text_unit_ids": links["text_unit_ids"],
                "period": period,
                "size": len(entity_ids),
                "corpus": corpus,
            }
        )
    return pl.DataFrame(rows, schema=COMMUNITY_COLUMNS)


def stabilize_numbers(new: pl.DataFrame, old: pl.DataFrame, min_overlap: float = 0.5) -> pl.DataFrame:
    """Renumber ``new`` communities so that each keeps the number of the old community of
    the same level it overlaps most (Jaccard of members >= ``min_overlap``, best pairs
    first). Leiden's numbering shifts when the graph changes; this keeps a community that
    barely changed recognisable (same ``community`` number, so its report, links and
    history line up). Unmatched communities get numbers no old community used."""
    if new.is_empty() or old.is_empty():
        return new
    candidates = []
    old_rows = list(old.iter_rows(named=True))
    for row in new.iter_rows(named=True):
        members = set(row["entity_ids"])
        for previous in old_rows:
            if previous["level"] != row["level"]:
                continue
            shared = len(members & set(previous["entity_ids"]))
            if shared:
                overlap = shared / len(members | set(previous["entity_ids"]))
                if overlap >= min_overlap:
                    candidates.append((-overlap, row["community"], previous["community"]))
    mapping: dict[int, int] = {}
    taken: set[int] = set()
    for _, new_number, old_number in sorted(candidates):
        if new_number not in mapping and old_number not in taken:
            mapping[new_number] = old_number
            taken.add(old_number)
    fresh = max(old["community"].max(), new["community"].max()) + 1
    for number in sorted(new["community"].to_list()):
        if number not in mapping:
            mapping[number] = fresh
            fresh += 1
    remap = lambda value: mapping.get(value, value)  # noqa: E731  (parent -1 stays -1)
    return new.with_columns(
        pl.col("community").replace_strict(mapping, return_dtype=pl.Int64),
        pl.col("human_readable_id").replace_strict(mapping, return_dtype=pl.Int64),
        pl.col("parent").map_elements(remap, return_dtype=pl.Int64),
        pl.col("children").map_elements(lambda cs: sorted(remap(c) for c in cs), return_dtype=pl.List(pl.Int64)),
        pl.col("community").replace_strict(mapping, return_dtype=pl.Int64).map_elements(lambda n: f"Community {n}", return_dtype=pl.String).alias("title"),
    ).sort("level", "community")
