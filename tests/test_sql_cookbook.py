"""docs/sql.md and the views, macros and comments of the published snapshot, on the sample
index as the real asset graph builds and publishes it."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import shutil

import duckdb
import polars as pl
import pytest

from graphrag_assets.core.evaluation import Question, with_build
from graphrag_assets.defs.metadata import table_metadata
from graphrag_assets.llm.cache import CacheRow, CallSite, LLMCache, call_record
from graphrag_assets.llm.prices import ModelPrice
from graphrag_assets.storage.duckdb_store import IndexStore
from graphrag_assets.storage.schema import LLM_FAILURE_COLUMNS, SOURCE_ERROR_COLUMNS, TABLES, column_description
from graphrag_assets.storage.snapshot import read_pointer
from graphrag_assets.storage.views import MACROS, VIEWS, describe_for_sql_users
from graphrag_query import IndexReader
from graphrag_query.call_log import QueryCallLog
from graphrag_query.evaluation import evaluate

from .conftest import REPO

COOKBOOK = re.findall(r"```sql\n(.*?)```", (REPO / "docs" / "sql.md").read_text(), re.S)
# What an index built with an LLM records: answered calls, and a call that failed for good.
LLM_CALLS = [
    CacheRow("call-1", "extraction", "fake-chat", "{}", 1_200, 300),
    CacheRow("call-2", "extraction", "fake-chat", "{}", 800, 100),
    CacheRow("call-3", "report", "fake-chat", "{}", 2_000, 500),
    CacheRow("call-4", "embedding", "fake-embed", "[0.1]", 400, 0),
]
CHAT, EMBED = ModelPrice(2.0, 8.0), ModelPrice(0.1, 0.0)
INDEXED = CallSite("default", "run-1")
# Each answered call above as llm_calls records it, a repeat of the first answered from the
# cache, and a question answered by local search: (stage, model, price, tokens, cached).
CALL_RECORDS = [
    call_record(
        INDEXED,
        row.stage,
        row.model,
        CHAT if row.model == "fake-chat" else EMBED,
        row.prompt_tokens,
        row.completion_tokens,
        False,
    )
    for row in LLM_CALLS
]
CALL_RECORDS.append(call_record(INDEXED, "extraction", "fake-chat", CHAT, 0, 0, True))
QUERY_CALLS = [call_record(CallSite(), "query", "fake-chat", CHAT, 3_000, 250, False)]
UNREADABLE = "default/broken.csv"


@pytest.fixture(scope="module")
def snapshot(sample_index, tmp_path_factory) -> str:
    """A copy of the sample index's published snapshot to which an LLM's calls, a query's
    call, a failed call and an unreadable file are added through the index's own write
    paths (the sample is indexed offline and reads every file)."""
    copy = tmp_path_factory.mktemp("cookbook") / "snapshot.duckdb"
    shutil.copyfile(read_pointer(sample_index.db)["snapshot"], copy)
    now = dt.datetime.now(dt.UTC)
    # The sample's build asked two questions (the second one it cannot answer), as an
    # evaluated build records them.
    questions = [
        Question("operations", "Who is the operations manager of Calder Shipping?", answers=("Elena Marsh",)),
        Question("mural", "Who painted the mural in the ferry terminal?", answers=("Ottoline Brecker",)),
    ]
    reader = IndexReader(str(copy), "default").load()
    evaluated = with_build(
        evaluate(reader, questions, ("basic", "local")), "default", reader.table("corpus_builds")["built_at"][0]
    )
    query_log = QueryCallLog(copy, "default")
    query_log.append(QUERY_CALLS, "local_search")
    with IndexStore(copy) as store:
        cache = LLMCache(store.open_connection)
        asyncio.run(cache.put(LLM_CALLS, CALL_RECORDS))
        cache.close()
        # The copy's views read this copy's file of query calls.
        describe_for_sql_users(store.open_connection, str(query_log.path))
        with store.transaction() as tx:
            failure = {
                "scope": "default#report",
                "stage": "report",
                "item_id": "community-3",
                "error": "HTTP 500",
                "recorded_at": now,
            }
            tx.replace("llm_failures", pl.DataFrame([failure], schema=LLM_FAILURE_COLUMNS), ["default#report"])
            error = {
                "corpus": "default",
                "source_partition": UNREADABLE,
                "source_path": "broken.csv",
                "error": "not UTF-8",
                "recorded_at": now,
            }
            tx.replace("source_errors", pl.DataFrame([error], schema=SOURCE_ERROR_COLUMNS), [UNREADABLE])
            tx.replace("evaluations", evaluated, evaluated["build_id"].unique().to_list())
    return str(copy)


@pytest.fixture(scope="module")
def sql(snapshot):
    with duckdb.connect(snapshot, read_only=True) as connection:
        yield connection


def rows(connection: duckdb.DuckDBPyConnection, query: str, parameters: list | None = None) -> list[dict]:
    result = connection.execute(query, parameters or [])
    names = [column[0] for column in result.description]
    return [dict(zip(names, row)) for row in result.fetchall()]


def test_the_cookbook_has_queries_for_every_view_and_macro():
    text = "\n".join(COOKBOOK)
    assert len(COOKBOOK) >= 15
    assert all(view.name in text for view in VIEWS) and all(f"{macro.name}(" in text for macro in MACROS)


@pytest.mark.parametrize("query", COOKBOOK, ids=[query.strip().splitlines()[0][:60] for query in COOKBOOK])
def test_every_cookbook_query_answers_on_the_sample_index(sql, query):
    assert sql.execute(query).fetchall(), f"no rows from:\n{query}"


def test_the_published_snapshot_has_the_views_and_the_live_file_only_tables(sample_index):
    names = {view.name for view in VIEWS}
    with duckdb.connect(read_pointer(sample_index.db)["snapshot"], read_only=True) as published:
        assert names <= {row[0] for row in published.execute("SELECT view_name FROM duckdb_views()").fetchall()}
        macros = published.execute(
            "SELECT function_name FROM duckdb_functions() WHERE function_type = 'table_macro'"
        ).fetchall()
        assert {macro.name for macro in MACROS} <= {row[0] for row in macros}
    with duckdb.connect(sample_index.db, read_only=True) as live:
        assert not names & {row[0] for row in live.execute("SELECT view_name FROM duckdb_views()").fetchall()}


def test_tables_views_and_asset_schemas_are_described_from_one_set_of_descriptions(sql):
    comments = {
        (t, c): comment
        for t, c, comment in sql.execute("SELECT table_name, column_name, comment FROM duckdb_columns()").fetchall()
    }
    for table in TABLES.values():
        for column in table.columns:
            assert comments[(table.name, column)] == column_description(table.name, column)
        schema = table_metadata(table.name, pl.DataFrame(schema=table.columns), [])["dagster/column_schema"]
        assert [(c.name, c.description) for c in schema.columns] == [
            (c, column_description(table.name, c)) for c in table.columns
        ]
    table_comments = dict(sql.execute("SELECT table_name, comment FROM duckdb_tables()").fetchall())
    assert all(table_comments[table.name] == table.description for table in TABLES.values())
    for view in VIEWS:
        # The declared columns are the view's columns, in order: the descriptions cannot drift.
        assert [(c, comments[(view.name, c)]) for c in sql.sql(f'SELECT * FROM "{view.name}" LIMIT 0').columns] == list(
            view.columns.items()
        )


def test_an_entitys_text_units_come_with_the_documents_and_files_they_were_cut_from(sql):
    entity = rows(sql, "SELECT * FROM entities WHERE corpus = 'default' AND title = 'Helen Strand'")[0]
    found = rows(sql, "SELECT * FROM entity_text_units WHERE entity_title = 'HELEN STRAND'")
    assert sorted(row["text_unit_id"] for row in found) == sorted(entity["text_unit_ids"])
    units = {
        row["id"]: row
        for row in rows(
            sql,
            (
                "SELECT t.*, d.title AS document_title, d.source_path FROM text_units t JOIN documents d ON d.id "
                "= t.document_id"
            ),
        )
    }
    for row in found:
        unit = units[row["text_unit_id"]]
        assert (row["document_id"], row["document_title"], row["source_path"]) == (
            unit["document_id"],
            unit["document_title"],
            unit["source_path"],
        )
        assert "helen strand" in row["text_unit_text"].lower()
    assert len({row["source_path"] for row in found}) > 1


def test_the_community_hierarchy_of_an_entity_goes_from_level_0_down_through_parents(sql):
    hierarchy = rows(sql, "SELECT * FROM entity_communities ORDER BY entity_id, level")
    by_entity: dict[str, list[dict]] = {}
    for row in hierarchy:
        by_entity.setdefault(row["entity_id"], []).append(row)
    clustered = sql.execute(
        "SELECT count(DISTINCT e) FROM (SELECT unnest(entity_ids) AS e FROM communities)"
    ).fetchone()[0]
    assert len(by_entity) == clustered and any(len(levels) > 1 for levels in by_entity.values())
    for levels in by_entity.values():
        assert [row["level"] for row in levels] == list(range(len(levels)))
        assert levels[0]["parent_community"] == -1
        assert all(below["parent_community"] == above["community"] for above, below in zip(levels, levels[1:]))
        assert all(row["report_title"] for row in levels)
    port_calder = rows(sql, "SELECT * FROM entity_communities WHERE entity_title = 'port calder'")
    assert port_calder and all("Port Calder" in row["report_title"] for row in port_calder)


def test_relationships_between_two_titles_match_in_any_case_and_either_order(sql):
    relationships = rows(sql, "SELECT * FROM relationships WHERE corpus = 'default'")
    assert sql.execute("SELECT count(*) FROM relationships_between_entities").fetchone()[0] == 2 * len(relationships)
    for relationship in relationships[:20]:
        source, target = relationship["source"], relationship["target"]
        for a, b in [(source.lower(), target.upper()), (target.upper(), source.lower()), (source, target)]:
            found = rows(
                sql, "SELECT * FROM relationships_between_entities WHERE entity_a = ? AND entity_b = ?", [a, b]
            )
            assert [row["relationship_id"] for row in found] == [relationship["id"]]
            assert found[0]["entity_a"].lower() == a.lower() and found[0]["weight"] == relationship["weight"]


def test_nearest_entities_and_text_units_start_with_themselves(sql):
    for title in [
        row[0] for row in sql.execute("SELECT title FROM entities ORDER BY degree DESC, title LIMIT 5").fetchall()
    ]:
        nearest = rows(sql, "SELECT * FROM nearest_entities(?, 4)", [title.upper()])
        assert len(nearest) == 4 and nearest[0]["entity_title"] == title
        assert nearest[0]["similarity"] == pytest.approx(1.0, abs=1e-5)
        similarities = [row["similarity"] for row in nearest]
        assert similarities == sorted(similarities, reverse=True) and similarities[1] < 1.0
    for unit in [row[0] for row in sql.execute("SELECT id FROM text_units ORDER BY id LIMIT 3").fetchall()]:
        nearest = rows(sql, "SELECT * FROM nearest_text_units(?, 3)", [unit])
        assert len(nearest) == 3 and nearest[0]["text_unit_id"] == unit
        assert nearest[0]["similarity"] == pytest.approx(1.0, abs=1e-5)
    assert not rows(sql, "SELECT * FROM nearest_entities('no such entity', 3)")


def test_reports_are_numbered_by_rank_within_their_level(sql):
    reports = rows(sql, "SELECT * FROM reports_by_level_and_rank")
    assert len(reports) == sql.execute("SELECT count(*) FROM community_reports").fetchone()[0]
    for level in {row["level"] for row in reports}:
        ranked = [row for row in reports if row["level"] == level]
        assert [row["rank_in_level"] for row in ranked] == list(range(1, len(ranked) + 1))
        assert [row["rank"] for row in ranked] == sorted((row["rank"] for row in ranked), reverse=True)


def test_source_file_status_lists_documents_and_errors(sql):
    status = {row["source_partition"]: row for row in rows(sql, "SELECT * FROM source_file_status")}
    documents = dict(sql.execute("SELECT source_partition, count(*) FROM documents GROUP BY ALL").fetchall())
    broken = status.pop(UNREADABLE)
    assert (broken["status"], broken["error"], broken["documents"]) == ("unreadable", "not UTF-8", 0)
    assert {key: row["documents"] for key, row in status.items()} == documents
    assert all(row["status"] == "indexed" and row["error"] is None for row in status.values())
    assert all(len(row["document_titles"]) == row["documents"] for row in status.values())


def test_llm_usage_counts_calls_and_tokens_per_stage_and_model(sql):
    usage = {(row["stage"], row["model"]): row for row in rows(sql, "SELECT * FROM llm_usage_by_stage_and_model")}
    assert set(usage) == {("extraction", "fake-chat"), ("report", "fake-chat"), ("embedding", "fake-embed")}
    extraction = usage[("extraction", "fake-chat")]
    assert (
        extraction["answered_calls"],
        extraction["prompt_tokens"],
        extraction["completion_tokens"],
        extraction["total_tokens"],
    ) == (2, 2_000, 400, 2_400)
    assert usage[("embedding", "fake-embed")]["completion_tokens"] == 0


def test_the_cost_view_prices_indexing_and_query_calls_at_their_prices(sql):
    cost = {
        (row["stage"], row["model"]): row
        for row in rows(sql, "SELECT * FROM llm_cost_by_corpus_stage_and_model WHERE corpus = 'default'")
    }
    assert set(cost) == {
        ("extraction", "fake-chat"),
        ("report", "fake-chat"),
        ("embedding", "fake-embed"),
        ("local_search", "fake-chat"),
    }
    extraction = cost[("extraction", "fake-chat")]
    # 2,000 prompt tokens at 2 USD and 400 completion tokens at 8 USD per million; the cached call is free.
    assert (
        extraction["calls"],
        extraction["cached_calls"],
        extraction["prompt_tokens"],
        extraction["completion_tokens"],
    ) == (3, 1, 2_000, 400)
    assert extraction["cost_usd"] == pytest.approx(0.0072)
    assert cost[("report", "fake-chat")]["cost_usd"] == pytest.approx(0.008)
    assert cost[("embedding", "fake-embed")]["cost_usd"] == pytest.approx(0.00004)
    assert cost[("local_search", "fake-chat")]["cost_usd"] == pytest.approx(0.008)
    total = sql.execute("SELECT sum(cost_usd) FROM llm_cost_by_corpus_stage_and_model").fetchone()[0]
    assert total == pytest.approx(0.0072 + 0.008 + 0.00004 + 0.008)
