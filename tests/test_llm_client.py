"""The LLM client against the OpenAI-compatible test server (real sockets, the client's own
HTTP requests)."""

import asyncio
import json
import time

import duckdb
import pytest
from pydantic import BaseModel

from graphrag_assets.llm.cache import LLMCache
from graphrag_assets.llm.client import LLMClient
from graphrag_assets.llm.errors import BudgetExhausted, EndpointRefused, LLMError
from graphrag_assets.llm.models import CommunityReport, GraphExtraction
from graphrag_assets.llm.settings import LLMSettings

from .fake_openai import FakeOpenAI, Fault

KEY = "sk-test-DO-NOT-LEAK-31337"
EXTRACT = [
    {
        "role": "user",
        "content": "[task: extract_graph]\n-----Text-----\nMara Ellison met Victor Ashdown at Gullwing Pier.",
    }
]


class Answer(BaseModel):
    answer: str


def _client(fake, **overrides):
    settings = LLMSettings(
        base_url=fake.base_url, api_key=KEY, model="fake-chat", embedding_model="fake-embed", **overrides
    )
    return LLMClient(settings, LLMCache(duckdb.connect(":memory:")))


def _run(client, work):
    """``work(client)`` on a new event loop, the client's connections closed on it (as
    the product's ``run_with`` does)."""

    async def main():
        async with client:
            return await work(client)

    return asyncio.run(main())


