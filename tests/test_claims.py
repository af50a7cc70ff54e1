"""Claims (covariates) on the LLM path: extracted per text unit alongside the graph, stored
per source, resolved to merged entities when read, used by community reports and local
search; nothing of it when claims are off (the default). Against the OpenAI-compatible
test server, through the whole asset graph."""

import re
from collections import Counter

import duckdb
import polars as pl
from dagster import AssetCheckKey, AssetKey
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

from graphrag_assets.core.claims import CLAIM_HEADER, claim_line, claim_records, resolve_claims
from graphrag_assets.llm.prompts import load_prompt
from graphrag_assets.llm_stages.reports import report_context
from graphrag_common.tokens import count_tokens
from graphrag_query import IndexReader, local_search

from .fake_openai import Fault

CLAIM_COLUMNS = [
    "id",
    "human_readable_id",
    "subject",
    "object",
    "type",
    "status",
    "start_date",
    "end_date",
    "description",
    "source_text",
    "text_unit_id",
]


def _frame(settings, query: str) -> pl.DataFrame:
    with duckdb.connect(settings.db, read_only=True) as connection:
        return connection.execute(query).pl()


def _tasks(fake) -> Counter:
    return Counter(r["task"] for r in fake.completions())


def _section(prompt: str, name: str) -> list[str]:
    match = re.search(rf"-----{name}-----\n(.*?)(?:\n\n-----|\Z)", prompt, re.S)
    return match.group(1).splitlines()[1:] if match else []


def _claims_usage(instance) -> dict:
    metadata = instance.get_latest_materialization_event(AssetKey("extractions")).asset_materialization.metadata
    return metadata["llm_by_stage"].value.get("claims", {})


def test_claims_off_by_default_then_on_through_the_whole_asset_graph(fake_llm, input_dir, index, instance, monkeypatch):
    # A name entity resolution merges ("Salt Marsh Square" into the corpus's "Saltmarsh Square").
    (input_dir / "default" / "harbour_walk.txt").write_text("Salt Marsh Square hosted Mara Ellison for the regatta.\n")
    # Off (the default): no claim call, no claim rows, an empty claims frame in local search.
    settings, report = index(input_dir)
    assert not report.failed_runs and _tasks(fake_llm)["extract_claims"] == 0
    assert _frame(settings, "SELECT count(*) AS n FROM covariates")["n"][0] == 0
    assert all(
        "-----Claims-----\n" + CLAIM_HEADER + "\n\n" in r["body"]["messages"][0]["content"]
        for r in fake_llm.completions("community_report")
    )
    off = local_search("What did Clara Okafor do?", reader=IndexReader(settings.db))
    assert off.context["claims"].is_empty() and off.context["claims"].columns == CLAIM_COLUMNS

    # On: the extraction fingerprint changes, every source is re-extracted from its stored
    # text units (no file is read again); the graph calls come from the cache, so the new
    # calls are one claim call per text unit.
    monkeypatch.setenv("GRAPHRAG_LLM_CLAIMS", "true")
    before = _tasks(fake_llm)
    _, report = index(input_dir)
    assert not report.failed_runs and report.plan.pending == [] and report.graph_runs
    new = _tasks(fake_llm) - before
    units = _frame(settings, "SELECT id, source_partition FROM text_units")
    assert new["extract_claims"] == units.height and new["extract_graph"] == 0 and new["glean"] == 0
    assert _claims_usage(instance)["calls"] == units.height

    # Rows linked to real text units, with graphrag's covariate columns and statuses.
    claims = _frame(settings, "SELECT * FROM covariates")
    assert claims.height > 0
    assert set(claims["text_unit_id"]) <= set(units["id"])
    assert claims.join(units, left_on="text_unit_id", right_on="id")["source_partition_right"].equals(
        claims.join(units, left_on="text_unit_id", right_on="id")["source_partition"]
    )
    assert set(claims["covariate_type"]) == {"claim"} and set(claims["status"]) <= {"TRUE", "FALSE", "SUSPECTED"}
    assert claims["id"].n_unique() == claims["human_readable_id"].n_unique() == claims.height
    # Subjects are entity names as extracted in their own text unit.
    extracted = _frame(settings, "SELECT text_unit_id, title FROM extracted_entities")
    assert (
        claims.join(extracted, left_on=["text_unit_id", "subject_id"], right_on=["text_unit_id", "title"]).height
        == claims.height
    )

    # Read, every subject is an entity of the graph; a merged name reads as the entity it
    # was merged into, under the title the graph gave it.
    reader = IndexReader(settings.db)
    entities = reader.table("entities")
    resolved = reader.claims
    assert resolved["subject_entity_id"].is_not_null().all()
    assert set(resolved["subject_id"]) <= set(entities["title"])
    merges = _frame(settings, "SELECT title, merged_into_title FROM entity_merges WHERE NOT rejected")
    merged = claims.join(merges, left_on="subject_id", right_on="title")
    assert merged.height > 0
    assert (
        resolved.join(merged.select("id", "merged_into_title"), on="id")
        .filter(pl.col("subject_id") != pl.col("merged_into_title"))
        .is_empty()
    )

    # Reports: each community's context holds claims about its own members only.
    claim_lines = {claim_line(c) for c in resolved.iter_rows(named=True)}
    reported = 0
    for request in fake_llm.completions("community_report"):
        prompt = request["body"]["messages"][0]["content"]
        members = {row.split("|")[1] for row in _section(prompt, "Entities")}
        for line in _section(prompt, "Claims"):
            assert line in claim_lines and line.split("|")[1] in members
            reported += 1
    assert reported > 0
    assert _frame(settings, "SELECT count(*) AS n FROM llm_failures")["n"][0] == 0

    # Local search: claims about the selected entities, in the context and in the prompt.
    result = local_search("What did Clara Okafor do?", reader=reader)
    found = result.context["claims"]
    assert found.height > 0 and found.columns == CLAIM_COLUMNS
    assert set(found["subject"]) <= set(result.context["entities"]["title"])
    answer_prompt = fake_llm.completions("answer")[-1]["body"]["messages"][0]["content"]
    assert "-----Claims-----" in answer_prompt and found["description"][0] in answer_prompt

    # Everything again with unchanged inputs: zero calls, the same claims with the same numbers.
    with duckdb.connect(settings.db) as connection:
        connection.execute("DELETE FROM sources")
        connection.execute("DELETE FROM corpus_builds")
    calls = len(fake_llm.requests)
    _, again = index(input_dir)
    assert again.source_runs and again.llm_calls == 0 and len(fake_llm.requests) == calls
    assert _claims_usage(instance) | {"calls": 0, "cache_hits": units.height} == _claims_usage(instance)
    assert _frame(settings, "SELECT * FROM covariates ORDER BY id").equals(claims.sort("id"))

    # Deleting a source retracts its claims (and readers no longer see them).
    (input_dir / "default" / "calder_shipping.txt").unlink()
    _, deleted = index(input_dir)
    assert deleted.plan.deleted == ["default/calder_shipping.txt"]
    assert claims.filter(pl.col("source_partition") == "default/calder_shipping.txt").height > 0
    assert (
        _frame(settings, "SELECT count(*) AS n FROM covariates WHERE source_partition = 'default/calder_shipping.txt'")[
            "n"
        ][0]
        == 0
    )
    assert _frame(settings, "SELECT count(*) AS n FROM covariates")["n"][0] > 0
    remaining = set(IndexReader(settings.db).claims["text_unit_id"])
    assert remaining and remaining <= set(_frame(settings, "SELECT id FROM text_units")["id"])


