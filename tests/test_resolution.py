import json
from pathlib import Path

import duckdb
import polars as pl
import pytest

from graphrag_assets.core.extraction.names import name_key
from graphrag_assets.core.extraction.records import EXTRACTED_ENTITY_COLUMNS
from graphrag_assets.core.resolution import (
    DECISION_COLUMNS,
    FALLBACK,
    PAIR_COLUMNS,
    apply_resolution,
    candidate_pairs,
    resolve,
)
from graphrag_assets.llm.cache import LLMCache
from graphrag_assets.llm.client import LLMClient, run_with
from graphrag_assets.llm.settings import LLMSettings
from graphrag_assets.llm_stages.merge_confirmation import MAX_PAIRS_PER_CALL, STAGE, confirm_merges, pair_batches

from .fake_openai import FakeOpenAI, Fault

PAIRS = json.loads((Path(__file__).parent / "data" / "resolution_pairs.json").read_text())


def _records(names: list[tuple], source: str = "c/pages.jsonl") -> pl.DataFrame:
    """Extracted entity records of (title, type, mentions, text units[, description]); a
    name in several text units (space-separated) has a record in each."""
    rows = []
    for title, kind, mentions, units, *description in names:
        for unit in units.split():
            said = description[0] if description else f"{title} is named here."
            rows.append(
                {
                    "text_unit_id": unit,
                    "corpus": "c",
                    "source_partition": source,
                    "name_key": name_key(title),
                    "title": title,
                    "type": kind,
                }
                | {"description": said, "mentions": mentions}
            )
    return pl.DataFrame(rows, schema=EXTRACTED_ENTITY_COLUMNS)


def _case_records(case: dict) -> pl.DataFrame:
    names = [case["a"], case["b"], *case.get("others", [])]
    return _records(
        [(title, kind, 1, units, said) for title, kind, units, said in names], f"c/{case.get('source', 'pages.jsonl')}"
    )


@pytest.mark.parametrize("case", PAIRS["must_merge"], ids=lambda case: f"{case['a'][0]} ~ {case['b'][0]}")
def test_names_with_evidence_merge_and_the_evidence_is_recorded(case):
    records = _case_records(case)
    a, b = name_key(case["a"][0]), name_key(case["b"][0])
    mapping, merges = resolve(records, "c")
    assert mapping in ({a: b}, {b: a})
    assert merges.select("reason", "decided_by", "rejected").rows() == [(case["reason"], "rule", False)]


@pytest.mark.parametrize("case", PAIRS["must_not_merge"], ids=lambda case: f"{case['a'][0]} ~ {case['b'][0]}")
def test_distinct_names_without_evidence_stay_apart(case):
    records = _case_records(case)
    a, b = name_key(case["a"][0]), name_key(case["b"][0])
    mapping, _ = resolve(records, "c")
    assert mapping.get(a, a) != mapping.get(b, b)
    assert (
        candidate_pairs(records)
        .filter(pl.col("name_key_a").is_in([a, b]) & pl.col("name_key_b").is_in([a, b]))
        .is_empty()
    )


def test_the_pair_table_is_large_enough():
    assert len(PAIRS["must_merge"]) >= 15 and len(PAIRS["must_not_merge"]) >= 15


def test_variants_merge_into_the_most_frequent_name_and_merges_are_recorded():
    records = _records(
        [
            ("Cratchit", "PERSON", 9, "u1", "Cratchit carved the goose."),
            ("Cratchits", "PERSON", 4, "u1", "The Cratchits sat down to dinner."),
            (
                "Xiamen University",
                "ORGANIZATION",
                5,
                "u2",
                "The library of Xiamen University holds old maps of Fujian.",
            ),
            ("Xiamen Universty", "ORGANIZATION", 1, "u3", "The library of Xiamen Universty holds old maps."),  # a typo
            ("Tobias Renn", "PERSON", 6, "u4"),
            ("Renn", "PERSON", 2, "u4"),
            ("wretched man", "CONCEPT", 2, "u5"),
            ("wretched woman", "CONCEPT", 2, "u5"),
            ("Port Calder", "GEO", 5, "u6 u6"),
        ]
    )
    mapping, merges = resolve(records, "c")
    assert mapping == {"cratchits": "cratchit", "xiamen universty": "xiamen university", "renn": "tobias renn"}
    assert dict(merges.select("name_key", "reason").rows()) == {
        "cratchits": "inflection in same text unit",
        "xiamen universty": "spelling variant, same context",
        "renn": "alias in same text unit",
    }
    assert merges.filter(pl.col("name_key") == "renn")["merged_into_title"].to_list() == ["Tobias Renn"]


