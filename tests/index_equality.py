"""Comparing an incrementally updated index with a full rebuild of the same final corpus.

Stable ids (content hashes) must be equal. Short numbers are not compared: community
numbers and the short ids of entities and relationships are kept across updates (a kept
report's citations must keep pointing at the same rows), so they may differ from a
rebuild's. Citations in reports are therefore compared by the stable ids they resolve to.
"""

from __future__ import annotations

import re

import polars as pl

from graphrag_assets.storage.location import IndexLocation

_CITATION = re.compile(r"(Entities|Relationships) \(([^)]*)\)")


def table(database: str | IndexLocation, sql: str) -> pl.DataFrame:
    location = database if isinstance(database, IndexLocation) else IndexLocation(database)
    with location.connect(read_only=True) as connection:
        return connection.execute(sql).pl()


def reports_by_id(database: str | IndexLocation) -> pl.DataFrame:
    ids = {
        kind: dict(table(database, f"SELECT human_readable_id, id FROM {kind.lower()}").iter_rows())
        for kind in ("Entities", "Relationships")
    }

    def resolve(match: re.Match) -> str:
        numbers = [part.strip() for part in match.group(2).split(",")]
        return (
            f"{match.group(1)} ({', '.join(ids[match.group(1)].get(int(n), n) if n.isdigit() else n for n in numbers)})"
        )

    reports = table(
        database, "SELECT id, title, summary, rank, full_content, generated_by FROM community_reports ORDER BY id"
    )
    return reports.with_columns(
        pl.col("full_content").map_elements(lambda text: _CITATION.sub(resolve, text), return_dtype=pl.String)
    )


def assert_same_index(incremental: str | IndexLocation, rebuilt: str | IndexLocation) -> None:
    for name, sql in {
        "entities": "SELECT id, title, type, description, text_unit_ids, frequency, degree FROM entities ORDER BY id",
        "relationships": "SELECT id, source, target, weight, description, text_unit_ids FROM relationships ORDER BY id",
        "text_units": "SELECT id, document_id, text, entity_ids, relationship_ids FROM text_units ORDER BY id",
        "communities": (
            "SELECT c.id, c.level, c.entity_ids, c.relationship_ids, c.text_unit_ids, p.id AS parent_id FROM "
            "communities c "
            "LEFT JOIN communities p ON p.community = c.parent AND p.corpus = c.corpus ORDER BY c.id"
        ),
        "embeddings": "SELECT kind, id, content_hash, model, vector FROM embeddings ORDER BY kind, id",
    }.items():
        mine, theirs = table(incremental, sql), table(rebuilt, sql)
        if not mine.equals(theirs):
            key = mine.columns[:2] if name == "embeddings" else mine.columns[:1]
            only_mine = mine.join(theirs, on=mine.columns[: len(key)], how="anti").select(key).rows()
            only_theirs = theirs.join(mine, on=mine.columns[: len(key)], how="anti").select(key).rows()
            raise AssertionError(
                f"{name} differ from a full rebuild: only incremental {only_mine[:5]}, only rebuilt "
                f"{only_theirs[:5]}, "
                f"{mine.height} vs {theirs.height} rows"
            )
    assert reports_by_id(incremental).equals(reports_by_id(rebuilt)), "community reports differ from a full rebuild"
