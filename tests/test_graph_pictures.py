"""Pictures of the graph: the community maps and the GraphML, as plain functions and as
the communities step writes and links them; and the metadata that gives numbers a shape."""

import xml.etree.ElementTree as ET

import duckdb
import networkx as nx
import polars as pl
from dagster import AssetKey

from graphrag_assets.core.graph_pictures import community_map, community_map_path, write_graph_pictures
from graphrag_assets.defs.metadata import distribution_markdown, kept_and_changed

SVG = "{http://www.w3.org/2000/svg}"


def _small_graph():
    """Two triangles joined by one weak link; level 0 has one community per triangle,
    level 1 splits the first."""
    names = ["Ada", "Bo", "Cy", "Dee", "Eve", "Fay"]
    links = [
        ("Ada", "Bo", 5.0),
        ("Bo", "Cy", 4.0),
        ("Ada", "Cy", 3.0),
        ("Dee", "Eve", 5.0),
        ("Eve", "Fay", 4.0),
        ("Dee", "Fay", 2.0),
        ("Cy", "Dee", 0.5),
    ]
    degree = {n: sum(n in (s, t) for s, t, _ in links) for n in names}
    entities = pl.DataFrame(
        {
            "id": [f"e-{n}" for n in names],
            "title": names,
            "type": ["PERSON"] * len(names),
            "description": [f"{n} & co <x>" for n in names],
            "frequency": [1] * len(names),
            "degree": [degree[n] for n in names],
        }
    )
    relationships = pl.DataFrame(
        {
            "id": [f"r{i}" for i in range(len(links))],
            "source_id": [f"e-{s}" for s, _, _ in links],
            "target_id": [f"e-{t}" for _, t, _ in links],
            "weight": [w for _, _, w in links],
            "description": ["knows"] * len(links),
        }
    )
    communities = pl.DataFrame(
        {
            "level": [0, 0, 1, 1],
            "community": [0, 1, 2, 3],
            "title": ["Community 0", "Community 1", "Community 2", "Community 3"],
            "entity_ids": [["e-Ada", "e-Bo", "e-Cy"], ["e-Dee", "e-Eve", "e-Fay"], ["e-Ada", "e-Bo"], ["e-Cy"]],
        }
    )
    return entities, relationships, communities


def test_a_community_map_is_valid_svg_labels_the_best_connected_and_is_deterministic():
    entities, relationships, communities = _small_graph()
    drawn = community_map(entities, relationships, communities, level=0, top_n=4, labels=2)
    root = ET.fromstring(drawn.svg)
    assert root.tag == f"{SVG}svg"
    circles = root.findall(f".//{SVG}circle")
    assert len(circles) == drawn.drawn == 4 and drawn.members == 6
    # Colour by community: the two triangles differ.
    assert len({c.get("fill") for c in circles}) == 2
    labels = [t.text for t in root.findall(f".//{SVG}text")]
    # Ada (degree 2) loses to the degree-3 nodes; each community's best member is named.
    assert {"Cy", "Dee"} <= set(drawn.labelled) and set(drawn.labelled) <= set(labels)
    assert "Ada" not in drawn.labelled and "Fay" not in labels
    assert "the 4 best connected of 6 entities in 2 communities" in drawn.caption
    assert community_map(entities, relationships, communities, level=0, top_n=4, labels=2) == drawn


def test_pictures_are_written_per_level_and_the_graphml_loads_back(tmp_path):
    entities, relationships, communities = _small_graph()
    folder = tmp_path / "pictures"
    folder.mkdir()
    (folder / "communities-level-7.svg").write_text("<svg/>")  # a level the graph no longer has
    pictures = write_graph_pictures(folder, entities, relationships, communities)
    assert sorted(p.name for p in folder.iterdir()) == [
        "communities-level-0.svg",
        "communities-level-1.svg",
        "graph.graphml",
    ]
    assert set(pictures.maps) == {0, 1}
    ET.parse(pictures.maps[1][0])  # well-formed
    graph = nx.read_graphml(pictures.graphml)
    assert graph.number_of_nodes() == 6 and graph.number_of_edges() == 7
    ada = graph.nodes["e-Ada"]
    assert {k: ada[k] for k in ["label", "type", "degree", "community_level_0", "community_level_1"]} == {
        "label": "Ada",
        "type": "PERSON",
        "degree": 2,
        "community_level_0": 0,
        "community_level_1": 2,
    }
    assert graph.nodes["e-Eve"]["community_level_1"] == -1  # in no community of level 1
    assert graph.edges["e-Cy", "e-Dee"]["weight"] == 0.5


