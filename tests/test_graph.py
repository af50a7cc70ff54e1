import statistics

import polars as pl

from graphrag_assets.core.chunking import chunk_documents
from graphrag_assets.core.communities import CommunitySettings, detect_communities, ego_node
from graphrag_assets.core.extraction.offline import extract_offline
from graphrag_assets.core.graph import GraphSettings, build_graph, link_text_units


def _units(texts: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": [f"u{i}" for i in range(len(texts))],
            "document_id": "d",
            "chunk_index": list(range(len(texts))),
            "corpus": "c",
            "source_partition": "c/a.txt",
            "text": texts,
        }
    )


def _graph(texts, **settings):
    units = _units(texts)
    entities, relationships = extract_offline(units)
    return build_graph(entities, relationships, units, "c", GraphSettings(**settings))


def test_entities_merge_across_units_with_frequency_and_supporting_units():
    entities, _ = _graph(
        [
            "Mara Ellison met Victor Ashdown at Gullwing Pier.",
            "MARA ELLISON spoke with Victor Ashdown again.",
            "Victor Ashdown sailed from Gullwing Pier to Xiamen.",
        ],
        min_edge_weight_pct=0,
    )
    rows = {r["title"]: r for r in entities.iter_rows(named=True)}
    assert rows["Victor Ashdown"]["frequency"] == 3
    assert rows["Victor Ashdown"]["text_unit_ids"] == ["u0", "u1", "u2"]
    assert rows["Mara Ellison"]["frequency"] == 2  # "MARA ELLISON" is the same entity
    assert "Xiamen" not in rows  # mentioned once: pruned as rare


def test_pmi_weights_favour_pairs_that_seek_each_other_out():
    # Anna and Ben always appear together; Zed is nearly everywhere, so meeting him says
    # little, and someone who is in every unit says nothing at all.
    texts = ["Anna Lee and Ben Moss talked. Zed Park listened. Omni Present."] * 3
    texts += ["Zed Park walked alone. Omni Present."] * 5 + ["Cora Bell met Omni Present."] * 2
    entities, relationships = _graph(texts, min_edge_weight_pct=0)
    weight = {(r["source"], r["target"]): r["weight"] for r in relationships.iter_rows(named=True)}
    assert weight[("Anna Lee", "Ben Moss")] > weight[("Anna Lee", "Zed Park")] > 0
    assert ("Anna Lee", "Omni Present") not in weight
    degree = dict(zip(entities["title"], entities["degree"]))
    for r in relationships.iter_rows(named=True):
        assert r["combined_degree"] == degree[r["source"]] + degree[r["target"]]
    assert entities["degree"].to_list() == [
        sum(1 for r in relationships.iter_rows(named=True) if title in (r["source"], r["target"]))
        for title in entities["title"]
    ]


def test_weak_edge_pruning_and_deterministic_ids():
    texts = ["Anna Lee met Ben Moss."] * 4 + ["Cora Bell saw Dan Wu."] * 2
    texts += ["Eve Ng called Anna Lee. Cora Bell waved."] * 2 + ["Dan Wu met Eve Ng.", "Ben Moss, Dan Wu."]
    all_edges = _graph(texts, min_edge_weight_pct=0)[1]
    pruned = _graph(texts, min_edge_weight_pct=50)[1]
    assert 0 < pruned.height < all_edges.height
    assert pruned["weight"].min() >= all_edges["weight"].quantile(0.5, "lower")
    assert _graph(texts)[1]["id"].to_list() == _graph(texts)[1]["id"].to_list()


def test_text_unit_links_list_the_entities_and_relationships_of_each_unit():
    entities, relationships = _graph(["Anna Lee met Ben Moss.", "Anna Lee met Ben Moss again."], min_edge_weight_pct=0)
    links = link_text_units(entities, relationships).sort("text_unit_id")
    assert links["text_unit_id"].to_list() == ["u0", "u1"]
    assert all(len(ids) == 2 for ids in links["entity_ids"])
    assert all(len(ids) == 1 for ids in links["relationship_ids"])


