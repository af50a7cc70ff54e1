import duckdb
import polars as pl

from graphrag_assets.core.merge_confirmation import MAX_PAIRS_PER_CALL, STAGE, confirm_merges, pair_batches
from graphrag_assets.core.resolution import DECISION_COLUMNS, FALLBACK, PAIR_COLUMNS, apply_resolution, candidate_pairs, resolve
from graphrag_assets.llm.client import LLMCache, LLMClient, run_with
from graphrag_assets.llm.settings import LLMSettings

from .fake_openai import FakeOpenAI, Fault


def _records(names: list[tuple[str, str, str, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        [{"name_key": key, "title": title, "type": kind, "mentions": n, "description": f"{title} is named here."} for key, title, kind, n in names],
        schema={"name_key": pl.String, "title": pl.String, "type": pl.String, "mentions": pl.Int64, "description": pl.String},
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


def test_the_model_confirms_one_merge_and_rejects_another_and_failures_keep_the_rule():
    records = _records(
        [
            ("tobias renn", "Tobias Renn", "PERSON", 6),
            ("renn", "Renn", "PERSON", 2),
            ("cratchit", "Cratchit", "PERSON", 9),
            ("cratchits", "Cratchits", "PERSON", 4),
        ]
    ).vstack(pl.DataFrame([{"name_key": "renn", "title": "Renn", "type": "PERSON", "mentions": 1, "description": "Renn pilots the ferry."}]))
    pairs = candidate_pairs(records)
    assert pairs.select("name_key_a", "name_key_b", "reason").rows() == [
        ("cratchit", "cratchits", "spelling"),
        ("renn", "tobias renn", "part of a full name"),
    ]
    with FakeOpenAI() as fake:
        settings = LLMSettings(base_url=fake.base_url, api_key="sk-test-merges", model="fake-chat", max_retries=0)
        client = LLMClient(settings, LLMCache(duckdb.connect(":memory:")))

        # The call fails: both merges stand on the rule's word, and both pairs are reported.
        fake.faults.append(Fault(500))
        decisions, failures = run_with(lambda: client, lambda c: confirm_merges(c, pairs, records))
        assert set(decisions["decided_by"]) == {FALLBACK} and decisions["same"].all()
        assert sorted(f["item_id"] for f in failures) == ["cratchit ~ cratchits", "renn ~ tobias renn"]
        assert all(f["stage"] == STAGE and "HTTP 500" in f["error"] for f in failures)
        mapping, _ = resolve(records, "c", decisions=decisions)
        assert mapping == {"cratchits": "cratchit", "renn": "tobias renn"}

        # Answered: one call for both pairs, "Renn" is Tobias Renn, the Cratchits are not Cratchit.
        decisions, failures = run_with(lambda: client, lambda c: confirm_merges(c, pairs, records))
        mapping, merges = resolve(records, "c", decisions=decisions)
        assert not failures and len(fake.completions(STAGE)) == 2  # the failed one and this one
        assert mapping == {"renn": "tobias renn"}
        assert merges.select("name_key", "merged_into_key", "decided_by", "rejected").rows() == [
            ("renn", "tobias renn", "fake-chat", False),
            ("cratchits", "cratchit", "fake-chat", True),
        ]
        assert merges["decision_reason"].to_list() == ["Both names contain 'renn'.", "The names have no word in common."]
        # The model saw each name's type and what the records say about it.
        prompt = fake.completions(STAGE)[-1]["body"]["messages"][0]["content"]
        assert "Renn [PERSON]: Renn is named here. / Renn pilots the ferry." in prompt

        # Asked again: answered from the cache.
        again, _ = run_with(lambda: client, lambda c: confirm_merges(c, pairs, records))
        assert again.equals(decisions) and len(fake.completions(STAGE)) == 2
        assert client.usage.stage(STAGE).calls == 1 and client.usage.stage(STAGE).cache_hits == 1


def test_names_told_apart_are_never_joined_through_other_merges():
    records = _records([("ellison", "Ellison", "PERSON", 5), ("ellisons", "Ellisons", "PERSON", 2), ("ellisson", "Ellisson", "PERSON", 1)])
    decisions = pl.DataFrame(
        [
            ("ellison", "ellisons", "spelling", 94.1, True, "m", "same"),
            ("ellison", "ellisson", "spelling", 93.3, False, "m", "different"),
            ("ellisons", "ellisson", "spelling", 87.5, True, "m", "same"),
        ],
        schema=DECISION_COLUMNS,
        orient="row",
    )
    mapping, merges = resolve(records, "c", decisions=decisions)
    assert mapping == {"ellisons": "ellison"}
    kept_apart = merges.filter(pl.col("rejected")).sort("name_key")
    assert kept_apart.select("name_key", "merged_into_key").rows() == [("ellisson", "ellison"), ("ellisson", "ellisons")]
    assert kept_apart["decision_reason"].to_list() == ["different", "not applied: it would join Ellison and Ellisson, which were told apart"]


def test_pairs_are_asked_in_batches_of_whole_groups_and_a_new_name_re_asks_few():
    def pairs(numbers):
        return pl.DataFrame([(f"name {i:03d}", f"name {i:03d}s", "spelling", 95.0) for i in numbers], schema=PAIR_COLUMNS, orient="row")

    group = pl.DataFrame([("harbour", "harbours", "spelling", 94.0), ("harbour", "old harbour", "spelling", 90.0)], schema=PAIR_COLUMNS, orient="row")
    before = pair_batches(pairs(range(0, 400, 2)).vstack(group))
    assert len(before) <= 25 and all(len(batch) <= MAX_PAIRS_PER_CALL for batch in before)  # 202 pairs
    assert sum(any(p["name_key_a"] == "harbour" for p in batch) for batch in before) == 1
    # One more name changes the batches around it only; the rest are cache hits.
    changed = [sum(batch not in before for batch in pair_batches(pairs([*range(0, 400, 2), odd]).vstack(group))) for odd in range(1, 400, 2)]
    assert max(changed) <= 4 and sum(changed) / len(changed) < 2
