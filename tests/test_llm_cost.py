"""What LLM calls cost, in SQL: every indexing and query call recorded with its stage,
corpus, run and price, against the OpenAI-compatible test server, a real DuckDB file and
a real Dagster instance."""

from __future__ import annotations

import fcntl
import shutil
from collections import Counter

import duckdb
import pytest

from graphrag_assets.llm.prices import ModelPrice, read_price_file
from graphrag_assets.storage.snapshot import query_calls_path, read_pointer
from graphrag_assets.storage.views import describe_for_sql_users
from graphrag_query import IndexReader, call_log, search

from .fake_openai import FakeOpenAI, Fault

# Stage of llm_calls -> the fake server's task of its requests.
TASK_OF_STAGE = {
    "extraction": "extract_graph",
    "glean": "glean",
    "summary": "summarize_descriptions",
    "confirm_merges": "confirm_merges",
    "report": "community_report",
}
CHAT_PRICE = ModelPrice(2.0, 8.0)  # from the price file
EMBED_PRICE = ModelPrice(0.5, 0.0)  # not in the file: GRAPHRAG_LLM_PRICE_INPUT / _OUTPUT


def _rows(database, query: str, parameters: list | None = None) -> list[dict]:
    with duckdb.connect(str(database), read_only=True) as connection:
        result = connection.execute(query, parameters or [])
        names = [column[0] for column in result.description]
        return [dict(zip(names, row)) for row in result.fetchall()]


def _usd(requests: list[dict], price: ModelPrice) -> float:
    """What the server's requests cost at a price, from the tokens it reported."""
    return (
        sum(
            r["prompt_tokens"] * price.input_per_million + r["completion_tokens"] * price.output_per_million
            for r in requests
        )
        / 1e6
    )


def test_prices_are_read_from_csv_or_toml_and_a_bad_file_is_named(tmp_path):
    csv = tmp_path / "prices.csv"
    csv.write_text("model,input_per_million,output_per_million\ngpt-4o-mini,0.15,0.60\nnomic-embed-text,0.02,0\n")
    toml = tmp_path / "prices.toml"
    toml.write_text(
        '["gpt-4o-mini"]\ninput_per_million = 0.15\noutput_per_million = '
        '0.60\n\n["nomic-embed-text"]\ninput_per_million '
        "= 0.02\noutput_per_million = 0\n"
    )
    assert (
        read_price_file(csv)
        == read_price_file(toml)
        == {"gpt-4o-mini": ModelPrice(0.15, 0.6), "nomic-embed-text": ModelPrice(0.02, 0.0)}
    )
    bad = tmp_path / "bad.csv"
    bad.write_text("model,input_per_million,output_per_million\ngpt-4o-mini,cheap,0.60\n")
    with pytest.raises(ValueError, match=r"GRAPHRAG_LLM_PRICES: .*bad.csv, model 'gpt-4o-mini' needs numbers"):
        read_price_file(bad)
    (tmp_path / "prices.json").write_text("{}")
    with pytest.raises(ValueError, match="must be a .csv or .toml file"):
        read_price_file(tmp_path / "prices.json")
    with pytest.raises(ValueError, match="GRAPHRAG_LLM_PRICES: cannot read .*missing.csv"):
        read_price_file(tmp_path / "missing.csv")