def test_hierarchical_communities_on_a_real_book():
    from .conftest import shared_path

    text = shared_path("corpus", "christmas_carol", "book.txt").read_text(encoding="utf-8")
    units = chunk_documents(
        pl.DataFrame({"id": ["book"], "text": [text], "corpus": "c", "source_partition": "c/book.txt"})
    )
    entities, relationships = build_graph(*extract_offline(units), units, "c")
    communities = detect_communities(relationships, "c", CommunitySettings(max_cluster_size=10))
    assert communities["level"].n_unique() >= 2
    by_key = {(r["level"], r["community"]): r for r in communities.iter_rows(named=True)}
    by_community = {r["community"]: r for r in communities.iter_rows(named=True)}
    for row in communities.iter_rows(named=True):
        if row["parent"] != -1:
            parent = by_community[row["parent"]]
            assert parent["level"] == row["level"] - 1
            assert row["community"] in parent["children"]
            assert set(row["entity_ids"]) <= set(parent["entity_ids"])
        members = set(row["entity_ids"])
        internal = relationships.filter(pl.col("id").is_in(row["relationship_ids"]))
        assert internal["source_id"].is_in(members).all() and internal["target_id"].is_in(members).all()
        if not row["children"]:
            assert row["size"] <= 10 or row["level"] == communities["level"].max()
    # The ego node is left out of clustering but stays an entity.
    ego = ego_node(relationships)
    assert ego in entities["id"].to_list()
    assert all(ego not in ids for ids in communities["entity_ids"])
    assert len(by_key) == communities.height
    assert detect_communities(relationships, "c")["id"].to_list() == communities["id"].to_list()

    # Canonical, not just seeded: another seed finds the same communities. One new entity
    # hanging off an existing one changes its own community and its ancestors, and
    # typically (median over anchors along the graph) a few others, at most a fifth of the
    # communities, so an incremental update rewrites few reports.
    def groups(found):
        return {(row["level"], tuple(row["entity_ids"])) for row in found.iter_rows(named=True)}

    assert groups(detect_communities(relationships, "c", CommunitySettings(leiden_seed=7))) == groups(communities)
    elsewhere = []
    for row in range(0, relationships.height, relationships.height // 8):
        anchor = relationships.row(row, named=True)
        pendant = pl.DataFrame(
            [anchor | {"id": "r-new", "target_id": "e-new", "target": "Newcomer", "weight": 1.0}],
            schema=relationships.schema,
        )
        grown = detect_communities(pl.concat([relationships, pendant]), "c")
        changed = groups(grown) - groups(communities)
        assert any("e-new" in members for _, members in changed)
        elsewhere.append(sum("e-new" not in members for _, members in changed))
    assert statistics.median(elsewhere) <= communities.height / 5, elsewhere
    assert max(elsewhere) <= communities.height // 2, elsewhere


def test_community_numbers_stay_stable_across_a_small_change():
    from graphrag_assets.core.communities import COMMUNITY_COLUMNS, stabilize_numbers

    def frame(rows):
        return pl.DataFrame(
            [
                {
                    "id": f"{level}-{n}",
                    "human_readable_id": n,
                    "community": n,
                    "level": level,
                    "parent": parent,
                    "children": children,
                    "title": f"Community {n}",
                    "entity_ids": members,
                    "relationship_ids": [],
                    "text_unit_ids": [],
                    "period": "p",
                    "size": len(members),
                    "corpus": "c",
                }
                for n, level, parent, children, members in rows
            ],
            schema=COMMUNITY_COLUMNS,
        )

    old = frame([(0, 0, -1, [2], ["a", "b", "c", "d"]), (1, 0, -1, [], ["x", "y"]), (2, 1, 0, [], ["a", "b"])])
    # Leiden renumbered: the big community is now 1, the small one 0, and a new one appeared.
    new = frame(
        [
            (1, 0, -1, [3], ["a", "b", "c", "d", "e"]),
            (0, 0, -1, [], ["x", "y"]),
            (3, 1, 1, [], ["a", "b"]),
            (4, 0, -1, [], ["p", "q"]),
        ]
    )
    stable = stabilize_numbers(new, old)
    by_members = {tuple(r["entity_ids"]): r for r in stable.iter_rows(named=True)}
    assert by_members[("a", "b", "c", "d", "e")]["community"] == 0
    assert by_members[("x", "y")]["community"] == 1
    assert by_members[("a", "b")]["community"] == 2 and by_members[("a", "b")]["parent"] == 0
    assert by_members[("a", "b", "c", "d", "e")]["children"] == [2]
    assert by_members[("p", "q")]["community"] not in old["community"].to_list()  # a number no old community used
    assert stable["community"].n_unique() == stable.height
