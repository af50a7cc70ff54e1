"""The LLM graph build: summaries no merge decision can change are written while the model
decides on the merges; the others wait for the decisions. Against the test server."""

import duckdb
import polars as pl

from graphrag_assets.core.extraction.records import EXTRACTED_ENTITY_COLUMNS, EXTRACTED_RELATIONSHIP_COLUMNS
from graphrag_assets.core.resolution import candidate_pairs
from graphrag_assets.llm.cache import LLMCache
from graphrag_assets.llm.client import LLMClient
from graphrag_assets.llm.settings import LLMSettings
from graphrag_assets.llm_stages.graph import build_llm_graph

from .fake_openai import FakeOpenAI

UNITS = pl.DataFrame({"id": ["u1", "u2"], "document_id": ["d", "d"], "chunk_index": [0, 1]})
BASE = {"corpus": "c", "source_partition": "c/ferry.txt"}


def _entity(unit: str, title: str, kind: str, description: str, mentions: int = 1) -> dict:
    return BASE | {
        "text_unit_id": unit,
        "name_key": title.lower(),
        "title": title,
        "type": kind,
        "description": description,
        "mentions": mentions,
    }


def _relationship(unit: str, source: str, target: str, description: str) -> dict:
    return BASE | {
        "text_unit_id": unit,
        "source_key": source,
        "target_key": target,
        "description": description,
        "weight": 5.0,
    }


RECORDS = pl.DataFrame(
    [
        _entity("u1", "Renn", "PERSON", "Renn pilots the ferry."),
        _entity("u2", "Tobias Renn", "PERSON", "Tobias Renn owns the ferry.", mentions=2),
        _entity("u1", "Mara", "PERSON", "Mara rows at dawn."),
        _entity("u2", "Mara", "PERSON", "Mara won the cup."),
        _entity("u1", "Harbor", "GEO", "The harbor is small."),
        _entity("u2", "Harbor", "GEO", "The harbor freezes in winter."),
    ],
    schema=EXTRACTED_ENTITY_COLUMNS,
)
RELATIONSHIPS = pl.DataFrame(
    [
        _relationship("u1", "harbor", "mara", "Mara trains in the harbor."),
        _relationship("u2", "harbor", "mara", "Mara keeps her boat in the harbor."),
        _relationship("u1", "harbor", "renn", "Renn docks in the harbor."),
        _relationship("u2", "harbor", "tobias renn", "Tobias Renn moors the ferry in the harbor."),
    ],
    schema=EXTRACTED_RELATIONSHIP_COLUMNS,
)


def _summary_calls(fake) -> dict[str, dict]:
    """Summary requests by the name they summarise."""
    calls = {}
    for request in fake.completions("summarize_descriptions"):
        prompt = request["body"]["messages"][0]["content"]
        name = prompt.split("describe the same ", 1)[1].split(":", 1)[1].split(". Write", 1)[0].strip()
        calls[name] = request
    return calls


def test_summaries_no_decision_can_change_are_written_while_the_model_decides():
    pairs = candidate_pairs(RECORDS)
    assert pairs.select("name_key_a", "name_key_b").rows() == [("renn", "tobias renn")]
    with FakeOpenAI(latency_seconds=0.3) as fake:
        settings = LLMSettings(base_url=fake.base_url, api_key="sk-test-graph", model="fake-chat")
        cache = LLMCache(duckdb.connect(":memory:"))
        entities, relationships, merges, failures = build_llm_graph(
            lambda: LLMClient(settings, cache), RECORDS, RELATIONSHIPS, UNITS, "c", pairs, confirm=True
        )
        (decision,) = fake.completions("confirm_merges")
        summaries = _summary_calls(fake)

    assert failures.is_empty()
    assert merges.select("name_key", "merged_into_key", "rejected").rows() == [("renn", "tobias renn", False)]
    # Each summary was asked once: the early ones were not asked again after the decision.
    assert sorted(summaries) == ["Harbor", "Harbor -> Mara", "Harbor -> Tobias Renn", "Mara", "Tobias Renn"]
    assert len(fake.completions("summarize_descriptions")) == 5
    # Names outside the proposed pair did not wait for the decision; merged ones did.
    for name in ["Harbor", "Mara", "Harbor -> Mara"]:
        assert summaries[name]["started"] < decision["finished"], name
    for name in ["Tobias Renn", "Harbor -> Tobias Renn"]:
        assert summaries[name]["started"] >= decision["finished"], name
    # The summaries are in the graph, the merged ferry owner among them.
    described = dict(entities.select("title", "description").rows())
    assert described["Tobias Renn"] == "Renn pilots the ferry. Tobias Renn owns the ferry."
    assert described["Mara"] == "Mara rows at dawn. Mara won the cup."
    assert dict(relationships.select(pl.concat_str("source", pl.lit(" -> "), "target"), "description").rows())[
        "Harbor -> Mara"
    ] == ("Mara keeps her boat in the harbor. Mara trains in the harbor.")


def test_a_weak_models_numbers_and_unknown_types_are_screened_and_typed():
    """What SmolLM2-135M answered for a text with "In 1998" and "until 2004": a relationship
    between "1" and "2004", the trust typed "Entities" by the extraction and "Organisation"
    by the gleaning."""
    from graphrag_assets.core.extraction.records import majority_type
    from graphrag_assets.llm.models import GraphExtraction
    from graphrag_assets.llm_stages.extraction import records_from

    text = "The Kelsey Harbour Trust runs the old ferry pier. In 1998 it hired a harbour master until 2004."
    extraction = GraphExtraction.model_validate(
        {
            "entities": [
                {"name": "The Kelsey Harbour Trust", "type": "Entities", "description": "A trust."},
                {"name": "The Kelsey Harbour Trust", "type": "Organisation", "description": "Runs the pier."},
            ],
            "relationships": [{"source": "1", "target": "2004", "description": "Oskar Venn", "strength": 9}],
        }
    )
    unit = {"id": "u1", "corpus": "harbour", "source_partition": "harbour/a.txt", "text": text}
    entities, relationships, rejections = records_from(unit, extraction, ["ORGANIZATION", "PERSON", "GEO", "EVENT"])
    # "1" is not in the text ("1998" is another number): the relationship goes with it.
    assert [(e["title"], e["type"]) for e in entities] == [("The Kelsey Harbour Trust", "ORGANIZATION")]
    assert relationships == []
    assert ("1", "not in the text") in rejections
    # Across units too, an unknown type does not win a tie against a known one.
    assert majority_type({"": 1, "ORGANIZATION": 1}) == "ORGANIZATION"
    assert majority_type({"": 1}) == ""
