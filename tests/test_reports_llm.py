"""LLM reports: the input token budget, sub-community substitution, and keeping a report
whose input did not change (against the OpenAI-compatible test server)."""

import duckdb
import polars as pl

from graphrag_assets.core.communities import COMMUNITY_COLUMNS
from graphrag_assets.llm.cache import LLMCache
from graphrag_assets.llm.client import LLMClient
from graphrag_assets.llm.settings import LLMSettings
from graphrag_assets.llm_stages.reports import llm_reports, needs_sub_reports, report_context
from graphrag_common.tokens import count_tokens

from .fake_openai import FakeOpenAI


def _graph(n: int):
    entities = {
        f"e{i}": {
            "id": f"e{i}",
            "human_readable_id": i,
            "title": f"Entity {i}",
            "description": "A long description. " * 20,
            "degree": n - i,
        }
        for i in range(n)
    }
    relationships = {
        f"r{i}": {
            "id": f"r{i}",
            "human_readable_id": i,
            "source": f"Entity {i}",
            "target": f"Entity {i + 1}",
            "source_id": f"e{i}",
            "target_id": f"e{i + 1}",
            "description": "They work together. " * 10,
            "combined_degree": 2 * n - 2 * i,
            "weight": float(n - i),
        }
        for i in range(n - 1)
    }
    return entities, relationships


def test_small_community_uses_its_own_rows_within_budget():
    entities, relationships = _graph(4)
    community = {"community": 1, "entity_ids": list(entities), "relationship_ids": list(relationships), "children": []}
    assert not needs_sub_reports(community, entities, relationships, 8_000)
    sections = report_context(community, entities, relationships, {}, {}, 8_000)
    assert sections["entities"].count("\n") == 4 and sections["relationships"].count("\n") == 3
    assert sections["reports"] == "community|title|report"


def test_big_community_substitutes_sub_reports_and_never_exceeds_the_budget():
    entities, relationships = _graph(60)
    children = {
        2: {"community": 2, "size": 30, "entity_ids": [f"e{i}" for i in range(30)]},
        3: {"community": 3, "size": 20, "entity_ids": [f"e{i}" for i in range(30, 50)]},
    }
    reports = {
        2: {"title": "Child two", "full_content": "# Child two\n\nSummary of the first thirty."},
        3: {"title": "Child three", "full_content": "Summary of twenty."},
    }
    community = {
        "community": 1,
        "entity_ids": list(entities),
        "relationship_ids": list(relationships),
        "children": [2, 3],
    }
    budget = 2_000
    assert needs_sub_reports(community, entities, relationships, budget)
    sections = report_context(community, entities, relationships, reports, children, budget)
    assert sum(count_tokens(text + "\n") for text in sections.values()) <= budget
    assert "Child two" in sections["reports"] and "Child three" in sections["reports"]
    # Entities covered by a sub-report are not repeated; uncovered ones (50-59) come first.
    assert "|Entity 0|" not in sections["entities"]
    assert "|Entity 50|" in sections["entities"]


def test_context_ignores_the_graph_outside_the_community():
    entities, relationships = _graph(4)
    community = {"community": 1, "entity_ids": list(entities), "relationship_ids": list(relationships), "children": []}
    before = report_context(community, entities, relationships, {}, {}, 8_000)
    # A member gains links to entities elsewhere: its global degree changes, the community does not.
    entities["e0"] = entities["e0"] | {"degree": 40}
    relationships = {key: r | {"combined_degree": r["combined_degree"] + 38} for key, r in relationships.items()}
    assert report_context(community, entities, relationships, {}, {}, 8_000) == before


def _frames():
    entities, relationships = _graph(6)
    entity_frame = pl.DataFrame(list(entities.values())).with_columns(
        pl.lit("PERSON").alias("type"), pl.lit(1).alias("frequency")
    )
    relationship_frame = pl.DataFrame(list(relationships.values()))
    communities = pl.DataFrame(
        [
            {
                "id": f"c{n}",
                "human_readable_id": n,
                "community": n,
                "level": level,
                "parent": parent,
                "children": children,
                "title": f"Community {n}",
                "entity_ids": members,
                "relationship_ids": [
                    r for r, v in relationships.items() if v["source_id"] in members and v["target_id"] in members
                ],
                "text_unit_ids": [],
                "period": "p",
                "size": len(members),
                "corpus": "c",
            }
            for n, level, parent, children, members in [
                (0, 0, -1, [2, 3], ["e0", "e1", "e2", "e3"]),
                (1, 0, -1, [], ["e4", "e5"]),
                (2, 1, 0, [], ["e0", "e1"]),
                (3, 1, 0, [], ["e2", "e3"]),
            ]
        ],
        schema=COMMUNITY_COLUMNS,
    )
    return communities, entity_frame, relationship_frame


def test_unchanged_reports_are_kept_without_a_call_and_changed_ones_rewritten():
    communities, entities, relationships = _frames()
    with FakeOpenAI() as fake:
        settings = LLMSettings(base_url=fake.base_url, api_key="sk-test", model="fake-chat")

        def write(entities, previous=None):
            # A fresh, empty LLM cache each time: keeping a report must not depend on it.
            client = lambda: LLMClient(settings, LLMCache(duckdb.connect(":memory:")))  # noqa: E731
            return llm_reports(client, communities, entities, relationships, "c", 8_000, "fake-chat", previous)

        first, failures, _ = write(entities)
        assert failures.is_empty() and len(fake.completions("community_report")) == 4
        assert first["input_hash"].is_not_null().all()

        again, _, written = write(entities, first)
        assert written == [] and len(fake.completions("community_report")) == 4
        assert again.equals(first)

        # e4's description changes: only community 1 (its only community) is rewritten.
        edited = entities.with_columns(
            pl.when(pl.col("id") == "e4")
            .then(pl.lit("A new description."))
            .otherwise(pl.col("description"))
            .alias("description")
        )
        third, _, written = write(edited, first)
        assert len(written) == 1 and len(fake.completions("community_report")) == 5
        changed = (
            third.join(first, on="id", suffix="_old")
            .filter(pl.col("input_hash") != pl.col("input_hash_old"))["community"]
            .to_list()
        )
        assert changed == [1]
