"""The whole asset graph through the LLM path, against the OpenAI-compatible test server."""

import json
from collections import Counter

import duckdb

from .conftest import FAKE_LLM_KEY
from .fake_openai import Fault

KEY = FAKE_LLM_KEY


def _sql(settings, query):
    with duckdb.connect(settings.db, read_only=True) as connection:
        return connection.execute(query).fetchall()


SPACING = "punctuation, spacing or diacritics"


def _rowing_notes(input_dir) -> None:
    """Names that resolution proposes to merge: "Salt Marsh Square" (the sample corpus has
    "Saltmarsh Square"), which shares a word with it, and "Penhalow"/"Penhallow", a
    one-letter variant in two files, which shares none (the fake model confirms the first
    kind of pair and rejects the second)."""
    (input_dir / "default" / "rowing_club.txt").write_text(
        "Rowing notes: the cup went to the crew of Salt Marsh Square, and Penhalow cheered.\n"
    )
    (input_dir / "default" / "sailing_club.txt").write_text(
        "Sailing notes: the regatta went to the dinghy crew, and Penhallow cheered.\n"
    )


def _entities_llm_usage(instance) -> dict:
    from dagster import AssetKey

    return (
        instance.get_latest_materialization_event(AssetKey("entities"))
        .asset_materialization.metadata["llm_by_stage"]
        .value
    )


def test_llm_index_tables_calls_cache_and_no_key_anywhere(fake_llm, input_dir, index, instance, dagster_home, tmp_path):
    # Resolution proposes "Penhalow"/"Penhallow" (a one-letter variant in the same context),
    # which the model rejects, and "Salt Marsh Square"/"Saltmarsh Square", which it confirms.
    _rowing_notes(input_dir)
    settings, report = index(input_dir)
    assert not report.failed_runs
    units = _sql(settings, "SELECT count(*) FROM text_units")[0][0]
    communities = _sql(settings, "SELECT count(*) FROM communities")[0][0]
    tasks = Counter(r["task"] for r in fake_llm.completions())
    # One extraction and one gleaning pass per text unit (the model found nothing missed),
    # one report per community, one summary per entity/relationship with several descriptions.
    assert tasks["extract_graph"] == units and tasks["glean"] == units
    assert tasks["community_report"] == communities
    multi = _sql(
        settings, "SELECT count(*) FROM extracted_entities GROUP BY name_key HAVING count(DISTINCT description) > 1"
    )
    assert tasks["summarize_descriptions"] >= len(multi)
    assert report.llm_calls == sum(tasks.values()) + len(fake_llm.embedding_requests())

    # Both proposed merges went to the model in one call; the rejected one is recorded, not applied.
    assert tasks["confirm_merges"] == 1
    merges = _sql(
        settings,
        (
            "SELECT title, merged_into_title, reason, decided_by, rejected, decision_reason FROM entity_merges ORDER "
            "BY rejected"
        ),
    )
    # The merged entity keeps one of the two written forms; the merge names it as the graph does.
    square = _sql(settings, "SELECT title FROM entities WHERE title IN ('Salt Marsh Square', 'Saltmarsh Square')")
    assert len(square) == 1
    assert merges == [
        ("Salt Marsh Square", square[0][0], SPACING, "fake-chat", False, "Both names contain 'square'."),
        (merges[1][0], merges[1][1], merges[1][2], "fake-chat", True, "The names have no word in common."),
    ]
    assert {merges[1][0], merges[1][1]} == {"Penhalow", "Penhallow"} and merges[1][2].startswith("spelling variant")
    assert _sql(settings, "SELECT title FROM entities WHERE title IN ('Penhalow', 'Penhallow') ORDER BY title") == [
        ("Penhallow",),
        ("Penhalow",),
    ]
    assert _sql(settings, "SELECT count(*) FROM entities WHERE title ILIKE '%marsh square'") == [(1,)]
    assert _entities_llm_usage(instance)["confirm_merges"]["calls"] == 1

    assert _sql(settings, "SELECT DISTINCT generated_by FROM community_reports") == [("fake-chat",)]
    assert _sql(settings, "SELECT DISTINCT model, len(vector) FROM embeddings") == [("fake-embed", 16)]
    # A person named in several text units is one entity (the fake model types multi-word names PERSON).
    mara = _sql(settings, "SELECT type, frequency FROM entities WHERE title = 'Mara Ellison'")
    assert mara and mara[0][0] == "PERSON"
    assert _sql(settings, "SELECT max(frequency) FROM entities WHERE type = 'PERSON'")[0][0] >= 2
    weights = _sql(settings, "SELECT min(weight) FROM relationships")[0][0]
    assert weights >= 5  # strengths add up across text units

    # Re-materializing everything with unchanged inputs makes zero calls (all cached).
    before = len(fake_llm.requests)
    with duckdb.connect(settings.db) as connection:
        connection.execute("DELETE FROM sources")
        connection.execute("DELETE FROM corpus_builds")
    _, again = index(input_dir)
    assert again.source_runs and again.graph_runs
    assert len(fake_llm.requests) == before
    assert again.llm_calls == 0
    assert (
        _entities_llm_usage(instance)["confirm_merges"] | {"cache_hits": 1, "calls": 0}
        == _entities_llm_usage(instance)["confirm_merges"]
    )

    # The key is nowhere on disk: index, snapshot, vectors, Dagster's run and event storage.
    secret = KEY.encode()
    for folder in [tmp_path]:
        for path in folder.rglob("*"):
            if path.is_file():
                assert secret not in path.read_bytes(), path