def test_a_failed_claim_call_is_recorded_checked_and_retried_alone(fake_llm, input_dir, index, instance, monkeypatch):
    monkeypatch.setenv("GRAPHRAG_LLM_CLAIMS", "true")
    monkeypatch.setenv("GRAPHRAG_LLM_MAX_RETRIES", "1")
    # Both attempts at the claims of one text unit fail (its graph calls go through).
    claims_of_unit = load_prompt("extract_claims").text.split("$text")[0][-40:] + "Calder Shipping: A Company Profile"
    fake_llm.faults.extend([Fault(500, match=claims_of_unit) for _ in range(2)])
    settings, _ = index(input_dir)
    failures = _frame(settings, "SELECT scope, stage, item_id, error FROM llm_failures")
    assert failures["stage"].to_list() == ["claims"] and "HTTP 500" in failures["error"][0]
    unit, scope = failures["item_id"][0], failures["scope"][0]
    # The unit's graph records are there, its claims are not, its source is not complete.
    assert _frame(settings, f"SELECT count(*) AS n FROM extracted_entities WHERE text_unit_id = '{unit}'")["n"][0] > 0
    assert (
        _frame(
            settings,
            f"SELECT count(*) AS n FROM sources WHERE source_partition = '{scope}' AND settings_hash IS NOT NULL",
        )["n"][0]
        == 0
    )
    key = AssetCheckKey(AssetKey("extractions"), "extraction_calls_succeeded")
    assert (
        instance.event_log_storage.get_latest_asset_check_execution_by_key([key])[key].status
        == AssetCheckExecutionRecordStatus.FAILED
    )

    before = _tasks(fake_llm)
    _, retry = index(input_dir)
    assert [s.partition_key for s in retry.plan.changed] == [scope]
    new = _tasks(fake_llm) - before
    # Only the failed call is made again (then the reports its new claims enter are rewritten).
    assert (new["extract_claims"], new["extract_graph"], new["glean"]) == (1, 0, 0)
    assert _frame(settings, "SELECT count(*) AS n FROM llm_failures")["n"][0] == 0
    assert (
        _frame(
            settings,
            f"SELECT count(*) AS n FROM sources WHERE source_partition = '{scope}' AND settings_hash IS NOT NULL",
        )["n"][0]
        == 1
    )