def test_an_ambiguous_first_name_is_not_merged_and_types_must_agree():
    records = _records(
        [
            ("Bob", "PERSON", 5, "u1"),
            ("Bob Cratchit", "PERSON", 3, "u1"),
            ("Bob Marley", "PERSON", 3, "u2"),
            ("Calder", "PERSON", 2, "u3"),
            ("Calder Bay", "GEO", 2, "u3"),
            ("Harbour Institute", "ORGANIZATION", 2, "u4"),
            ("Harbour Institutes", "GEO", 1, "u4", "The Harbour Institutes line the quay."),
        ]
    )
    mapping, _ = resolve(records, "c")
    assert mapping == {}


def test_a_short_name_merges_only_with_a_full_name_it_meets():
    # "Renn" and "Tobias Renn" never share a text unit of these separate documents; in
    # one book (a text file is one document) they do.
    names = [("Renn", "PERSON", 2, "u1"), ("Tobias Renn", "PERSON", 6, "u2")]
    assert resolve(_records(names), "c")[0] == {}
    mapping, merges = resolve(_records(names, source="c/ferry.txt"), "c")
    assert mapping == {"renn": "tobias renn"} and merges["reason"].to_list() == ["alias in same document"]


def test_applying_a_mapping_rewrites_records_and_drops_self_loops():
    entities = pl.DataFrame({"name_key": ["a", "a2", "b"], "text_unit_id": ["u", "u", "u"]})
    relationships = pl.DataFrame({"source_key": ["a", "a2"], "target_key": ["a2", "b"], "text_unit_id": ["u", "u"]})
    entities, relationships = apply_resolution(entities, relationships, {"a2": "a"})
    assert entities["name_key"].to_list() == ["a", "a", "b"]
    assert relationships.select("source_key", "target_key").rows() == [("a", "b")]