def test_failed_calls_are_recorded_checked_and_retried_alone(fake_llm, input_dir, index, instance, monkeypatch):
    monkeypatch.setenv("GRAPHRAG_LLM_MAX_RETRIES", "1")
    # Both attempts at one text unit's extraction fail; everything else goes through.
    unit = "Calder Shipping: A Company Profile"
    fake_llm.faults.extend([Fault(500, match=unit), Fault(500, match=unit)])
    # So do both attempts at confirming the merge resolution proposes.
    fake_llm.faults.extend([Fault(500, match="[task: confirm_merges]") for _ in range(2)])
    _rowing_notes(input_dir)
    settings, report = index(input_dir)
    failures = _sql(settings, "SELECT scope, stage, error FROM llm_failures WHERE stage <> 'confirm_merges'")
    assert len(failures) == 1 and failures[0][1] == "extraction" and "HTTP 500" in failures[0][2]
    failed_source = failures[0][0]
    # The source with the failed text unit is chunked but not marked extracted, and the check says so.
    assert _sql(
        settings,
        f"SELECT status, settings_hash, text_units > 0 FROM sources WHERE source_partition = '{failed_source}'",
    ) == [("failed", None, True)]
    from dagster import AssetCheckKey, AssetKey
    from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

    key = AssetCheckKey(AssetKey("extractions"), "extraction_calls_succeeded")
    assert (
        instance.event_log_storage.get_latest_asset_check_execution_by_key([key])[key].status
        == AssetCheckExecutionRecordStatus.FAILED
    )
    # The unconfirmed merges stand on the rule's word, and the failure is recorded and checked.
    failed = _sql(
        settings, "SELECT scope, stage, item_id FROM llm_failures WHERE stage = 'confirm_merges' ORDER BY item_id"
    )
    assert failed == [
        ("default#summary", "confirm_merges", "penhallow ~ penhalow"),
        ("default#summary", "confirm_merges", "salt marsh square ~ saltmarsh square"),
    ]
    assert _sql(settings, "SELECT DISTINCT decided_by, rejected FROM entity_merges") == [("rule (LLM failed)", False)]
    key = AssetCheckKey(AssetKey("entities"), "summary_calls_succeeded")
    assert (
        instance.event_log_storage.get_latest_asset_check_execution_by_key([key])[key].status
        == AssetCheckExecutionRecordStatus.FAILED
    )

    before = Counter(r["task"] for r in fake_llm.completions())
    _, retry = index(input_dir)
    after = Counter(r["task"] for r in fake_llm.completions())
    assert [s.partition_key for s in retry.plan.changed] == [failed_source]
    assert after["extract_graph"] - before["extract_graph"] == 1  # only the failed unit
    assert _sql(settings, "SELECT count(*) FROM llm_failures") == [(0,)]
    assert _sql(settings, "SELECT DISTINCT decided_by FROM entity_merges") == [("fake-chat",)]