def test_indexing_records_every_call_with_stage_run_and_price_and_new_prices_apply_to_new_calls_only(
    fake_llm, input_dir, index, instance, monkeypatch, tmp_path
):
    prices = tmp_path / "prices.csv"
    prices.write_text(f"model,input_per_million,output_per_million\nfake-chat,{CHAT_PRICE[0]},{CHAT_PRICE[1]}\n")
    monkeypatch.setenv("GRAPHRAG_LLM_PRICES", str(prices))
    monkeypatch.setenv("GRAPHRAG_LLM_PRICE_INPUT", str(EMBED_PRICE.input_per_million))
    settings, report = index(input_dir)
    assert not report.failed_runs

    calls = _rows(settings.db, "SELECT * FROM llm_calls")
    paid = [call for call in calls if not call["cached"]]
    # One row per request the server answered, under its stage.
    tasks = Counter(r["task"] for r in fake_llm.completions())
    expected = {stage: tasks[task] for stage, task in TASK_OF_STAGE.items() if tasks[task]} | {
        "embedding": len(fake_llm.embedding_requests())
    }
    assert Counter(call["stage"] for call in paid) == expected
    assert {call["corpus"] for call in calls} == {"default"}
    assert {call["run_id"] for call in calls} <= {run.run_id for run in instance.get_runs()} and None not in {
        call["run_id"] for call in calls
    }
    for call in calls:
        price = CHAT_PRICE if call["model"] == "fake-chat" else EMBED_PRICE
        assert (call["price_input_per_million"], call["price_output_per_million"]) == price
    # Cache hits (the embeddings asset finds the vectors embedded ahead) cost nothing.
    assert all(
        call["cost_usd"] == call["prompt_tokens"] == call["completion_tokens"] == 0 for call in calls if call["cached"]
    )
    usd = _usd(fake_llm.completions(), CHAT_PRICE) + _usd(fake_llm.embedding_requests(), EMBED_PRICE)
    assert sum(call["cost_usd"] for call in calls) == pytest.approx(usd)

    # The published snapshot's cost view sums to the same, per stage and model.
    snapshot = read_pointer(settings.location())["snapshot"]
    cost = {
        (row["stage"], row["model"]): row
        for row in _rows(snapshot, "SELECT * FROM llm_cost_by_corpus_stage_and_model WHERE corpus = 'default'")
    }
    assert sum(row["cost_usd"] for row in cost.values()) == pytest.approx(usd)
    assert cost[("extraction", "fake-chat")]["cost_usd"] == pytest.approx(
        _usd(fake_llm.completions("extract_graph"), CHAT_PRICE)
    )
    assert {stage: row["calls"] - row["cached_calls"] for (stage, _), row in cost.items()} == expected

    # Querying the corpus joins the same view: what indexing and querying it cost, by stage or mode and model.
    asked = len(fake_llm.completions())
    local = search("What did Clara Okafor do?", method="local", database=settings.db, use_llm=True)
    assert local.answer == "Scripted answer."
    cost = {
        (row["stage"], row["model"]): row
        for row in _rows(snapshot, "SELECT * FROM llm_cost_by_corpus_stage_and_model WHERE corpus = 'default'")
    }
    assert cost[("local_search", "fake-chat")]["calls"] == 1
    assert cost[("local_search", "fake-chat")]["cost_usd"] == pytest.approx(
        _usd(fake_llm.completions()[asked:], CHAT_PRICE)
    )
    assert cost[("extraction", "fake-chat")]["calls"] == expected["extraction"]

    # A rerun of everything with unchanged inputs is answered by the cache: recorded, at no cost.
    before = len(fake_llm.requests)
    with duckdb.connect(settings.db) as connection:
        connection.execute("DELETE FROM sources")
        connection.execute("DELETE FROM corpus_builds")
    index(input_dir)
    assert len(fake_llm.requests) == before
    rerun = _rows(
        settings.db, "SELECT * FROM llm_calls WHERE called_at > ?", [max(call["called_at"] for call in calls)]
    )
    assert rerun and all(call["cached"] and call["cost_usd"] == 0 for call in rerun)
    assert Counter(call["stage"] for call in rerun)["extraction"] == tasks["extract_graph"]

    # New prices price the calls made after them; the calls recorded keep theirs.
    prices.write_text("model,input_per_million,output_per_million\nfake-chat,4,16\n")
    (input_dir / "default" / "harbour_notes.txt").write_text(
        "Harbour notes: Ines Calloway met Oskar Brandt at the Gullwing Pier.\n"
    )
    index(input_dir)
    since = max(call["called_at"] for call in calls + rerun)
    new_calls = _rows(
        settings.db, "SELECT * FROM llm_calls WHERE called_at > ? AND NOT cached AND model = 'fake-chat'", [since]
    )
    assert new_calls and all(
        (call["price_input_per_million"], call["price_output_per_million"]) == (4, 16) for call in new_calls
    )
    old_prices = _rows(
        settings.db,
        "SELECT DISTINCT model, price_input_per_million, price_output_per_million FROM llm_calls WHERE called_at <= ?",
        [since],
    )
    assert sorted(tuple(row.values()) for row in old_prices) == [
        ("fake-chat", *CHAT_PRICE),
        ("fake-embed", *EMBED_PRICE),
    ]
    assert _rows(settings.db, "SELECT count(*) AS n FROM llm_calls WHERE called_at <= ?", [since]) == [
        {"n": len(calls) + len(rerun)}
    ]


