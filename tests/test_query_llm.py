"""The four query modes through the LLM, against the OpenAI-compatible test server."""

import asyncio
import time
from collections import Counter

import duckdb
import pytest

from graphrag_assets.llm.cache import LLMCache
from graphrag_assets.llm.client import LLMClient
from graphrag_assets.llm.settings import LLMSettings
from graphrag_common.tokens import count_tokens
from graphrag_query import IndexReader, drift_search, global_search, local_search, search, search_stream
from graphrag_query.call_log import QueryCallLog
from graphrag_query.global_mode import GlobalSettings, map_batches, reports_at_level
from graphrag_query.llm import QueryLLM

from .fake_openai import FakeOpenAI, Fault

FINAL_TASK = {"global": "global_reduce", "local": "answer", "drift": "drift_reduce", "basic": "answer"}


@pytest.fixture
def fake_llm(monkeypatch):
    with FakeOpenAI() as fake:
        monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("GRAPHRAG_LLM_API_KEY", "sk-test-query")
        monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "fake-chat")
        yield fake


@pytest.fixture(scope="module")
def reader(sample_index):
    return IndexReader(sample_index.db).load()


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


@pytest.mark.parametrize("method", ["global", "local", "drift", "basic"])
def test_stream_yields_the_answer_token_by_token_once_the_context_is_built(fake_llm, reader, method):
    stream = search_stream("How is Port Calder connected to Xiamen?", reader=reader, method=method)
    pieces = []
    for piece in stream:
        if not pieces:
            # Every other model call is done: the answer is the last request made.
            requests = fake_llm.completions()
            assert requests[-1]["task"] == FINAL_TASK[method]
            assert all("finished" in r and not r["body"].get("stream") for r in requests[:-1])
            assert stream.result is None
        pieces.append(piece)
    result = stream.result
    assert len(pieces) > 1 and "".join(pieces) == result.answer == "Scripted answer."
    assert result.method == method and result.generated_by == "fake-chat"
    requests = fake_llm.completions()
    assert [r["body"]["stream"] for r in requests if r["body"].get("stream")] == [True]
    # The streamed call is counted with the rest, with the tokens the server reported.
    assert result.usage.llm_calls == len(requests)
    assert result.usage.completion_tokens == sum(r["completion_tokens"] for r in requests)
    assert result.usage.prompt_tokens == sum(r["prompt_tokens"] for r in requests)


def test_the_first_token_arrives_while_the_model_is_still_writing(fake_llm, reader):
    fake_llm.seconds_per_completion_token = 0.1  # "Scripted answer." is 4 tokens: 0.4 s of writing
    arrivals = [time.monotonic() for _ in search_stream("What did Clara Okafor do?", reader=reader, method="local")]
    request = fake_llm.completions("answer")[0]
    assert arrivals[0] < request["finished"]  # read before the server had sent the rest
    first, total = arrivals[0] - request["started"], arrivals[-1] - request["started"]
    assert total >= 0.35 and first < total / 2


def test_async_stream_leaves_the_event_loop_free(fake_llm, reader):
    fake_llm.seconds_per_completion_token = 0.05

    async def run():
        stream = search_stream("What did Clara Okafor do?", reader=reader, method="basic")
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(tick())
        pieces = [piece async for piece in stream]
        ticker.cancel()
        return stream, pieces, ticks

    stream, pieces, ticks = asyncio.run(run())
    assert len(pieces) > 1 and "".join(pieces) == stream.result.answer == "Scripted answer."
    assert ticks >= 10  # the loop kept running while the context was built and the answer streamed
    assert stream.result.usage.llm_calls == 1


def test_a_repeated_answer_comes_from_the_cache_and_only_a_complete_one_is_cached(fake_llm, tmp_path):
    llm = QueryLLM(LLMSettings.from_env(), QueryCallLog(tmp_path / "graphrag.duckdb", "default"))
    values = {
        "question": "What happened?",
        "context": "-----Sources-----\n1|A storm hit.",
        "history": "",
        "response_type": "one sentence",
    }
    interrupted = llm.stream("answer_from_context", **values)
    next(interrupted)
    interrupted.close()  # the reader stopped after the first token: nothing cached
    first = list(llm.stream("answer_from_context", **values))
    again = list(llm.stream("answer_from_context", **values))
    assert len(first) > 1 and again == ["".join(first)] == ["Scripted answer."]
    assert len(fake_llm.completions("answer")) == 2
    stage = llm.usage.stage("query")
    assert stage.cache_hits == 1 and stage.calls == 2


@pytest.mark.parametrize("stream_usage", ["ignored", "rejected"])
def test_tokens_are_counted_when_the_server_does_not_report_them(fake_llm, reader, stream_usage):
    fake_llm.stream_usage = stream_usage
    stream = search_stream("What did Clara Okafor do?", reader=reader, method="local")
    assert "".join(stream) == "Scripted answer."
    usage, request = stream.result.usage, fake_llm.completions("answer")[-1]
    assert usage.llm_calls == 1 and usage.completion_tokens == count_tokens("Scripted answer.")
    assert usage.prompt_tokens == count_tokens(request["body"]["messages"][0]["content"])
    # A server that refuses stream_options is asked once more without them.
    assert len(fake_llm.completions("answer")) == (2 if stream_usage == "rejected" else 1)


def test_a_failure_before_the_first_token_is_retried(fake_llm, reader):
    fake_llm.faults.append(Fault(503, retry_after=0, match="[task: answer]"))
    stream = search_stream("What did Clara Okafor do?", reader=reader, method="local")
    assert "".join(stream) == "Scripted answer." and len(fake_llm.completions("answer")) == 2
    assert stream.result.usage.llm_calls == 1


def test_a_stream_holds_its_concurrency_slot_until_it_is_read_or_closed(fake_llm):
    fake_llm.seconds_per_completion_token = 0.05
    client = LLMClient(
        LLMSettings.from_env().model_copy(update={"concurrency": 1}), LLMCache(duckdb.connect(":memory:"))
    )

    def ask(n):
        return client.stream_text("query", "v1", [{"role": "user", "content": f"[task: answer] question {n}"}])

    async def read(n):
        return "".join([piece async for piece in ask(n)])

    async def run():
        abandoned = ask(0)
        await anext(abandoned)
        await abandoned.aclose()  # gives the slot back
        return await asyncio.wait_for(asyncio.gather(read(1), read(2)), timeout=10)

    assert asyncio.run(run()) == ["Scripted answer."] * 2
    first, second = sorted(fake_llm.completions("answer")[1:], key=lambda r: r["started"])
    assert second["started"] >= first["finished"]  # one stream at a time


def test_the_synchronous_api_works_inside_a_running_event_loop(fake_llm, reader):
    """As in a Jupyter cell, which runs inside an event loop: the plain calls must not
    fail for want of a loop of their own."""

    async def cell():
        answer = local_search("What did Clara Okafor do?", reader=reader).answer
        pieces = list(search_stream("What are the main themes?", reader=reader, method="global"))
        return answer, pieces

    answer, pieces = asyncio.run(cell())
    assert answer == "Scripted answer."
    assert len(pieces) > 1 and "".join(pieces) == "Scripted answer."
    assert {r["task"] for r in fake_llm.completions()} >= {"answer", "global_map", "global_reduce"}