def test_an_embedding_outage_fails_only_the_embeddings_and_a_rerun_completes_without_completions(
    fake_llm, input_dir, index, monkeypatch
):
    monkeypatch.setenv("GRAPHRAG_LLM_MAX_RETRIES", "1")
    # The embedding endpoint is down for the whole first pass: the embeddings requested
    # ahead during extraction and reports fail, and so does the embeddings step.
    fake_llm.faults.extend(Fault(503, path="/embeddings") for _ in range(1000))
    settings, first = index(input_dir)
    assert len(first.failed_runs) == 1 and len(first.graph_runs) == 0  # the graph run failed at embeddings
    assert len(first.source_runs) >= 1
    # Extraction and reports went through regardless; nothing of theirs is lost.
    assert _sql(settings, "SELECT count(*) FROM llm_failures") == [(0,)]
    assert (
        _sql(settings, "SELECT count(*) FROM community_reports")[0][0]
        == _sql(settings, "SELECT count(*) FROM communities")[0][0]
        > 0
    )
    assert _sql(settings, "SELECT count(*) FROM embeddings") == [(0,)]

    fake_llm.faults.clear()  # the endpoint is back
    completions = len(fake_llm.completions())
    _, second = index(input_dir)
    assert second.graph_runs and not second.failed_runs
    assert len(fake_llm.completions()) == completions  # every completion came from the cache
    kinds = {kind for (kind,) in _sql(settings, "SELECT DISTINCT kind FROM embeddings")}
    assert kinds == {"text_unit_text", "entity_description", "community_full_content"}


def test_junk_names_are_screened_out_with_their_reasons(fake_llm, input_dir, index, instance):
    from dagster import AssetKey

    (input_dir / "default" / "weak_model.txt").write_text("Notes: Mara Quell rowed across Lantern Bay at dawn.\n")
    junk = {
        "entities": [
            {"name": "Mara Quell", "type": "PEOPLE", "description": "A rower."},
            {"name": "Entity", "type": "PERSON", "description": "The entity."},
            {"name": "https://example.com/rowing", "type": "ORGANIZATION", "description": "A link."},
            {"name": "Mara Quell rowed across Lantern Bay at dawn.", "type": "EVENT", "description": "It happened."},
            {"name": "Lantern Bay", "type": "BAND, NORTHERN LIGHTS", "description": "Water."},
            {"name": "Osric Vane", "type": "PERSON", "description": "Never mentioned."},
        ],
        "relationships": [
            {"source": "Mara Quell", "target": "Osric Vane", "description": "Invented.", "strength": 5},
            {"source": "Mara Quell", "target": "Lantern Bay", "description": "Rows there.", "strength": 14},
        ],
    }
    fake_llm.faults.append(Fault(body=json.dumps(junk), match="Mara Quell rowed"))
    settings, report = index(input_dir)
    assert not report.failed_runs
    rows = _sql(
        settings,
        "SELECT title, type FROM extracted_entities WHERE source_partition LIKE '%weak_model%' "
        "AND title IN ('Mara Quell', 'Lantern Bay', 'Entity', 'Osric Vane') ORDER BY title",
    )
    # The rower's type mapped onto a configured one; the bay's cleared, its name kept.
    assert rows == [("Lantern Bay", ""), ("Mara Quell", "PERSON")]
    assert _sql(
        settings,
        "SELECT weight FROM extracted_relationships WHERE source_partition LIKE '%weak_model%' "
        "AND source_key = 'lantern bay' AND target_key = 'mara quell'",
    ) == [(10.0,)]  # strength 14 clamped
    metadata = instance.get_latest_materialization_event(AssetKey("extractions")).asset_materialization.metadata
    assert metadata["names_screened_out"].value == {
        "not in the text": 1,
        "placeholder": 1,
        "sentence": 1,
        "type 'BAND, NORTHERN LIGHTS' not in GRAPHRAG_ENTITY_TYPES (cleared)": 1,
        "url": 1,
    }


def test_a_model_that_finds_nothing_fails_the_graph_and_publishes_nothing(fake_llm, input_dir, index):
    fake_llm.faults.extend([Fault(body='{"entities": [], "relationships": []}', match="[task: extract_graph]")] * 200)
    settings, report = index(input_dir)
    assert report.failed_runs
    assert any(
        "no entity extracted from any of the" in error and "GRAPHRAG_LLM_MODE" in error for error in report.errors
    )
    assert _sql(settings, "SELECT count(*) FROM entities") == [(0,)]
    assert _sql(settings, "SELECT count(*) FROM community_reports") == [(0,)]
