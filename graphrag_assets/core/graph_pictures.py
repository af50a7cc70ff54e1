"""Pictures of a corpus's graph, written beside the index by each graph build.

- A map of the communities of each level (SVG): the best-connected entities of the level,
  sized by degree, coloured by community, the top ones labelled. Only the top entities are
  drawn because a spring layout of 30k nodes takes minutes and shows a hairball; the
  caption says how many were drawn out of how many.
- The whole graph as GraphML for Gephi: entities as nodes (title as ``label``, type,
  degree, frequency, community per level), relationships as weighted edges.

SVG is written directly (no plotting library): circles, lines and text are all a map
needs, and the output is deterministic byte for byte for the same graph.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import networkx as nx
import polars as pl

MAP_ENTITIES = 120  # entities drawn per level: the best connected
MAP_LABELS = 15  # of those, the best connected are labelled
MAP_EDGES = 400  # strongest relationships among the drawn entities (bounds the file size)
LAYOUT_SEED = 7
# Distinct colours (Tableau 10 and two more) for the largest communities drawn; the rest
# share grey, since recycling a colour would claim two communities are one.
PALETTE = [
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bcbd22",
    "#d37295",
    "#17becf",
]
OTHER_COLOUR = "#bab0ac"
# Layout only: links inside a community pull harder, and every member is tied to an
# invisible hub of its community, so each community forms one region of the map; the hubs
# are tied to an invisible centre.
INSIDE_PULL = 4.0
HUB_PULL = 1.0
CENTRE_PULL = 0.3  # holds communities with no link to the others near the rest
WIDTH, HEIGHT, LEGEND_WIDTH, CAPTION_HEIGHT, MARGIN = 900, 680, 260, 48, 30
MAP_PREFIX = "communities-level-"
GRAPHML_NAME = "graph.graphml"


@dataclass(frozen=True)
class CommunityMap:
    level: int
    svg: str
    caption: str
    drawn: int  # entities drawn
    members: int  # entities in a community of this level
    labelled: list[str]  # titles of the labelled entities, in the order they were placed


@dataclass(frozen=True)
class GraphPictures:
    maps: dict[int, tuple[Path, str]]  # level -> (SVG file, caption)
    graphml: Path


def graph_pictures_dir(database: str | Path, corpus: str) -> Path:
    """Where a corpus's pictures live: beside the index file, one folder per corpus."""
    database = Path(database)
    return database.with_name(database.name + ".graphs") / corpus


def _map_name(level: int) -> str:
    return f"{MAP_PREFIX}{level}.svg"


def community_map_path(database: str | Path, corpus: str, level: int) -> Path:
    return graph_pictures_dir(database, corpus) / _map_name(level)


def _level_members(communities: pl.DataFrame, level: int) -> pl.DataFrame:
    return (
        communities.filter(pl.col("level") == level)
        .select("community", pl.col("title").alias("community_title"), pl.col("entity_ids").alias("entity_id"))
        .explode("entity_id")
    )


def _layout(nodes: pl.DataFrame, edges: pl.DataFrame) -> dict[str, tuple[float, float]]:
    """Spring layout of the drawn entities, seeded, scaled to the drawing area."""
    graph = nx.Graph()
    graph.add_nodes_from(nodes["id"])
    community_of = dict(zip(nodes["id"], nodes["community"]))
    # Weights relative to the strongest: raw weights of hundreds would collapse each
    # cluster to a point while unlinked communities drift to the edges.
    strongest = max(edges["weight"].max() or 1.0, 1e-9)
    for source, target, weight in edges.select("source_id", "target_id", "weight").iter_rows():
        graph.add_edge(
            source,
            target,
            weight=weight / strongest * (INSIDE_PULL if community_of[source] == community_of[target] else 1.0),
        )
    for node, community in community_of.items():
        graph.add_edge(node, f"\0hub {community}", weight=HUB_PULL)
        graph.add_edge(f"\0hub {community}", "\0centre", weight=CENTRE_PULL)
    positions = nx.spring_layout(graph, seed=LAYOUT_SEED, weight="weight")
    drawn = {node: positions[node] for node in nodes["id"]}
    xs, ys = [p[0] for p in drawn.values()], [p[1] for p in drawn.values()]
    span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    return {
        node: (
            round(MARGIN + (x - min(xs)) / span_x * (WIDTH - 2 * MARGIN), 1),
            round(MARGIN + (y - min(ys)) / span_y * (HEIGHT - 2 * MARGIN), 1),
        )
        for node, (x, y) in drawn.items()
    }


