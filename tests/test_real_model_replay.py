"""A real model server's answers, played back through the product's client.

``tests/data/real_model_exchanges.jsonl`` holds what llama.cpp's server (SmolLM2-135M,
one slot, a 2,048-token context, the completion caps of ``ONE_SLOT_SERVER``) answered when
``bench/real_model.py`` indexed ``tests/data/real_model_corpus`` and asked one question per
query mode: a few usable answers, answers that ran on until the cap cut them off mid-JSON
(and their re-asks, cut off again), names and types of the model's own, and the server's
embeddings of one vector per token. ``ReplayServer`` serves them over HTTP to the real
client, in a real Dagster instance and DuckDB file, so what the product does with a real
server's answers is checked without a model.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from graphrag_assets.core.extraction.names import name_key

from .recorded_openai import (
    CORPUS_NAME,
    EMBEDDING_MODEL,
    ONE_SLOT_SERVER,
    QUESTIONS,
    ReplayServer,
    read_records,
)

DATA = Path(__file__).parent / "data"
EXCHANGES = DATA / "real_model_exchanges.jsonl"
CORPUS = DATA / "real_model_corpus"
ENTITY_TYPES = {"ORGANIZATION", "PERSON", "GEO", "EVENT"}  # GRAPHRAG_ENTITY_TYPES's default
# The completion cap each task is sent with (GRAPHRAG_LLM_*_MAX_TOKENS of ONE_SLOT_SERVER).
CAP_OF_TASK = {"extract_graph": "EXTRACTION", "glean": "EXTRACTION", "extract_claims": "EXTRACTION"} | {
    task: "SUMMARY" for task in ("summarize_descriptions", "confirm_merges")
}
CAP_OF_TASK |= {"community_report": "REPORT"}


def _cap(task: str | None) -> int:
    return int(ONE_SLOT_SERVER[f"GRAPHRAG_LLM_{CAP_OF_TASK.get(task, 'QUERY')}_MAX_TOKENS"])


@pytest.fixture
def replayed(monkeypatch):
    with ReplayServer(read_records(EXCHANGES)) as server:
        monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", server.base_url)
        for name, value in ONE_SLOT_SERVER.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("GRAPHRAG_LLM_MAX_RETRIES", "1")  # a replayed server error repeats: retry it once
        # The recording's server did not embed one vector per input (it answered one per
        # token), so the recording was indexed with the offline embedder.
        monkeypatch.delenv("GRAPHRAG_EMBEDDING_MODEL")
        yield server


def _sql(database: str, query: str) -> list[tuple]:
    with duckdb.connect(database, read_only=True) as connection:
        return connection.execute(query).fetchall()


def _tool_arguments(record: dict) -> dict | None:
    """The structured answer of a recorded completion, or None when it is not valid JSON."""
    body = record.get("body")
    if not isinstance(body, dict) or not body.get("choices"):
        return None
    message = body["choices"][0]["message"]
    text = message["tool_calls"][0]["function"]["arguments"] if message.get("tool_calls") else message.get("content")
    try:
        return json.loads(text or "")
    except ValueError:
        return None


def _served(server: ReplayServer, task: str, start: int = 0) -> list[dict]:
    return [server.records[s["record"]] | {"served": s} for s in server.served[start:] if s["task"] == task]


def test_real_server_answers_become_the_index_and_bad_ones_are_recorded(replayed, index, instance, tmp_path):
    from dagster import AssetKey

    input_dir = tmp_path / "input"
    shutil.copytree(CORPUS, input_dir / CORPUS_NAME)
    settings, report = index(input_dir)
    database = settings.db
    served = list(replayed.served)
    completions = [s for s in served if s["path"].endswith("/chat/completions")]
    assert completions and replayed.unmatched == 0  # the product asked exactly what was recorded

    # Every completion is sent with its stage's cap.
    assert [s["max_tokens"] for s in completions] == [_cap(s["task"]) for s in completions]

    # An extraction answer that is not valid JSON (the model ran on until the cap cut it
    # off) is re-asked with the answer and the validation error: a conversation with the
    # assistant's turn in it, at most GRAPHRAG_LLM_MAX_REPAIRS (2) times; a unit still
    # without a valid answer is a failure, recorded with its reason.
    extractions = _served(replayed, "extract_graph") + _served(replayed, "glean")
    for number, asked in enumerate(extractions):
        followed_by = extractions[number + 1]["served"]["roles"] if number + 1 < len(extractions) else []
        if _tool_arguments(asked) is None and len(asked["served"]["roles"]) < 5:
            assert followed_by == [*asked["served"]["roles"], "assistant", "tool"]
    failures = _sql(database, "SELECT stage, item_id, error FROM llm_failures")
    hopeless = [a for a in extractions if len(a["served"]["roles"]) == 5 and _tool_arguments(a) is None]
    assert hopeless and len(failures) == len(hopeless)
    assert all(stage == "extraction" and "no valid GraphExtraction after 3 attempt(s)" in e for stage, _, e in failures)
    # The caps keep every re-ask inside the server's context: nothing was refused.
    assert all(replayed.records[s["record"]]["status"] == 200 for s in served)

    # What the index holds comes from the model's valid answers, screened: every name is
    # in its text (the model's "1" for "In 1998" and the names it made up are left out),
    # every type is a configured one or unknown ("Entities" is cleared, "Organisation" is
    # ORGANIZATION), and each name left out or retyped is counted by reason.
    answered = [a for a in map(_tool_arguments, extractions) if a is not None]
    named = {e["name"] for a in answered for e in a.get("entities", [])}
    named |= {r[end] for a in answered for r in a.get("relationships", []) for end in ("source", "target")}
    entities = _sql(database, "SELECT title, type FROM entities")
    assert entities, "the model's answers named entities, the index must hold some"
    corpus_key = name_key(" ".join(path.read_text() for path in CORPUS.iterdir()))
    for title, entity_type in entities:
        assert title in named
        assert re.search(rf"(?<![a-z0-9]){re.escape(name_key(title))}(?![0-9])", corpus_key), title
        assert entity_type in ENTITY_TYPES | {""}
    # Left out: "1" and "Mario Marlow" (not in the text), "Entity" (a placeholder), and
    # "2004" with the one relationship the model gave it, to "1". The trust's "Entities"
    # type of the extraction is cleared; its gleaning's "Organisation" types it.
    assert {name_key(name) for name in named} - {name_key(title) for title, _ in entities} == {
        "1",
        "mario marlow",
        "entity",
        "2004",
    }
    assert entities == [("The Kelsey Harbour Trust", "ORGANIZATION")]
    metadata = instance.get_latest_materialization_event(AssetKey("extractions")).asset_materialization.metadata
    assert metadata["names_screened_out"].value == {
        "not in the text": 2,
        "placeholder": 1,
        "type 'ENTITIES' not in GRAPHRAG_ENTITY_TYPES (cleared)": 1,
    }

    # Reports: the model's where it answered; where its call failed, the offline report,
    # marked as such, with the failure recorded.
    model = ONE_SLOT_SERVER["GRAPHRAG_LLM_MODEL"]
    reports = _sql(database, "SELECT community, title, generated_by FROM community_reports")
    recorded_titles = {a["title"] for a in map(_tool_arguments, _served(replayed, "community_report")) if a}
    assert {title for _, title, by in reports if by == model} <= recorded_titles
    assert all(by in (model, "extractive (LLM failed)") for _, _, by in reports)
    assert {str(c) for c, _, by in reports if by != model} == {i for stage, i, _ in failures if stage == "report"}
    assert len(reports) == _sql(database, "SELECT count(*) FROM communities")[0][0]

    # The summary's "LLM calls" are the calls made, the failed ones included: every request
    # but the re-asks (a re-ask is part of its call; nothing was retried). The failed ones
    # are counted by cause.
    reasks = [s for s in completions if "assistant" in s["roles"]]
    assert report.llm_calls == len(completions) - len(reasks)
    assert sum(report.llm_failure_causes.values()) == len(failures)
    assert all(cause.startswith("invalid output") for cause in report.llm_failure_causes)
    assert report.failed_calls == {"extraction": len(failures)}


def test_embeddings_of_one_vector_per_token_are_refused_with_the_pooling_hint(replayed):
    from graphrag_assets.llm.cache import LLMCache
    from graphrag_assets.llm.client import LLMClient
    from graphrag_assets.llm.errors import LLMError
    from graphrag_assets.llm.settings import LLMSettings

    (probe,) = [r for r in replayed.records if r["path"].endswith("/embeddings")]
    shape = "x".join(map(str, probe["body"]["data"][0]["shape"]))
    settings = LLMSettings(
        base_url=replayed.base_url,
        api_key="none",
        model=ONE_SLOT_SERVER["GRAPHRAG_LLM_MODEL"],
        embedding_model=EMBEDDING_MODEL,
    )
    cache = duckdb.connect(":memory:")
    client = LLMClient(settings, LLMCache(cache))

    async def embed():
        async with client:
            return await client.embed(["Kelsey Harbour Trust", "the ferry pier at Kelsey"])

    with pytest.raises(LLMError, match=rf"{shape} .*array per input.*--pooling mean"):
        asyncio.run(embed())
    assert len(replayed.served) == 1
    # Refused before caching: nothing of the answer was kept.
    tables = [t for (t,) in cache.execute("SELECT table_name FROM information_schema.tables").fetchall()]
    assert all(cache.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] == 0 for t in tables)


@pytest.mark.parametrize("method", ["global", "local", "drift", "basic"])
def test_each_query_mode_answers_with_what_the_server_wrote(replayed, index, tmp_path, method):
    from graphrag_query import search

    input_dir = tmp_path / "input"
    shutil.copytree(CORPUS, input_dir / CORPUS_NAME)
    settings, _ = index(input_dir)
    before = len(replayed.served)

    def asked():
        return search(QUESTIONS[method], method=method, database=settings.db, corpus=CORPUS_NAME, use_llm=True)

    recorded = [r for r in replayed.records if r["task"] in TASKS_OF_MODE[method]]
    if not recorded:
        # No community, no report: global search has nothing to map and says so without a call.
        result = asked()
        assert replayed.served[before:] == [] and result.generated_by == "extractive"
        assert "unable to answer" in result.answer
        return
    structured = [r for r in recorded if "streamed" not in r]
    if structured and all(_tool_arguments(r) is None for r in structured[-3:]):
        # The model's every answer to a drift step ran on until the cap cut it off: after
        # its re-asks the query fails, saying why, rather than answer with nothing.
        from graphrag_assets.llm.errors import LLMError

        with pytest.raises(LLMError, match="no valid DriftStep after 3 attempt"):
            asked()
        served = replayed.served[before:]
        assert [len(s["roles"]) for s in served] == [1, 3, 5]
        assert all(s["max_tokens"] == _cap(s["task"]) for s in served)
        return
    result = asked()
    served = [replayed.records[s["record"]] for s in replayed.served[before:]]
    assert served, f"{method} search made no call"
    assert all(s["max_tokens"] == _cap(s["task"]) for s in replayed.served[before:])
    written = [r["streamed"]["content"] for r in served if "streamed" in r]
    assert written  # the final answer was streamed: the user reads what the server wrote
    assert result.generated_by == ONE_SLOT_SERVER["GRAPHRAG_LLM_MODEL"]
    assert result.answer.strip() == written[-1].strip()


# The tasks of each query mode's calls.
TASKS_OF_MODE = {
    "global": {"global_map", "global_reduce"},
    "local": {"answer"},
    "drift": {"rate_community", "drift_local", "drift_reduce"},
    "basic": {"answer"},
}