def test_distributions_and_changes_have_a_shape():
    table = distribution_markdown({"level 0": [1, 2, 3, 9], "level 1": [1, 1]}, "entities")
    lines = table.splitlines()
    assert lines[0] == "| entities | level 0 | level 1 |"
    assert lines[2].startswith("| 1 | 1 █") and lines[2].endswith("2 " + "█" * 20 + " |")
    assert lines[3].startswith("| 2-3 | 2 " + "█" * 20)
    assert [line.split(" |")[0] for line in lines[2:]] == ["| 1", "| 2-3", "| 4-7", "| 8-15"]
    assert kept_and_changed(pl.Series(["a", "b", "c"]), pl.Series(["a", "d"])) == {
        "kept": 1,
        "new_or_changed": 1,
        "gone": 2,
    }


def _latest(instance, asset: str) -> dict:
    return instance.get_latest_materialization_event(AssetKey(asset)).asset_materialization.metadata


def test_a_build_links_its_pictures_and_its_metadata_tells_each_partition_its_own_rows(index, input_dir, instance):
    settings, report = index(input_dir)
    with duckdb.connect(settings.db, read_only=True) as connection:
        entities, relationships = (
            connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ["entities", "relationships"]
        )
        levels = connection.execute("SELECT count(DISTINCT level) FROM communities").fetchone()[0]
        per_source = dict(connection.execute("SELECT source_partition, count(*) FROM documents GROUP BY 1").fetchall())

    # The communities step drew every level and wrote the GraphML, and links them.
    found = _latest(instance, "communities")
    for level in range(levels):
        path = found[f"community_map_level_{level}"].value
        assert path == str(community_map_path(settings.db, "default", level))
        ET.parse(path)
    assert found["community_map"].value.startswith("![Communities, level 0](data:image/svg+xml;base64,")
    graph = nx.read_graphml(found["graphml_for_gephi"].value)
    assert (graph.number_of_nodes(), graph.number_of_edges()) == (entities, relationships)
    assert "| entities | level 0 |" in found["community_sizes"].value
    assert found["communities_vs_last_build"].value == {
        "kept": 0,
        "new_or_changed": found["dagster/row_count"].value,
        "gone": 0,
    }
    assert "| degree | entities |" in _latest(instance, "entities")["degree_distribution"].value
    reports = _latest(instance, "community_reports")
    assert reports["reports_vs_last_build"].value["new_or_changed"] == reports["dagster/row_count"].value

    # One source run read every file; each partition reports its own rows.
    assert len(report.source_runs) == 1 and len(per_source) > 1
    events = instance.fetch_materializations(AssetKey("documents"), limit=100).records
    row_counts = {e.partition_key: e.asset_materialization.metadata["dagster/row_count"].value for e in events}
    assert row_counts == per_source and sum(row_counts.values()) == report.rows["default"]["documents"]
    assert {e.asset_materialization.metadata["sources_in_run"].value for e in events} == {len(per_source)}

    # extractions and published_index: row counts and the columns of their tables.
    extraction = _latest(instance, "extractions")
    assert extraction["dagster/row_count"].value == sum(extraction["rows_per_table"].value.values()) > 0
    assert "extracted_entities.title" in {c.name for c in extraction["dagster/column_schema"].schema.columns}
    published = _latest(instance, "published_index")
    assert published["rows_per_table"].value["entities"] == entities
    assert "community_reports.summary" in {c.name for c in published["dagster/column_schema"].schema.columns}