@pytest.fixture
def query_index(sample_index, tmp_path):
    """A private copy of the sample index (indexed offline), so that queries log their
    calls beside it, not beside the shared sample."""
    database = tmp_path / "graphrag.duckdb"
    shutil.copyfile(read_pointer(sample_index.db)["snapshot"], database)
    return database


def test_query_calls_are_logged_beside_the_index_and_shown_with_the_cost(query_index, monkeypatch):
    prices = query_index.parent / "prices.toml"
    prices.write_text('["fake-chat"]\ninput_per_million = 1.0\noutput_per_million = 3.0\n')
    with FakeOpenAI() as fake:
        monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "fake-chat")
        monkeypatch.setenv("GRAPHRAG_LLM_PRICES", str(prices))
        reader = IndexReader(str(query_index), "default")
        local = search("What did Clara Okafor do?", method="local", reader=reader, use_llm=True)
        global_ = search("What are the main themes?", method="global", reader=reader, use_llm=True)
    assert local.answer == global_.answer == "Scripted answer."
    global_requests = len(fake.completions()) - 1  # every request but the first, the local answer

    # The snapshot's views read the log (a published snapshot names the log of its index).
    with duckdb.connect(str(query_index)) as connection:
        describe_for_sql_users(connection, str(query_calls_path(query_index)))
    calls = _rows(query_index, "SELECT * FROM query_llm_calls ORDER BY called_at")
    assert Counter(call["stage"] for call in calls) == {"local_search": 1, "global_search": global_requests}
    assert {(call["corpus"], call["run_id"], call["model"], call["cached"]) for call in calls} == {
        ("default", None, "fake-chat", False)
    }
    assert all((call["price_input_per_million"], call["price_output_per_million"]) == (1, 3) for call in calls)
    cost = {row["stage"]: row for row in _rows(query_index, "SELECT * FROM llm_cost_by_corpus_stage_and_model")}
    assert cost["global_search"]["cost_usd"] == pytest.approx(_usd(fake.completions()[1:], ModelPrice(1.0, 3.0)))
    assert cost["local_search"]["calls"] == 1


def test_a_query_whose_calls_cannot_be_logged_still_answers_with_a_warning(query_index, monkeypatch):
    monkeypatch.setattr(call_log, "LOCK_WAIT_SECONDS", 0.2)
    log = query_calls_path(query_index)
    with FakeOpenAI() as fake, open(log, "a") as held:
        monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "fake-chat")
        reader = IndexReader(str(query_index), "default")
        fcntl.flock(held, fcntl.LOCK_EX)  # another query process appending, for too long
        with pytest.warns(RuntimeWarning, match="1 LLM call.* not recorded in .*query_calls.jsonl"):
            assert (
                search("What did Clara Okafor do?", method="local", reader=reader, use_llm=True).answer
                == "Scripted answer."
            )
        fcntl.flock(held, fcntl.LOCK_UN)
        # A line cut off by a killed writer spoils only itself.
        held.write('{"called_at": "2026-01-')
        held.flush()
        search("What did Clara Okafor do?", method="basic", reader=reader, use_llm=True)
    with duckdb.connect(str(query_index)) as connection:
        describe_for_sql_users(connection, str(log))
    assert [call["stage"] for call in _rows(query_index, "SELECT * FROM query_llm_calls")] == ["basic_search"]


def test_the_calls_of_a_search_that_fails_midway_are_logged_as_its_own(query_index, monkeypatch):
    with FakeOpenAI() as fake:
        monkeypatch.setenv("GRAPHRAG_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("GRAPHRAG_LLM_MODEL", "fake-chat")
        fake.faults.append(Fault(status=400, match="[task: global_reduce]"))  # the map is paid, the answer fails
        reader = IndexReader(str(query_index), "default")
        with pytest.raises(Exception, match="injected fault"):
            search("What are the main themes?", method="global", reader=reader, use_llm=True)
        paid_for_the_map = len(fake.completions("global_map"))
        assert paid_for_the_map > 0
        search("What did Clara Okafor do?", method="basic", reader=reader, use_llm=True)
    with duckdb.connect(str(query_index)) as connection:
        describe_for_sql_users(connection, str(query_calls_path(query_index)))
    calls = _rows(query_index, "SELECT stage FROM query_llm_calls")
    assert Counter(call["stage"] for call in calls) == {"global_search": paid_for_the_map, "basic_search": 1}
