"""LLM report context: the input token budget and sub-community substitution."""


from graphrag_assets.core.reports_llm import needs_sub_reports, report_context
from graphrag_assets.core.tokens import count_tokens


def _graph(n: int):
    entities = {
        f"e{i}": {"id": f"e{i}", "human_readable_id": i, "title": f"Entity {i}", "description": "A long description. " * 20, "degree": n - i}
        for i in range(n)
    }
    relationships = {
        f"r{i}": {"id": f"r{i}", "human_readable_id": i, "source": f"Entity {i}", "target": f"Entity {i + 1}", "source_id": f"e{i}", "target_id": f"e{i + 1}",
                  "description": "They work together. " * 10, "combined_degree": 2 * n - 2 * i}
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
    reports = {2: {"title": "Child two", "full_content": "# Child two\n\nSummary of the first thirty."}, 3: {"title": "Child three", "full_content": "Summary of twenty."}}
    community = {"community": 1, "entity_ids": list(entities), "relationship_ids": list(relationships), "children": [2, 3]}
    budget = 2_000
    assert needs_sub_reports(community, entities, relationships, budget)
    sections = report_context(community, entities, relationships, reports, children, budget)
    assert sum(count_tokens(text + "\n") for text in sections.values()) <= budget
    assert "Child two" in sections["reports"] and "Child three" in sections["reports"]
    # Entities covered by a sub-report are not repeated; uncovered ones (50-59) come first.
    assert "|Entity 0|" not in sections["entities"]
    assert "|Entity 50|" in sections["entities"]