def _claims_frame() -> pl.DataFrame:
    unit = {"id": "u1", "corpus": "c", "source_partition": "c/a.txt"}
    raw = [
        {
            "subject": "Entity 1",
            "object": "Entity 0",
            "type": "funding",
            "status": "TRUE",
            "description": "Entity 1 funds Entity 0.",
            "source_text": "...",
        },
        {
            "subject": "ENTITY 0",
            "object": "none",
            "type": "plan",
            "status": "SUSPECTED",
            "start_date": "2024-01-01",
            "description": "Entity 0 plans a pier.",
            "source_text": "...",
        },
        {
            "subject": "Ent. 0",
            "object": None,
            "type": "plan",
            "status": "FALSE",
            "description": "Ent. 0 denies the pier.",
            "source_text": "...",
        },
        {
            "subject": "Entity 9",
            "object": None,
            "type": "award",
            "status": "TRUE",
            "description": "Entity 9 won a prize.",
            "source_text": "...",
        },
        {
            "subject": " ",
            "object": None,
            "type": "x",
            "status": "TRUE",
            "description": "no subject",
            "source_text": "...",
        },
    ]
    rows = claim_records(unit, raw + raw[:1], {"entity 0": "Entity 0"})
    return pl.DataFrame([row | {"human_readable_id": i} for i, row in enumerate(rows)])


def test_claim_records_use_extracted_names_and_resolve_through_merges():
    claims = _claims_frame()
    assert claims.height == 4  # the repeat and the claim without a subject are dropped
    assert sorted(claims["subject_id"]) == [
        "Ent. 0",
        "Entity 0",
        "Entity 1",
        "Entity 9",
    ]  # "ENTITY 0" takes the unit's title
    assert claims.filter(pl.col("type") == "PLAN")["object_id"].to_list() == [None, None]
    entities = pl.DataFrame(
        {"id": ["e0", "e1"], "title": ["Entity 0", "Entity 1"], "name_key": ["entity 0", "entity 1"]}
    )
    merges = pl.DataFrame({"name_key": ["ent 0"], "merged_into_key": ["entity 0"], "rejected": [False]})
    resolved = resolve_claims(claims, entities, merges).sort("description")
    assert resolved.select("subject_id", "subject_entity_id", "object_entity_id").rows() == [
        ("Entity 0", "e0", None),  # "Ent. 0" was merged into "Entity 0"
        ("Entity 0", "e0", None),
        ("Entity 1", "e1", "e0"),
        ("Entity 9", None, None),  # no such entity: kept as extracted
    ]
    # A rejected merge is not followed.
    rejected = resolve_claims(claims, entities, merges.with_columns(pl.lit(True).alias("rejected")))
    assert "Ent. 0" in rejected["subject_id"].to_list()


def test_report_context_holds_members_claims_in_content_order_within_budget():
    claims = resolve_claims(
        _claims_frame(),
        pl.DataFrame({"id": ["e0", "e1"], "title": ["Entity 0", "Entity 1"], "name_key": ["entity 0", "entity 1"]}),
        pl.DataFrame({"name_key": ["ent 0"], "merged_into_key": ["entity 0"], "rejected": [False]}),
    )
    entities = {
        f"e{i}": {"id": f"e{i}", "human_readable_id": i, "title": f"Entity {i}", "description": "Described."}
        for i in range(3)
    }
    relationships = {
        "r0": {
            "id": "r0",
            "human_readable_id": 0,
            "source": "Entity 0",
            "target": "Entity 2",
            "source_id": "e0",
            "target_id": "e2",
            "description": "Linked.",
            "weight": 1.0,
        }
    }
    community = {"community": 1, "entity_ids": ["e0", "e2"], "relationship_ids": ["r0"], "children": []}

    def by_entity(frame):
        grouped: dict[str, list[dict]] = {}
        for claim in frame.iter_rows(named=True):
            grouped.setdefault(claim["subject_entity_id"], []).append(claim)
        return grouped

    sections = report_context(community, entities, relationships, {}, {}, 8_000, by_entity(claims))
    lines = sections["claims"].splitlines()
    assert lines[0] == CLAIM_HEADER
    # Only e0's two claims (e1 is no member), ordered by subject, then type, then status.
    assert [line.split("|")[3:5] for line in lines[1:]] == [["PLAN", "FALSE"], ["PLAN", "SUSPECTED"]]
    assert "2024-01-01 to ?" in sections["claims"]
    # The order is the claims' content, whatever order they come in.
    assert report_context(community, entities, relationships, {}, {}, 8_000, by_entity(claims.reverse())) == sections
    # Without claims, the context is the claims header alone; a small budget is kept.
    assert report_context(community, entities, relationships, {}, {}, 8_000)["claims"] == CLAIM_HEADER
    small = report_context(community, entities, relationships, {}, {}, 60, by_entity(claims))
    assert sum(count_tokens(text + "\n") for text in small.values()) <= 60