def _label_spot(
    title: str, centre: tuple[float, float], radius: float, placed: list[tuple[float, float, float, float]]
) -> tuple[float, float] | None:
    """Where a label goes, above its node or else below it, without covering a label
    already placed (``placed`` grows by its box); ``None`` when neither fits."""
    # Bold 12px text: about 7.5px per Latin character, 13px per CJK one.
    width = sum(13 if ord(ch) > 0x2E7F else 7.5 for ch in title)
    for baseline in (centre[1] - radius - 3, centre[1] + radius + 13):
        box = (centre[0] - width / 2, baseline - 12, centre[0] + width / 2, baseline + 2)
        if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
            placed.append(box)
            return centre[0], round(baseline, 1)
    return None


def community_map(
    entities: pl.DataFrame,
    relationships: pl.DataFrame,
    communities: pl.DataFrame,
    level: int,
    top_n: int = MAP_ENTITIES,
    labels: int = MAP_LABELS,
) -> CommunityMap:
    """The map of the communities of ``level``: the ``top_n`` entities of the level's
    communities by degree (ties by title) and their strongest relationships among them;
    labelled: the best-connected member of each coloured community and the ``labels`` best
    connected, where a label does not cover another. Deterministic for the same tables."""
    membership = _level_members(communities, level)
    members = entities.select("id", "title", "type", "degree").join(membership, left_on="id", right_on="entity_id")
    nodes = members.sort(["degree", "title"], descending=[True, False]).head(top_n)
    drawn_ids = nodes["id"].implode()
    edges = (
        relationships.filter(pl.col("source_id").is_in(drawn_ids) & pl.col("target_id").is_in(drawn_ids))
        .sort(["weight", "id"], descending=[True, False])
        .head(MAP_EDGES)
    )
    # The communities with most drawn members get the distinct colours.
    ranked = nodes.group_by("community", "community_title").len().sort(["len", "community"], descending=[True, False])
    colour = {c: PALETTE[i] if i < len(PALETTE) else OTHER_COLOUR for i, c in enumerate(ranked["community"])}
    position = _layout(nodes, edges) if nodes.height else {}
    max_degree = max(nodes["degree"].max() or 1, 1)

    def radius(degree: int) -> float:
        return round(3 + 11 * math.sqrt(degree / max_degree), 1)

    texts, labelled_titles = _labels(nodes, position, radius, labels)
    shown = "all" if nodes.height == members.height else f"the {nodes.height} best connected of"
    caption_lines = [
        f"Level {level}: {shown} {members.height} entities in {membership['community'].n_unique()} communities.",
        f"Size: degree; colour: community; labels: the best connected of each community and of the level, where "
        f"they fit ({len(labelled_titles)}); "
        f"lines: the {edges.height} strongest relationships among them.",
    ]
    circles = _circles(nodes, position, radius, colour)
    svg = _svg(level, _lines(edges, position), circles, texts, _legend(ranked, colour), caption_lines)
    return CommunityMap(level, svg, " ".join(caption_lines), nodes.height, members.height, labelled_titles)


def _lines(edges: pl.DataFrame, position: dict[str, tuple[float, float]]) -> list[str]:
    """The relationships drawn, thicker the heavier."""
    max_weight = max(edges["weight"].max() or 1.0, 1e-9)
    return [
        (
            f'<line x1="{position[s][0]}" y1="{position[s][1]}" x2="{position[t][0]}" y2="{position[t][1]}" '
            f'stroke-width="{round(0.4 + 2.6 * w / max_weight, 2)}"/>'
        )
        for s, t, w in edges.select("source_id", "target_id", "weight").iter_rows()
    ]


def _circles(
    nodes: pl.DataFrame,
    position: dict[str, tuple[float, float]],
    radius: Callable[[int], float],
    colour: dict[int, str],
) -> list[str]:
    """The entities drawn, larger the better connected, coloured by community, each titled."""
    return [
        f'<circle cx="{position[row["id"]][0]}" cy="{position[row["id"]][1]}" r="{radius(row["degree"])}" '
        f'fill="{colour[row["community"]]}">'
        f"<title>{escape(row['title'])} ({escape(row['type'] or '')}, degree {row['degree']}, community "
        f"{row['community']})</title></circle>"
        for row in nodes.iter_rows(named=True)
    ]


def _labels(
    nodes: pl.DataFrame, position: dict[str, tuple[float, float]], radius: Callable[[int], float], labels: int
) -> tuple[list[str], list[str]]:
    """The labels that fit, and the titles they show."""
    texts, placed, labelled_titles = [], [], []
    # Each coloured community's best-connected member first, so every region is named.
    leaders = nodes.unique("community", keep="first", maintain_order=True).head(len(PALETTE))
    candidates = pl.concat([leaders, nodes.head(labels)]).unique("id", keep="first", maintain_order=True)
    for row in candidates.iter_rows(named=True):
        spot = _label_spot(row["title"], position[row["id"]], radius(row["degree"]), placed)
        if spot is not None:
            texts.append(f'<text x="{spot[0]}" y="{spot[1]}">{escape(row["title"])}</text>')
            labelled_titles.append(row["title"])
    return texts, labelled_titles


