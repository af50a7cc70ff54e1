import polars as pl

from graphrag_assets.core.resolution import apply_resolution, resolve


def _records(names: list[tuple[str, str, str, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        [{"name_key": key, "title": title, "type": kind, "mentions": n} for key, title, kind, n in names],
        schema={"name_key": pl.String, "title": pl.String, "type": pl.String, "mentions": pl.Int64},
    )


def test_variants_merge_into_the_most_frequent_name_and_merges_are_recorded():
    records = _records(
        [
            ("cratchit", "Cratchit", "PERSON", 9),
            ("cratchits", "Cratchits", "PERSON", 4),
            ("xiamen university", "Xiamen University", "ORGANIZATION", 5),
            ("xiamen universty", "Xiamen Universty", "ORGANIZATION", 1),  # a typo
            ("tobias renn", "Tobias Renn", "PERSON", 6),
            ("renn", "Renn", "PERSON", 2),
            ("wretched man", "wretched man", "CONCEPT", 2),
            ("wretched woman", "wretched woman", "CONCEPT", 2),
            ("port calder", "Port Calder", "GEO", 5),
            ("port calder", "Port Calder", "GEO", 5),
        ]
    )
    mapping, merges = resolve(records, "c")
    assert mapping == {"cratchits": "cratchit", "xiamen universty": "xiamen university", "renn": "tobias renn"}
    assert set(merges["reason"]) == {"spelling", "part of a full name"}
    assert merges.filter(pl.col("name_key") == "renn")["merged_into_title"].to_list() == ["Tobias Renn"]


def test_an_ambiguous_first_name_is_not_merged_and_types_must_agree():
    records = _records(
        [
            ("bob", "Bob", "PERSON", 5),
            ("bob cratchit", "Bob Cratchit", "PERSON", 3),
            ("bob marley", "Bob Marley", "PERSON", 3),
            ("calder", "Calder", "PERSON", 2),
            ("calder bay", "Calder Bay", "GEO", 2),
            ("harbour institute", "Harbour Institute", "ORGANIZATION", 2),
            ("harbour institutes", "Harbour Institutes", "GEO", 1),
        ]
    )
    mapping, _ = resolve(records, "c")
    assert mapping == {}


def test_applying_a_mapping_rewrites_records_and_drops_self_loops():
    entities = pl.DataFrame({"name_key": ["a", "a2", "b"], "text_unit_id": ["u", "u", "u"]})
    relationships = pl.DataFrame({"source_key": ["a", "a2"], "target_key": ["a2", "b"], "text_unit_id": ["u", "u"]})
    entities, relationships = apply_resolution(entities, relationships, {"a2": "a"})
    assert entities["name_key"].to_list() == ["a", "a", "b"]
    assert relationships.select("source_key", "target_key").rows() == [("a", "b")]