def test_the_model_confirms_one_merge_and_rejects_another_and_failures_keep_the_rule():
    records = _records(
        [
            ("Tobias Renn", "PERSON", 6, "u1"),
            ("Renn", "PERSON", 2, "u1"),
            ("Renn", "PERSON", 1, "u2", "Renn pilots the ferry."),
            ("Cratchit", "PERSON", 9, "u3"),
            ("Cratchits", "PERSON", 4, "u3", "The Cratchits sat down to dinner."),
        ],
        source="c/ferry.txt",
    )
    pairs = candidate_pairs(records)
    assert pairs.select("name_key_a", "name_key_b", "reason").rows() == [
        ("cratchit", "cratchits", "inflection in same text unit"),
        ("renn", "tobias renn", "alias in same text unit"),
    ]
    with FakeOpenAI() as fake:
        settings = LLMSettings(base_url=fake.base_url, api_key="sk-test-merges", model="fake-chat", max_retries=0)
        client = LLMClient(settings, LLMCache(duckdb.connect(":memory:")))

        # The call fails: both merges stand on the rule's word, and both pairs are reported.
        fake.faults.append(Fault(500))
        decisions, failures = run_with(lambda: client, lambda c: confirm_merges(c, pairs, records))
        assert set(decisions["decided_by"]) == {FALLBACK} and decisions["same"].all()
        assert sorted(failures["item_id"]) == ["cratchit ~ cratchits", "renn ~ tobias renn"]
        assert all(f["stage"] == STAGE and "HTTP 500" in f["error"] for f in failures.iter_rows(named=True))
        mapping, _ = resolve(records, "c", decisions=decisions)
        assert mapping == {"cratchits": "cratchit", "renn": "tobias renn"}

        # Answered: one call for both pairs, "Renn" is Tobias Renn, the Cratchits are not Cratchit.
        decisions, failures = run_with(lambda: client, lambda c: confirm_merges(c, pairs, records))
        mapping, merges = resolve(records, "c", decisions=decisions)
        assert failures.is_empty() and len(fake.completions(STAGE)) == 2  # the failed one and this one
        assert mapping == {"renn": "tobias renn"}
        assert merges.select("name_key", "merged_into_key", "decided_by", "rejected").rows() == [
            ("renn", "tobias renn", "fake-chat", False),
            ("cratchits", "cratchit", "fake-chat", True),
        ]
        assert merges["decision_reason"].to_list() == [
            "Both names contain 'renn'.",
            "The names have no word in common.",
        ]
        # The model saw each name's type, what the records say about it and the evidence.
        prompt = fake.completions(STAGE)[-1]["body"]["messages"][0]["content"]
        assert "Renn [PERSON]: Renn is named here. / Renn pilots the ferry." in prompt
        assert "(proposed because of: alias in same text unit)" in prompt

        # Asked again: answered from the cache.
        again, _ = run_with(lambda: client, lambda c: confirm_merges(c, pairs, records))
        assert again.equals(decisions) and len(fake.completions(STAGE)) == 2
        assert client.usage.stage(STAGE).calls == 1 and client.usage.stage(STAGE).cache_hits == 1


def test_names_told_apart_are_never_joined_through_other_merges():
    records = _records(
        [("Ellison", "PERSON", 5, "u1"), ("Ellisons", "PERSON", 2, "u1"), ("Ellisson", "PERSON", 1, "u2")]
    )
    decisions = pl.DataFrame(
        [
            ("ellison", "ellisons", "inflection", 1.0, True, "m", "same"),
            ("ellison", "ellisson", "spelling variant, same context", 0.8, False, "m", "different"),
            ("ellisons", "ellisson", "spelling variant, same context", 0.7, True, "m", "same"),
        ],
        schema=DECISION_COLUMNS,
        orient="row",
    )
    mapping, merges = resolve(records, "c", decisions=decisions)
    assert mapping == {"ellisons": "ellison"}
    kept_apart = merges.filter(pl.col("rejected")).sort("name_key")
    assert kept_apart.select("name_key", "merged_into_key").rows() == [
        ("ellisson", "ellison"),
        ("ellisson", "ellisons"),
    ]
    assert kept_apart["decision_reason"].to_list() == [
        "different",
        "not applied: it would join Ellison and Ellisson, which were told apart",
    ]


def test_pairs_are_asked_in_batches_of_whole_groups_and_a_new_name_re_asks_few():
    def pairs(numbers):
        return pl.DataFrame(
            [(f"name {i:03d}", f"name {i:03d}s", "inflection", 1.0) for i in numbers], schema=PAIR_COLUMNS, orient="row"
        )

    group = pl.DataFrame(
        [("harbour", "harbours", "inflection", 1.0), ("harbour", "old harbour", "alias in same text unit", 1.0)],
        schema=PAIR_COLUMNS,
        orient="row",
    )
    before = pair_batches(pairs(range(0, 400, 2)).vstack(group))
    assert len(before) <= 25 and all(len(batch) <= MAX_PAIRS_PER_CALL for batch in before)  # 202 pairs
    assert sum(any(p["name_key_a"] == "harbour" for p in batch) for batch in before) == 1
    # One more name changes the batches around it only; the rest are cache hits.
    changed = [
        sum(batch not in before for batch in pair_batches(pairs([*range(0, 400, 2), odd]).vstack(group)))
        for odd in range(1, 400, 2)
    ]
    assert max(changed) <= 4 and sum(changed) / len(changed) < 2
