"""Hierarchical Leiden communities (graspologic-native, the engine graphrag uses).

Level 0 is the coarsest partition; a community larger than ``max_cluster_size`` is split
again on the next level. Every level is kept, with parent/children links, the
relationships inside each community and the text units those relationships come from.

The clustering is a function of the graph alone (so an incremental update reaches the same
communities as a full rebuild) and is made *canonical* rather than merely seeded:

- each partition is the best of ``trials`` Leiden runs by modularity. A single run lands
  in one of many near-optimal partitions, and which one depends on every node through the
  shared random sequence, so adding three nodes reshuffled half the communities of a
  podcast graph; the best of 100 runs is the same partition whatever the seed, and a small
  change of the graph moves only the communities around it;
- a community too big for ``max_cluster_size`` is split by clustering its own subgraph,
  so its sub-communities depend on its members and their links only, not on the rest of
  the graph (graspologic's hierarchical_leiden threads one random state through all of
  them).
"""

from __future__ import annotations

import datetime as dt
import os
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import graspologic_native as gn
import polars as pl

from graphrag_common.ids import stable_id

from ..configuration import check, default_of

# The columns that place a community in the hierarchy: its report's rows begin with them too.
HIERARCHY_COLUMNS = {
    "id": pl.String,
    "human_readable_id": pl.Int64,
    "community": pl.Int64,
    "level": pl.Int64,
    "parent": pl.Int64,
    "children": pl.List(pl.Int64),
    "title": pl.String,
}
COMMUNITY_COLUMNS = {
    **HIERARCHY_COLUMNS,
    "entity_ids": pl.List(pl.String),
    "relationship_ids": pl.List(pl.String),
    "text_unit_ids": pl.List(pl.String),
    "period": pl.String,
    "size": pl.Int64,
    "corpus": pl.String,
}


@dataclass(frozen=True)
class CommunitySettings:
    max_cluster_size: int = default_of("GRAPHRAG_MAX_CLUSTER_SIZE")
    leiden_seed: int = default_of("GRAPHRAG_LEIDEN_SEED")
    # Leiden runs per partition, best modularity kept (see module docstring).
    leiden_trials: int = default_of("GRAPHRAG_LEIDEN_TRIALS")
    leiden_iterations: int = default_of("GRAPHRAG_LEIDEN_ITERATIONS")  # Leiden cycles per run
    use_lcc: bool = False  # cluster only the largest connected component (graphrag's option)
    exclude_ego_node: bool = True

    def __post_init__(self):
        check("GRAPHRAG_MAX_CLUSTER_SIZE", self.max_cluster_size)
        check("GRAPHRAG_LEIDEN_TRIALS", self.leiden_trials)
        check("GRAPHRAG_LEIDEN_ITERATIONS", self.leiden_iterations)


def ego_node(relationships: pl.DataFrame) -> str | None:
    """The best-connected entity id (ties by id). It touches nearly every topic, so
    clustering with it folds everything into one community; graphrag prunes it from the
    graph. We keep it in the entity table (a question about it must still find it) and
    only leave it out of clustering."""
    if relationships.is_empty():
        return None
    ends = pl.concat(
        [
            relationships.select(pl.col("source_id").alias("node")),
            relationships.select(pl.col("target_id").alias("node")),
        ]
    )
    counts = ends.group_by("node").len().sort(["len", "node"], descending=[True, False])
    return counts["node"][0]


def _largest_component(edges: list[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    import networkx as nx

    graph = nx.Graph()
    graph.add_weighted_edges_from(edges)
    largest = max(nx.connected_components(graph), key=len)
    return [edge for edge in edges if edge[0] in largest]


def _partition(edges: list[tuple[str, str, float]], settings: CommunitySettings) -> list[list[str]]:
    """The best of ``settings.leiden_trials`` Leiden partitions, as sorted member lists ordered by
    their first member (numbering that depends on the groups, not on Leiden's labels)."""
    _, membership = gn.leiden(
        edges, seed=settings.leiden_seed, trials=settings.leiden_trials, iterations=settings.leiden_iterations
    )
    groups: dict[int, list[str]] = defaultdict(list)
    for node, label in membership.items():
        groups[label].append(node)
    return sorted((sorted(group) for group in groups.values()), key=lambda group: group[0])


def _hierarchy(
    edges: list[tuple[str, str, float]], settings: CommunitySettings
) -> tuple[dict[tuple[int, int], list[str]], dict[int, int]]:
    """((level, cluster) -> members, cluster -> parent cluster or -1). Level 0 partitions
    the whole graph; each community above the size limit is split by partitioning its own
    subgraph, level after level, until every community fits or cannot be split."""
    members: dict[tuple[int, int], list[str]] = {}
    parent_of: dict[int, int] = {}
    pending = [(0, -1, edges)]  # (level, parent cluster, edges of the subgraph to partition)
    # The subgraphs waiting are independent: they are partitioned side by side (Leiden runs
    # in Rust and lets other threads run), then numbered in the order they were queued, so
    # the result is the same as one at a time.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        while pending:
            wave, pending = pending, []
            for (level, parent, subgraph), groups in zip(
                wave, pool.map(lambda item: _partition(item[2], settings), wave)
            ):
                if parent != -1 and len(groups) < 2:
                    continue  # the parent cannot be split further: it stays a leaf
                group_of: dict[str, int] = {}
                numbers = []
                for group in groups:
                    cluster = len(parent_of)
                    parent_of[cluster] = parent
                    members[(level, cluster)] = group
                    numbers.append(cluster)
                    group_of.update((node, cluster) for node in group)
                inside: dict[int, list[tuple[str, str, float]]] = defaultdict(list)
                for edge in subgraph:
                    if group_of[edge[0]] == group_of[edge[1]]:
                        inside[group_of[edge[0]]].append(edge)
                pending.extend(
                    (level + 1, cluster, inside[cluster])
                    for cluster, group in zip(numbers, groups)
                    if len(group) > settings.max_cluster_size and inside[cluster]
                )
    return members, parent_of


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
    members, parent_of = _hierarchy(edges, settings)
    children: dict[int, list[int]] = defaultdict(list)
    for _level, cluster in members:
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
        pl.col("community")
        .replace_strict(mapping, return_dtype=pl.Int64)
        .map_elements(lambda n: f"Community {n}", return_dtype=pl.String)
        .alias("title"),
    ).sort("level", "community")