@pytest.mark.parametrize("mode", ["tools", "json_schema", "json"])
def test_structured_extraction_in_every_mode_and_cached(mode):
    with FakeOpenAI() as fake:
        client = _client(fake, mode=mode)
        first = _run(client, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        assert [e.name for e in first.entities] == ["Mara Ellison", "Victor Ashdown", "Gullwing Pier"]
        assert first.relationships[0].strength == 5
        body = fake.completions()[0]["body"]
        assert ("tools" in body) == (mode == "tools")
        again = _run(client, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        assert again.model_dump() == first.model_dump() and len(fake.completions()) == 1
        assert client.usage.stage("extraction").cache_hits == 1
        # A new prompt version is a new question.
        _run(client, lambda c: c.structured("extraction", "v2", EXTRACT, GraphExtraction))
        assert len(fake.completions()) == 2


def test_retries_429_honouring_retry_after_then_500_then_repairs_malformed_json():
    with FakeOpenAI() as fake:
        fake.faults.extend([Fault(429, retry_after=0.5), Fault(503), Fault(body="{this is not json")])
        client = _client(fake)
        started = time.perf_counter()
        result = _run(client, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        assert time.perf_counter() - started >= 0.5  # waited as told
        assert result.entities
        stats = client.usage.stage("extraction")
        assert stats.retries == 2 and stats.calls == 1 and stats.failures == 0
        assert len(fake.completions()) == 4  # 429, 503, malformed, repaired


@pytest.mark.parametrize("mode", ["tools", "json_schema", "json"])
def test_an_invalid_answer_is_shown_to_the_model_with_the_error_and_every_attempt_is_paid_for(mode):
    with FakeOpenAI() as fake:
        fake.faults.append(Fault(body='{"entities": "not a list"}'))
        client = _client(fake, mode=mode)
        result = _run(client, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        assert result.entities
        first, repair = (request["body"] for request in fake.completions())
        added = repair["messages"][len(first["messages"]) :]
        assert [m["role"] for m in added] == (["assistant", "tool"] if mode == "tools" else ["assistant", "user"])
        shown = added[0]["tool_calls"][0]["function"]["arguments"] if mode == "tools" else added[0]["content"]
        assert shown == '{"entities": "not a list"}'
        # What is wrong, and where (instructor's re-ask).
        assert "entities" in added[1]["content"] and "Input should be a valid array" in added[1]["content"]
        stats = client.usage.stage("extraction")
        assert stats.calls == 1 and stats.retries == 0
        assert stats.prompt_tokens > sum(len(m["content"]) for m in EXTRACT) // 8  # both attempts counted


def test_an_answer_that_never_validates_fails_the_item_after_the_repairs_allowed():
    with FakeOpenAI() as fake:
        fake.faults.extend([Fault(body="{not json")] * 3)
        client = _client(fake, max_repairs=2)
        with pytest.raises(LLMError, match="no valid GraphExtraction after 3 attempt"):
            _run(client, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        assert len(fake.completions()) == 3
        assert client.usage.stage("extraction").failures == 1


def test_json_mode_sends_the_schema_and_fenced_or_textual_answers_are_read():
    asked = [{"role": "system", "content": "Be brief."}, *EXTRACT]
    with FakeOpenAI() as fake:
        fake.faults.append(Fault(body='```json\n{"answer": "yes"}\n```'))
        assert _run(_client(fake, mode="json"), lambda c: c.structured("qa", "v1", asked, Answer)).answer == "yes"
        request = fake.completions()[0]["body"]
        assert request["response_format"] == {"type": "json_object"}
        # The instructions and the schema reach the model in its user turn: some chat
        # templates (Gemma's) drop system messages.
        [turn] = request["messages"]
        assert turn["role"] == "user" and turn["content"].startswith("Be brief.")
        assert '"answer"' in turn["content"] and turn["content"].endswith(EXTRACT[0]["content"])
    # A server that answers a forced function call in the text is read all the same.
    with FakeOpenAI(tools_in_text=True) as fake:
        fake.faults.append(Fault(body='{"answer": "no"}'))
        assert _run(_client(fake, mode="tools"), lambda c: c.structured("qa", "v1", EXTRACT, Answer)).answer == "no"
        assert len(fake.completions()) == 1


@pytest.mark.parametrize(
    "status, fix",
    [
        (400, None),
        (401, "GRAPHRAG_LLM_API_KEY"),
        (403, "GRAPHRAG_LLM_API_KEY"),
        (404, "GRAPHRAG_LLM_EXTRACTION_MODEL or GRAPHRAG_LLM_MODEL"),
    ],
)
def test_no_retry_on_client_errors_and_the_key_never_shows(status, fix):
    with FakeOpenAI() as fake:
        fake.faults.append(Fault(status))
        client = _client(fake)
        # 401/403/404: the settings are wrong for every call, so it stops the step (no
        # item-level failure); 400: this one request is wrong.
        with pytest.raises(EndpointRefused if fix else LLMError) as error:
            _run(client, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        assert len(fake.completions()) == 1
        assert f"HTTP {status}" in str(error.value)
        assert fix is None or fix in str(error.value)
        assert KEY not in str(error.value) and KEY not in repr(client.settings)
        assert fake.completions()[0]["headers"]["authorization"] == f"Bearer {KEY}"  # it was sent, only to the server


def test_gives_up_after_max_retries():
    with FakeOpenAI() as fake:
        fake.faults.extend([Fault(500)] * 3)
        client = _client(fake, max_retries=2)
        with pytest.raises(LLMError, match="after 3 attempt"):
            _run(client, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))


def test_concurrency_limit_and_async_rate_limit():
    with FakeOpenAI(latency_seconds=0.2) as fake:
        client = _client(fake, concurrency=4)
        messages = [[{"role": "user", "content": f"[task: other] question {i}"}] for i in range(12)]

        async def run():
            return await asyncio.gather(*(client.structured("query", "v1", m, Answer) for m in messages))

        started = time.perf_counter()
        _run(client, lambda c: run())
        elapsed = time.perf_counter() - started
        assert 0.55 <= elapsed < 2.0  # 12 calls, 4 at a time, 0.2 s each: about 0.6 s
    with FakeOpenAI() as fake:
        client = _client(fake, rpm=120)  # 2 per second, bucket starts full

        async def burst():
            return await asyncio.gather(
                *(client.structured("query", "v1", [{"role": "user", "content": f"q{i}"}], Answer) for i in range(122))
            )

        started = time.perf_counter()
        _run(client, lambda c: burst())
        assert time.perf_counter() - started >= 0.9  # the last 2 waited for refill


def test_token_budget_stops_cleanly():
    with FakeOpenAI() as fake:
        client = _client(fake, token_budget=10)
        _run(client, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        with pytest.raises(BudgetExhausted, match="GRAPHRAG_LLM_TOKEN_BUDGET"):
            _run(client, lambda c: c.structured("extraction", "v2", EXTRACT, GraphExtraction))


def test_embeddings_are_batched_cached_and_long_texts_averaged():
    with FakeOpenAI() as fake:
        client = _client(fake)
        texts = [f"text number {i}" for i in range(100)] + ["word " * 20_000]
        vectors = _run(client, lambda c: c.embed(texts))
        assert vectors.shape == (101, 16)
        requests = fake.embedding_requests()
        assert len(requests) >= 2 and all(len(r["body"]["input"]) <= 64 for r in requests)
        before = len(requests)
        again = _run(client, lambda c: c.embed(texts))
        assert len(fake.embedding_requests()) == before
        assert (again == vectors).all()


def test_vectors_sent_as_numbers_or_as_base64_are_the_same():
    texts = ["Marley was dead", "to begin with"]
    with FakeOpenAI() as as_base64, FakeOpenAI(base64_embeddings=False) as as_numbers:
        packed = _run(_client(as_base64), lambda c: c.embed(texts))
        listed = _run(_client(as_numbers), lambda c: c.embed(texts))
        assert as_base64.embedding_requests()[0]["body"]["encoding_format"] == "base64"
    assert packed.shape == (2, 16) and (packed == listed).all()


def test_texts_embedded_ahead_are_sent_in_batches_and_found_in_the_cache_later():
    with FakeOpenAI(latency_seconds=0.2) as fake:
        database = duckdb.connect(":memory:")
        settings = LLMSettings(base_url=fake.base_url, api_key=KEY, model="fake-chat", embedding_model="fake-embed")
        reports = [f"report {i}" for i in range(20)]

        async def write_reports_and_embed_them_ahead():
            async with LLMClient(settings, LLMCache(database)) as client:
                client.embed_ahead(["entity a", "entity b"], flush=True)  # sent at once
                for text in reports:  # one at a time, as reports are written
                    client.embed_ahead([text])
                # 16 reports make a request; the other 4 wait for the client to close.
                for _ in range(200):
                    if len(fake.embedding_requests()) == 2:
                        break
                    await asyncio.sleep(0.05)
                await asyncio.sleep(0.1)
                assert sorted(len(r["body"]["input"]) for r in fake.embedding_requests()) == [2, 16]
            return client.usage.stage("embedding").calls

        assert asyncio.run(write_reports_and_embed_them_ahead()) == 3
        assert sorted(len(r["body"]["input"]) for r in fake.embedding_requests()) == [2, 4, 16]
        # A later step (another client on the same cache) embeds the same texts without a request.
        later = LLMClient(settings, LLMCache(database))
        vectors = _run(later, lambda c: c.embed(["entity a", *reports]))
        assert vectors.shape == (21, 16) and len(fake.embedding_requests()) == 3
        assert later.usage.stage("embedding").cache_hits == 21


def test_nothing_is_embedded_ahead_without_an_embedding_model():
    with FakeOpenAI() as fake:
        settings = LLMSettings(base_url=fake.base_url, api_key=KEY, model="fake-chat")

        async def run():
            async with LLMClient(settings, LLMCache(duckdb.connect(":memory:"))) as client:
                client.embed_ahead(["a text"], flush=True)

        asyncio.run(run())
        assert fake.embedding_requests() == []


def test_every_call_is_capped_per_stage_and_a_cut_off_answer_is_re_asked():
    with FakeOpenAI() as fake:
        fake.faults.append(Fault(body='{"entities": [{"name": "Mara Ell', finish_reason="length"))
        client = _client(fake, extraction_max_tokens=300, summary_max_tokens=50)
        result = _run(client, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        assert result.entities  # the second answer, asked again with the first one's error
        cut_off, again = (request["body"] for request in fake.completions())
        assert cut_off["max_tokens"] == again["max_tokens"] == 300
        added = again["messages"][len(cut_off["messages"]) :]
        # The assistant turn echoed with empty text, not null: local servers refuse null.
        assert added[0]["role"] == "assistant" and added[0]["content"] == ""
        assert "EOF while parsing" in added[1]["content"]
        _run(client, lambda c: c.structured("summary", "v1", [{"role": "user", "content": "[task: x] y"}], Answer))
        assert fake.completions()[-1]["body"]["max_tokens"] == 50
        # The cap is no part of the cache key: an answer that fitted stays valid.
        capped = _client(fake, extraction_max_tokens=200)
        capped.cache = client.cache
        _run(capped, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        assert len(fake.completions()) == 3


def test_an_answer_leaving_out_what_it_must_list_is_re_asked():
    with FakeOpenAI() as fake:
        fake.faults.append(Fault(body="{ }"))
        result = _run(_client(fake), lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        assert result.entities
        first, again = (request["body"] for request in fake.completions())
        schema = first["tools"][0]["function"]["parameters"]
        assert sorted(schema["required"]) == ["entities", "relationships"]
        assert "Field required" in again["messages"][-1]["content"]


def test_numbers_outside_their_range_are_clamped_not_refused():
    report = {
        "title": "T",
        "summary": "S",
        "rating": 12,
        "rating_explanation": "R",
        "findings": [{"summary": f"f{i}", "explanation": "e"} for i in range(12)],
    }
    with FakeOpenAI() as fake:
        fake.faults.append(Fault(body=json.dumps(report)))
        result = _run(_client(fake), lambda c: c.structured("report", "v1", EXTRACT, CommunityReport))
        assert result.rating == 10 and [f.summary for f in result.findings] == [f"f{i}" for i in range(10)]
        assert len(fake.completions()) == 1


def test_a_request_refused_as_invalid_is_not_retried_and_refusals_alike_stop_the_run():
    refused = "1 validation error: response_format.type Input should be 'text' or 'json_object'"
    with FakeOpenAI() as fake:
        fake.faults.extend([Fault(500, message=refused)] * 3)
        client = _client(fake, mode="json_schema", max_retries=6)
        with pytest.raises(LLMError, match="after 1 attempt"):
            _run(client, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        assert len(fake.completions()) == 1  # not sent 7 times

        async def two_more(c):
            for version in ("v2", "v3"):
                try:
                    await c.structured("extraction", version, EXTRACT, GraphExtraction)
                except LLMError:
                    pass

        # The first calls of the stage refused alike: the settings are at fault, not the items.
        with pytest.raises(EndpointRefused, match="GRAPHRAG_LLM_MODE \\(now 'json_schema'"):
            _run(client, two_more)
        assert len(fake.completions()) == 3
    # A server error that says nothing of the request is retried as before.
    with FakeOpenAI() as fake:
        fake.faults.append(Fault(500, message="model is loading"))
        assert _run(_client(fake), lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction)).entities
        assert len(fake.completions()) == 2


def test_embeddings_of_another_shape_are_refused_before_they_are_cached():
    with FakeOpenAI(tokens_per_embedding=5) as fake:
        client = _client(fake)
        with pytest.raises(LLMError, match="5x16 array per input.*pooling"):
            _run(client, lambda c: c.embed(["Marley was dead", "to begin with"]))
        with pytest.raises(LLMError):  # nothing was cached: asked again, refused again
            _run(client, lambda c: c.embed(["Marley was dead", "to begin with"]))
        assert len(fake.embedding_requests()) == 2


def test_azure_openai_gets_its_api_key_header_api_version_and_deployment_path():
    with FakeOpenAI() as fake:
        root = fake.base_url.removesuffix("/v1")
        settings = LLMSettings(
            base_url=root, api_key=KEY, api_version="2024-10-21", model="fake-chat", embedding_model="fake-embed"
        )
        client = LLMClient(settings, LLMCache(duckdb.connect(":memory:")))
        result = _run(client, lambda c: c.structured("extraction", "v1", EXTRACT, GraphExtraction))
        assert [e.name for e in result.entities] == ["Mara Ellison", "Victor Ashdown", "Gullwing Pier"]
        assert _run(client, lambda c: c.embed(["Marley was dead"])).shape == (1, 16)
        chat, embedding = fake.requests
        assert chat["path"] == "/openai/deployments/fake-chat/chat/completions"
        assert embedding["path"] == "/openai/deployments/fake-embed/embeddings"
        for request in (chat, embedding):
            assert request["query"] == "api-version=2024-10-21"
            assert request["headers"]["api-key"] == KEY and "authorization" not in request["headers"]


def test_openai_environment_conventions_are_honoured(monkeypatch):
    for variable in ("GRAPHRAG_LLM_BASE_URL", "GRAPHRAG_LLM_API_KEY", "GRAPHRAG_LLM_API_VERSION"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "some-model")
    settings = LLMSettings.from_env()
    assert settings.enabled and settings.base_url == "http://127.0.0.1:9/v1" and settings.api_version == "2024-10-21"
    assert settings.api_key.get_secret_value() == KEY
