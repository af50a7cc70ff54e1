"""The four query modes through the LLM, against the OpenAI-compatible test server."""

from collections import Counter

import pytest

from graphrag_query import IndexReader, drift_search, global_search, local_search, search
from graphrag_query.global_mode import GlobalSettings, map_batches, reports_at_level

from .fake_openai import FakeOpenAI


@pytest.fixture
def fake_llm(monkeypatch):
    with FakeOpenAI() as fake:
        monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("GRAPHRAG_LLM_API_KEY", "sk-test-query")
        monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "fake-chat")
        yield fake


@pytest.fixture(scope="module")
def reader(sample_index):
    return IndexReader(sample_index.database).load()


def test_global_map_reduce_with_the_model(fake_llm, reader):
    result = global_search("What are the main themes?", reader=reader, map_budget=2_000)
    batches = len(map_batches(reports_at_level(reader.table("community_reports"), 2), GlobalSettings(map_budget=2_000)))
    tasks = Counter(r["task"] for r in fake_llm.completions())
    assert tasks == {"global_map": batches, "global_reduce": 1}
    assert result.generated_by == "fake-chat" and result.answer == "Scripted answer."
    assert result.usage.llm_calls == batches + 1 and result.usage.prompt_tokens > 0
    assert result.context["points"]["score"].to_list() == [50] * result.context["points"].height


def test_dynamic_selection_rates_with_the_model(fake_llm, reader):
    result = global_search("Who funds the river clean-up?", reader=reader, dynamic=True)
    tasks = Counter(r["task"] for r in fake_llm.completions())
    assert tasks["rate_community"] == result.details["reports_rated"]
    # The fake rates everything 3 (relevant): the walk reaches the leaves.
    assert result.details["reports_selected"] > 0


def test_local_and_basic_answer_from_their_context(fake_llm, reader):
    result = local_search("What did Clara Okafor do?", reader=reader)
    request = fake_llm.completions("answer")[0]["body"]["messages"][0]["content"]
    assert "Clara Okafor" in request and "-----Sources-----" in request
    assert result.generated_by == "fake-chat" and result.usage.llm_calls == 1
    assert search("How many volunteers came on the first day?", reader=reader).generated_by == "fake-chat"


def test_drift_with_the_model_follows_up_and_reduces(fake_llm, reader):
    result = drift_search("How is Port Calder connected to Xiamen?", reader=reader, depth=2, followups_per_round=1)
    tasks = Counter(r["task"] for r in fake_llm.completions())
    assert tasks["drift_local"] == 1 + 2  # primer, then one follow-up per round
    assert tasks["drift_reduce"] == 1
    assert result.context["tree"]["depth"].max() == 2


def test_offline_can_be_forced(fake_llm, reader):
    result = local_search("What did Clara Okafor do?", reader=reader, use_llm=False)
    assert result.generated_by == "extractive" and not fake_llm.requests


def test_response_type_reaches_the_model(fake_llm, reader):
    search("What did Clara Okafor do?", reader=reader, method="basic", response_type="a single sentence")
    assert "a single sentence" in fake_llm.completions("answer")[0]["body"]["messages"][0]["content"]
