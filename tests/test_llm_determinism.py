"""Equal inputs give equal tables on the LLM path, whatever order the model's answers
arrive in and whatever order the extraction records are read in.

Against the OpenAI-compatible test server with a random delay per request (so answers
come back in an order unrelated to the requests') and several calls in flight. A name
written in several forms ("SALTMARSH SQUARE", "Saltmarsh Square"), each in as many
records, used to take the form of whichever record came first: the resolution rules read
that form (a name in capitals is no alias), so the order of the rows decided which names
merged, and how many entities there were.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import polars as pl

from graphrag_assets.core.extraction.names import name_key
from graphrag_assets.core.extraction.records import EXTRACTED_ENTITY_COLUMNS, EXTRACTED_RELATIONSHIP_COLUMNS
from graphrag_assets.core.resolution import candidate_pairs
from graphrag_assets.llm.cache import LLMCache
from graphrag_assets.llm.client import LLMClient
from graphrag_assets.llm.settings import LLMSettings
from graphrag_assets.llm_stages.graph import build_llm_graph

from .conftest import FAKE_LLM_KEY, REPO
from .fake_openai import FakeOpenAI
from .index_equality import table

UNITS = pl.DataFrame({"id": [f"u{i}" for i in range(1, 7)], "document_id": ["d"] * 6, "chunk_index": list(range(6))})
BASE = {"corpus": "c", "source_partition": "c/harbour.txt", "mentions": 1, "document_title": None}


def _entity(unit: str, title: str, description: str) -> dict:
    return BASE | {
        "text_unit_id": unit,
        "name_key": name_key(title),
        "title": title,
        "type": "PERSON",
        "description": description,
    }


def _relationship(unit: str, a: str, b: str, description: str) -> dict:
    source, target = sorted([a, b])
    return {
        "text_unit_id": unit,
        "corpus": "c",
        "source_partition": "c/harbour.txt",
        "source_key": source,
        "target_key": target,
        "description": description,
        "weight": 5.0,
    }


# One record per text unit and name, as extraction writes them, and as many records (and
# mentions) for each written form of a name: which form is the name's is a tie. "Cratchit"
# is an alias of "Bob Cratchit" (and the model confirms it: they share a word) but is also
# written "CRATCHIT", which would be no alias; the two land in one text unit once merged.
RECORDS = pl.DataFrame(
    [
        _entity("u1", "CRATCHIT", "CRATCHIT keeps the ledger."),
        _entity("u1", "Bob Cratchit", "Bob Cratchit is the clerk."),
        _entity("u1", "Mara Ellison", "Mara Ellison rows at dawn."),
        _entity("u2", "Cratchit", "Cratchit walks home."),
        _entity("u2", "Bob Cratchit", "Bob Cratchit carries Tim."),
        _entity("u2", "TOBIAS RENN", "TOBIAS RENN owns the ferry."),
        _entity("u3", "Tobias Renn", "Tobias Renn pilots the ferry."),
        _entity("u3", "Mara Ellison", "Mara Ellison won the cup."),
        _entity("u3", "Saltmarsh Square", "Saltmarsh Square holds the regatta."),
        _entity("u4", "Salt Marsh Square", "Salt Marsh Square is by the harbour."),
        _entity("u4", "Tobias Renn's", "Tobias Renn's ferry is late."),
        _entity("u5", "SALTMARSH SQUARE", "SALTMARSH SQUARE is crowded."),
        _entity("u5", "Mara Ellison's", "Mara Ellison's boat is new."),
        _entity("u6", "Ada Voss", "Ada Voss counts the coal."),
        _entity("u6", "Tobias Renn", "Tobias Renn pays for the coal."),
    ],
    schema=EXTRACTED_ENTITY_COLUMNS,
)
RELATIONSHIPS = pl.DataFrame(
    [
        _relationship("u1", "cratchit", "bob cratchit", "CRATCHIT works beside Bob Cratchit."),
        _relationship("u1", "bob cratchit", "mara ellison", "Bob Cratchit greets Mara Ellison."),
        _relationship("u2", "cratchit", "bob cratchit", "Cratchit is Bob Cratchit."),
        _relationship("u2", "bob cratchit", "tobias renn", "Bob Cratchit rides with TOBIAS RENN."),
        _relationship("u3", "tobias renn", "mara ellison", "Tobias Renn ferries Mara Ellison."),
        _relationship("u3", "mara ellison", "saltmarsh square", "Mara Ellison rows for Saltmarsh Square."),
        _relationship("u4", "salt marsh square", "tobias renn", "Tobias Renn's ferry stops at Salt Marsh Square."),
        _relationship("u5", "saltmarsh square", "mara ellison", "Mara Ellison's boat is moored at SALTMARSH SQUARE."),
        _relationship("u6", "ada voss", "tobias renn", "Ada Voss sells coal to Tobias Renn."),
    ],
    schema=EXTRACTED_RELATIONSHIP_COLUMNS,
)


def _orders(frame: pl.DataFrame) -> list[pl.DataFrame]:
    """The rows as written, reversed, and shuffled twice."""
    return [
        frame,
        frame.reverse(),
        frame.sample(fraction=1.0, shuffle=True, seed=1),
        frame.sample(fraction=1.0, shuffle=True, seed=2),
    ]


def test_the_llm_graph_does_not_depend_on_the_order_of_rows_or_answers():
    built = []
    with FakeOpenAI(latency_seconds=0.01, jitter_seconds=0.05) as fake:
        settings = LLMSettings(base_url=fake.base_url, api_key=FAKE_LLM_KEY, model="fake-chat", concurrency=8)
        for records, relationship_records, units in zip(_orders(RECORDS), _orders(RELATIONSHIPS), _orders(UNITS)):
            with duckdb.connect() as connection:
                cache = LLMCache(connection)  # each build asks the model afresh
                entities, relationships, merges, failures = build_llm_graph(
                    lambda cache=cache: LLMClient(settings, cache),
                    records,
                    relationship_records,
                    units,
                    "c",
                    candidate_pairs(records),
                    True,
                )
            assert failures.is_empty()
            built.append((entities.sort("id"), relationships.sort("id"), merges))
    first_entities, first_relationships, first_merges = built[0]
    # The alias was proposed (its form is "Cratchit", not "CRATCHIT") and confirmed.
    assert ("cratchit", "bob cratchit", "alias in same text unit") in first_merges.select(
        "name_key", "merged_into_key", pl.col("reason")
    ).rows()
    assert first_merges.filter(pl.col("name_key") == "cratchit")["title"].to_list() == ["Cratchit"]
    for entities, relationships, merges in built[1:]:
        _assert_equal("entities", first_entities, entities)
        _assert_equal("relationships", first_relationships, relationships)
        _assert_equal("entity_merges", first_merges, merges)


def _assert_equal(name: str, expected: pl.DataFrame, actual: pl.DataFrame) -> None:
    if expected.equals(actual):
        return
    key = "id" if "id" in expected.columns else expected.columns[:2]
    only_expected = expected.join(actual, on=expected.columns, how="anti", nulls_equal=True)
    only_actual = actual.join(expected, on=expected.columns, how="anti", nulls_equal=True)
    raise AssertionError(
        f"{name} differ ({expected.height} vs {actual.height} rows): only in the first build "
        f"{only_expected.select(key).rows()[:5]} "
        f"{only_expected.head(3).to_dicts()}, only in the other {only_actual.select(key).rows()[:5]} "
        f"{only_actual.head(3).to_dicts()}"
    )


# An index built end to end: each name in several forms, in different files.
FILES = {
    "notice.txt": (
        "SALTMARSH SQUARE opens the autumn regatta. Mara Ellison and Tobias Renn row for the club at Calder Pier."
    ),
    "report.txt": "Mara Ellison won the cup for Saltmarsh Square. Tobias Renn cheered from Calder Pier with Ada Voss.",
    "letters.txt": "Ada Voss wrote to Tobias Renn about the crew of Salt Marsh Square and the boats of Calder Pier.",
    "minutes.txt": (
        "The council of Salt Marsh Square thanked Ada Voss. Mara Ellison and Ada Voss planned the next regatta at "
        "Harbor Hall."
    ),
    "diary.txt": "HARBOR HALL hosted the dinner. Tobias Renn spoke of Mara Ellison and of CALDER PIER.",
    "gazette.txt": "Harbor Hall and Calder Pier share a ferry. Ada Voss sails it for Tobias Renn and Mara Ellison.",
}
TABLES = {
    "entities": "SELECT * FROM entities ORDER BY id",
    "relationships": "SELECT * FROM relationships ORDER BY id",
    "communities": "SELECT * FROM communities ORDER BY id",
    "community_reports": "SELECT * FROM community_reports ORDER BY id",
    "entity_merges": "SELECT * FROM entity_merges ORDER BY name_key, merged_into_key",
    "text_units": "SELECT id, entity_ids, relationship_ids FROM text_units ORDER BY id",
}


def _write(folder: Path, files: dict[str, str]) -> None:
    (folder / "default").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / "default" / name).write_text(text + "\n")


def _index(root: Path, input_dir: Path, monkeypatch) -> str:
    """graphrag-index's code into ``root``: its own DuckDB file, LanceDB folder and
    DAGSTER_HOME."""
    from dagster import DagsterInstance

    from graphrag_assets.indexing import run_index
    from graphrag_assets.settings import IndexSettings
    from graphrag_evaluation.build import build_definitions

    home = root / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    settings = IndexSettings.from_env(
        {}, input_dir=str(input_dir), db=str(root / "graphrag.duckdb"), vectors=str(root / "lancedb")
    )
    with DagsterInstance.get() as instance:
        report = run_index(settings, instance, lambda: build_definitions(settings), log=lambda message: None)
    assert not report.failed_runs
    return settings.db


def test_equal_corpora_index_to_equal_tables_whatever_order_the_answers_come_in(tmp_path, monkeypatch):
    """Two builds from scratch (each its own DuckDB file, LanceDB folder and DAGSTER_HOME),
    eight calls in flight, answers delayed at random: every table equal, short numbers
    included. (Rows read in another order, as after an update, are the test above.)"""
    with FakeOpenAI(jitter_seconds=0.05, capitals=True) as fake:
        monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("GRAPHRAG_LLM_API_KEY", FAKE_LLM_KEY)
        monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "fake-chat")
        monkeypatch.setenv("GRAPHRAG_EMBEDDING_MODEL", "fake-embed")
        monkeypatch.setenv("GRAPHRAG_LLM_CONCURRENCY", "8")
        _write(tmp_path / "input", FILES)
        first = _index(tmp_path / "first", tmp_path / "input", monkeypatch)
        second = _index(tmp_path / "second", tmp_path / "input", monkeypatch)
        finished = sorted((r["finished"], r["started"]) for r in fake.completions() if "finished" in r)

    # The answers did come back in another order than asked.
    assert [started for _, started in finished] != sorted(started for _, started in finished)
    assert table(first, "SELECT count(*) AS n FROM entity_merges WHERE NOT rejected")["n"][0] >= 1
    assert table(first, "SELECT count(*) AS n FROM community_reports WHERE generated_by = 'fake-chat'")["n"][0] >= 1
    assert table(first, "SELECT count(*) AS n FROM llm_failures")["n"][0] == 0
    for name, sql in TABLES.items():
        _assert_equal(name, table(first, sql), table(second, sql))