def _legend(ranked: pl.DataFrame, colour: dict[int, str]) -> list[str]:
    """A swatch and the title of each coloured community, then how many share the grey."""
    legend = []
    for i, row in enumerate(ranked.head(len(PALETTE)).iter_rows(named=True)):
        y = MARGIN + 22 * i
        legend.append(f'<rect x="{WIDTH + 10}" y="{y}" width="14" height="14" fill="{colour[row["community"]]}"/>')
        legend.append(
            f'<text x="{WIDTH + 30}" y="{y + 12}">{escape(row["community_title"])} ({row["len"]} drawn)</text>'
        )
    if ranked.height > len(PALETTE):
        y = MARGIN + 22 * len(PALETTE)
        legend.append(f'<rect x="{WIDTH + 10}" y="{y}" width="14" height="14" fill="{OTHER_COLOUR}"/>')
        legend.append(f'<text x="{WIDTH + 30}" y="{y + 12}">{ranked.height - len(PALETTE)} other communities</text>')
    return legend


def _svg(
    level: int, lines: list[str], circles: list[str], texts: list[str], legend: list[str], caption_lines: list[str]
) -> str:
    total_width, total_height = WIDTH + LEGEND_WIDTH, HEIGHT + CAPTION_HEIGHT
    return "\n".join(
        [
            (
                f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_width}" height="{total_height}" viewBox="0 '
                f'0 {total_width} {total_height}" font-family="sans-serif" font-size="12">'
            ),
            f"<title>Communities, level {level}</title>",
            f'<rect width="{total_width}" height="{total_height}" fill="white"/>',
            '<g stroke="#8c8c8c" stroke-opacity="0.45">',
            *lines,
            "</g>",
            '<g stroke="white" stroke-width="0.8">',
            *circles,
            "</g>",
            # A white halo keeps a label readable over lines and other nodes.
            '<g text-anchor="middle" font-weight="bold" paint-order="stroke" stroke="white" stroke-width="3">',
            *texts,
            "</g>",
            "<g>",
            *legend,
            "</g>",
            *(
                f'<text x="{MARGIN}" y="{HEIGHT + 18 * i + 14}" fill="#444">{escape(line)}</text>'
                for i, line in enumerate(caption_lines)
            ),
            "</svg>",
            "",
        ]
    )


def gephi_graph(entities: pl.DataFrame, relationships: pl.DataFrame, communities: pl.DataFrame) -> nx.Graph:
    """Entities as nodes (``label`` is what Gephi shows; ``community_level_<n>`` is -1 for
    an entity in no community of that level, such as the ego node), relationships as
    edges weighted by their weight."""
    graph = nx.Graph()
    levels = sorted(communities["level"].unique().to_list())
    community_of = {
        level: dict(zip(*_level_members(communities, level).select("entity_id", "community").get_columns()))
        for level in levels
    }
    for row in entities.sort("id").iter_rows(named=True):
        graph.add_node(
            row["id"],
            label=row["title"],
            type=row["type"] or "",
            degree=int(row["degree"]),
            frequency=int(row["frequency"]),
            description=row["description"] or "",
            **{f"community_level_{level}": int(community_of[level].get(row["id"], -1)) for level in levels},
        )
    for row in relationships.sort("id").iter_rows(named=True):
        graph.add_edge(
            row["source_id"],
            row["target_id"],
            id=row["id"],
            weight=float(row["weight"]),
            description=row["description"] or "",
        )
    return graph


def _write_atomically(path: Path, write) -> None:
    """Readers (the UI, a notebook) never see a half-written picture."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(handle)
    os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide the picture from a UI run by another user
    try:
        write(Path(temporary))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_graph_pictures(
    folder: Path, entities: pl.DataFrame, relationships: pl.DataFrame, communities: pl.DataFrame
) -> GraphPictures:
    """Write one community map per level and the GraphML into ``folder``, replacing the
    previous build's (maps of levels that no longer exist are removed)."""
    folder.mkdir(parents=True, exist_ok=True)
    maps = {}
    for level in sorted(communities["level"].unique().to_list()):
        drawn = community_map(entities, relationships, communities, level)
        path = folder / _map_name(level)
        _write_atomically(path, lambda target, svg=drawn.svg: target.write_text(svg, encoding="utf-8"))
        maps[level] = (path, drawn.caption)
    for stale in folder.glob(f"{MAP_PREFIX}*.svg"):
        if stale not in {path for path, _ in maps.values()}:
            stale.unlink()
    graphml = folder / GRAPHML_NAME
    _write_atomically(
        graphml, lambda target: nx.write_graphml(gephi_graph(entities, relationships, communities), target)
    )
    return GraphPictures(maps, graphml)
