"""graphrag_query on a real index built by the asset graph from the sample corpus."""

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

from graphrag_common.tokens import count_tokens
from graphrag_query import (
    IndexReader,
    asearch,
    basic_search,
    drift_search,
    global_search,
    local_search,
    search,
    search_stream,
)
from graphrag_query.local_mode import LocalSettings, build_local_context
from graphrag_query.result import EXTRACTIVE_LABEL, NO_DATA_ANSWER
from graphrag_query.search import LexicalIndex

from .conftest import REPO


@pytest.fixture(scope="module")
def reader(sample_index):
    return IndexReader(sample_index.db).load()


def _resolves(result, reader):
    units = reader.table("text_units")
    documents = dict(zip(reader.table("documents")["id"], reader.table("documents")["title"]))
    assert result.citations
    for citation in result.citations:
        row = units.filter(pl.col("id") == citation.text_unit_id)
        assert row.height == 1
        assert row["document_id"][0] == citation.document_id
        assert documents[citation.document_id] == citation.document_title


def test_bm25_terms_are_stored_with_the_index_and_rank_as_the_texts_do(sample_index, reader):
    with duckdb.connect(str(sample_index.db), read_only=True) as connection:
        kinds = dict(connection.execute("SELECT kind, count(DISTINCT id) FROM search_terms GROUP BY kind").fetchall())
    assert kinds == {
        "text_unit_text": reader.table("text_units").height,
        "community_full_content": reader.table("community_reports").height,
    }
    units = reader.table("text_units")
    tokenized = LexicalIndex.from_texts(units["id"].to_list(), units["text"].to_list())
    for question in ["Clara Okafor Verrin River", "王海燕 厦门大学", "lantern festival"]:
        stored = reader.text_unit_search.top(question, 5)
        assert not stored.is_empty()
        assert stored["id"].to_list() == tokenized.top(question, 5)["id"].to_list()


def test_import_pulls_in_none_of_the_heavy_indexing_dependencies():
    # What makes a cold query slow is importing what only indexing needs (Dagster, LanceDB,
    # the LLM clients, torch); their absence is checked here, the time itself in bench/.
    heavy = ["dagster", "lancedb", "httpx2", "torch", "sentence_transformers", "networkx"]
    code = f"import sys; import graphrag_query; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.strip()
    assert out == "[]"


def test_global_search_batches_fit_the_map_budget_and_points_are_ranked(reader):
    result = global_search(
        "What did Mara Ellison do with Xiamen University?", reader=reader, map_budget=1_500, budget=800
    )
    assert result.answer.startswith(EXTRACTIVE_LABEL)
    assert result.details["map_batches"] > 1
    assert all(tokens <= 1_500 for tokens in result.details["map_batch_tokens"])
    assert result.details["reduce_tokens"] <= 800
    assert count_tokens(result.details["reduce_context"]) <= 800
    scores = result.context["points"]["score"].to_list()
    assert scores and all(s > 0 for s in scores) and scores == sorted(scores, reverse=True)
    assert "[Data: Reports (" in result.answer


def test_global_search_says_no_data_instead_of_inventing(reader):
    result = global_search("What is the boiling point of liquid helium on Jupiter?", reader=reader)
    assert result.answer == NO_DATA_ANSWER
    assert result.context["points"].is_empty()


def test_global_search_answers_the_part_of_a_question_the_reports_cover_and_names_the_rest(reader):
    result = global_search("How did Mara Ellison typically perceive the zeppelins of Xiamen University?", reader=reader)
    assert result.answer.startswith(EXTRACTIVE_LABEL)
    assert 'No community report contains: "zeppelin".' in result.answer
    assert not result.context["points"].is_empty() and "[Data: Reports (" in result.answer


def test_dynamic_selection_reads_fewer_reports_than_the_full_map(reader):
    reports = reader.table("community_reports")
    question = "Wang Haiyan mangrove restoration"
    dynamic = global_search(question, reader=reader, dynamic=True)
    assert dynamic.details["reports_rated"] < reports.height
    assert 0 < dynamic.details["reports_selected"] <= dynamic.details["reports_rated"]
    rated = dynamic.context["ratings"]
    # Children are rated only below a relevant parent.
    relevant = set(rated.filter(pl.col("rating") >= 1)["community"].to_list())
    parents = dict(zip(reports["community"], reports["parent"]))
    for community in rated.filter(pl.col("level") > 0)["community"].to_list():
        assert parents[community] in relevant
    assert "mangrove" in dynamic.answer.lower()


def test_local_context_respects_budget_shares_and_ranks_as_specified(reader):
    settings = LocalSettings(budget=3_000, text_unit_share=0.5, community_share=0.15)
    history = [("user", "Who runs the Discovery Room?"), ("assistant", "Nadia Quill runs it.")]
    built = build_local_context("How does Calder Shipping work with the Harbor Institute?", reader, settings, history)
    assert built.tokens <= 3_000
    assert count_tokens(built.text) <= 3_000 + 20  # section headings only
    assert "Nadia Quill runs it." in built.conversation
    seeds = built.seeds["title"].to_list()
    assert {"Calder Shipping", "Harbor Institute"} <= set(seeds[:2])  # named in the question
    # Reports: most seeds held first, then rank.
    held = built.reports["seeds_held"].to_list()
    assert held == sorted(held, reverse=True)
    # Relationships: in-network (both ends seeds) before those touching one seed.
    links = built.relationships["seed_links"].to_list()
    assert links == sorted(links, reverse=True) and links[0] == 2
    # Text units: in the order of the walk from the question's names.
    ranks = built.sources["rank"].to_list()
    assert ranks == sorted(ranks)
    budgets = built.section_budgets
    assert budgets["reports"] == int(0.15 * (3_000 - count_tokens(built.conversation)))
    texts = built.texts
    assert all(text for section, text in texts.items() if section != "claims"), texts  # offline: no claims
    assert count_tokens(texts["reports"]) <= budgets["reports"]
    assert count_tokens(texts["sources"]) <= budgets["sources"]
    assert (
        sum(count_tokens(texts[s]) for s in ("entities", "relationships", "claims"))
        <= budgets["entities+relationships"]
    )


def test_local_search_answers_with_citations_that_resolve(reader):
    result = local_search("What did Clara Okafor do for the Verrin River?", reader=reader)
    assert result.answer.startswith(EXTRACTIVE_LABEL)
    assert "Clara Okafor" in result.context["entities"]["title"].to_list()
    assert set(result.context) >= {"entities", "relationships", "reports", "claims", "sources"}
    _resolves(result, reader)


def test_drift_search_depth_and_followups(reader):
    result = drift_search("How is Port Calder connected to Xiamen?", reader=reader, depth=2, followups_per_round=2)
    tree = result.context["tree"]
    assert tree["depth"].max() == 2
    assert tree.filter(pl.col("depth") == 0).height == 1
    for depth in (1, 2):
        assert 1 <= tree.filter(pl.col("depth") == depth).height <= 2
    ids = set(tree["id"].to_list())
    assert all(parent in ids for parent in tree["parent"].drop_nulls().to_list())
    assert result.answer.startswith(EXTRACTIVE_LABEL)
    _resolves(result, reader)


def test_basic_search_packs_by_rank_within_budget(reader):
    result = basic_search("lantern festival procession", reader=reader, k=8, budget=1_000)
    sources = result.context["sources"]
    assert sources.height > 0
    assert sources["rank"].to_list() == sorted(sources["rank"].to_list())
    assert "lantern" in sources["text"][0].lower()
    assert result.usage.context_tokens <= 1_000
    _resolves(result, reader)


@pytest.mark.parametrize(
    "question, method",
    [
        ("What are the main themes across these documents?", "global"),
        ("What did Victor Ashdown decide about Gullwing Pier?", "local"),
        ("How many volunteers came on the first day?", "basic"),
    ],
)
def test_auto_routing_says_which_mode_and_why(reader, question, method):
    result = search(question, reader=reader)
    assert result.method == method
    assert result.route_reason


def test_streaming_and_async_forms(reader):
    stream = search_stream("What did Clara Okafor do?", reader=reader, method="local")
    pieces = list(stream)
    assert len(pieces) > 1 and "".join(pieces) == stream.result.answer
    result = asyncio.run(asearch("What did Clara Okafor do?", reader=reader, method="local"))
    assert result.answer == stream.result.answer


def test_queries_succeed_while_another_process_holds_the_index_for_writing(sample_index):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                f"import duckdb, time; c = duckdb.connect({sample_index.db!r}); c.execute('BEGIN'); "
                f"print('locked', "
                f"flush=True); time.sleep(60)"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(duckdb.IOException):
            duckdb.connect(sample_index.db, read_only=True)  # the live file is locked
        started = time.perf_counter()
        result = search("What did Clara Okafor do for the Verrin River?", database=sample_index.db)
        assert time.perf_counter() - started < 20
        assert result.citations
    finally:
        holder.kill()
        holder.wait()


def test_graphrag_query_cli_json(sample_index):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphrag_query.cli",
            "What did Clara Okafor do?",
            "--db",
            sample_index.db,
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["method"] in {"local", "basic"} and payload["route_reason"]
    assert payload["citations"] and payload["usage"]["llm_calls"] == 0


def test_graphrag_query_cli_prints_the_answer_then_its_sources(sample_index):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphrag_query.cli",
            "What did Clara Okafor do?",
            "--db",
            sample_index.db,
            "--method",
            "local",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    answer, _, footer = out.stdout.partition("\n\n[local search")
    assert "Clara Okafor" in answer
    assert "Sources:" in footer and "(0 LLM calls" in footer
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphrag_query.cli",
            "anything",
            "--db",
            str(Path(sample_index.db).with_name("absent.duckdb")),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert missing.returncode == 2 and "absent.duckdb" in missing.stderr


@pytest.mark.parametrize("method", ["local", "basic", "auto"])
def test_offline_answers_a_chinese_question_from_the_chinese_documents(reader, method):
    result = search("王海燕和厦门大学有什么关系？", method=method, reader=reader, use_llm=False)
    assert result.answer.startswith(EXTRACTIVE_LABEL)
    assert "王海燕" in result.answer and "厦门大学" in result.answer


def test_a_result_displays_its_answer_sources_and_usage_with_the_context_folded(reader):
    result = local_search("What did Clara Okafor do for the Verrin River?", reader=reader)
    cited = {c.text_unit_human_readable_id: c.document_title for c in result.citations}
    markdown = result._repr_markdown_()
    assert markdown.startswith("**local search (extractive, no LLM)**") and result.answer in markdown
    # Sources carry the numbers the answer cites, each once.
    for number, title in cited.items():
        assert markdown.count(f"- ({number}) {title}") == 1
    page = result._repr_html_()
    assert page.count("<details>") == len(result.context) and "context tokens" in page
    assert len(repr(result)) < 1_000 and "sources: " in repr(result)


# Each option of search() and the flag of graphrag-query that sets it (the question is the
# argument; a reader and a history are Python objects).
CLI_FLAGS = {
    "method": "--method",
    "database": "--db",
    "corpus": "--corpus",
    "community_level": "--community-level",
    "budget": "--budget",
    "response_type": "--response-type",
    "use_llm": "--offline",
}


def test_graphrag_query_help_lists_every_option_of_the_api():
    import inspect

    out = subprocess.run(
        [sys.executable, "-m", "graphrag_query.cli", "--help"], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert out.returncode == 0
    options = set(inspect.signature(search).parameters) - {"question", "reader", "history"}
    assert options == set(CLI_FLAGS), "a search() option without its graphrag-query flag"
    for flag in [*CLI_FLAGS.values(), "--stream", "--no-stream", "--json"]:
        assert flag in out.stdout, flag


def test_graphrag_query_options_reach_the_answer_and_an_unknown_corpus_names_the_corpora(sample_index):
    def query(*arguments):
        return subprocess.run(
            [sys.executable, "-m", "graphrag_query.cli", *arguments, "--db", sample_index.db],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )

    out = query("What are the main themes?", "--method", "global", "--community-level", "0", "--no-stream", "--json")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["method"] == "global" and payload["usage"]["llm_calls"] == 0
    out = query("What did Clara Okafor do?", "--method", "local", "--budget", "800", "--json")
    assert out.returncode == 0, out.stderr
    assert 0 < json.loads(out.stdout)["usage"]["context_tokens"] <= 800
    out = query("What did Clara Okafor do?", "--method", "local", "--no-stream", "--offline")
    assert out.returncode == 0, out.stderr
    assert "Clara Okafor" in out.stdout.partition("\n\n[local search")[0]

    out = query("anything", "--corpus", "nosuch")
    assert out.returncode == 2
    assert "no corpus 'nosuch'" in out.stderr and "its corpora: default" in out.stderr, out.stderr


def test_basic_search_fills_its_budget_instead_of_stopping_at_ten_passages(index, tmp_path):
    input_dir = tmp_path / "input" / "harbor"
    input_dir.mkdir(parents=True)
    for number in range(30):
        (input_dir / f"log_{number:02}.txt").write_text(
            f"Harbor log {number}: the pilot boat Gannet {number} guided a freighter past Gullwing Pier.\n"
        )
    settings, _ = index(input_dir.parent)
    reader = IndexReader(settings.db, "harbor")
    full = basic_search("Which pilot boat guided a freighter past Gullwing Pier?", reader=reader, use_llm=False)
    assert full.context["sources"].height == 30 and full.usage.context_tokens <= 12_000
    small = basic_search("Which pilot boat guided a freighter?", reader=reader, use_llm=False, budget=200)
    assert 0 < small.usage.context_tokens <= 200 and small.context["sources"].height < 30
    assert basic_search("pilot boat", reader=reader, use_llm=False, k=4).context["sources"].height == 4


@pytest.mark.parametrize(
    "question", ["What are the top themes in this story?", "What are the main themes of the Zorblax expedition?"]
)
def test_offline_global_search_answers_an_overview_from_the_reports_instead_of_refusing(reader, question):
    result = global_search(question, reader=reader, use_llm=False)
    assert result.answer != NO_DATA_ANSWER and result.answer.startswith(EXTRACTIVE_LABEL)
    assert result.context["points"].height > 0 and "[Data: Reports (" in result.answer
    if "Zorblax" in question:
        assert 'No community report contains: "zorblax"' in result.answer


def test_offline_global_search_still_refuses_a_question_no_report_answers(reader):
    result = global_search("Who repaired the Zorblax engine?", reader=reader, use_llm=False)
    assert result.answer == NO_DATA_ANSWER


def _story_index(index, tmp_path, corpus: str, story: str, **settings) -> IndexReader:
    """A corpus of one story, indexed offline with ``settings``."""
    input_dir = tmp_path / "input" / corpus
    input_dir.mkdir(parents=True)
    (input_dir / "story.txt").write_text(story)
    indexed, _ = index(input_dir.parent, **settings)
    return IndexReader(indexed.db, corpus)


def test_global_search_answers_a_detail_no_report_holds_from_the_sources_behind_the_reports(index, tmp_path):
    # Reports summarise what their entities do together; a detail said of one name only
    # ("read upon the stone ... his own name") is in no report, but in the text units
    # behind the reports selected for the question: the answer quotes them, not a refusal.
    reader = _story_index(
        index,
        tmp_path,
        "lighthouse",
        "Edwin Hale and Mara Quill kept the lighthouse at Gull Point. Edwin Hale trimmed the lamp "
        "while Mara Quill wrote the log at Gull Point.\n\nOne winter night the gale drove a wreck onto "
        "the rocks below, and in the morning Edwin went down alone. He read the name painted across "
        "the broken stern of the wreck: Osprey, his father's boat.\n",
    )
    result = global_search("What name did Edwin read on the wreck?", reader=reader)
    assert result.context["points"].is_empty()
    assert result.answer.startswith(EXTRACTIVE_LABEL) and result.answer != NO_DATA_ANSWER
    assert "He read the name painted across the broken stern of the wreck: Osprey" in result.answer
    assert "[Data: Sources (" in result.answer and not result.context["sources"].is_empty()
    assert global_search("Who repaired the Zorblax engine?", reader=reader).answer == NO_DATA_ANSWER


def test_offline_local_answer_names_a_two_hop_answer_through_its_bridge(index, tmp_path):
    input_dir = tmp_path / "input" / "films"
    input_dir.mkdir(parents=True)
    documents = {
        "blue_harbour.txt": "Blue Harbour is a 1994 drama film directed by Lucia Ferro. It follows a ferry crew.",
        "lucia_ferro.txt": "Lucia Ferro was born in Turin. She studied painting in Milan before she made films.",
        "grey_coast.txt": "Grey Coast is a 2001 film directed by Tomas Berg, who was born in Bergen.",
        "tomas_berg.txt": "Tomas Berg is a Norwegian director known for documentaries about fishing towns.",
    }
    for name, text in documents.items():
        (input_dir / name).write_text(text + "\n")
    settings, _ = index(input_dir.parent)
    result = local_search(
        "Where was the director of film Blue Harbour born?",
        reader=IndexReader(settings.db, "films"),
        use_llm=False,
    )
    statement = result.answer.splitlines()[1]
    assert result.answer.startswith(EXTRACTIVE_LABEL)
    assert statement.startswith("Answer: Turin, through Lucia Ferro:"), result.answer
    assert '"Blue Harbour is a 1994 drama film directed by Lucia Ferro."' in statement
    assert '"Lucia Ferro was born in Turin."' in statement and "[Data: Sources (" in statement


def test_offline_local_search_answers_an_overview_from_its_reports_and_still_refuses_the_unknown(reader):
    overview = local_search("What are the top themes in this story?", reader=reader, use_llm=False)
    assert overview.answer.startswith(EXTRACTIVE_LABEL) and "[Data: Reports (" in overview.answer
    assert local_search("Who repaired the Zorblax engine?", reader=reader, use_llm=False).answer == NO_DATA_ANSWER


def test_offline_basic_and_drift_answer_an_overview_from_what_they_found_and_still_refuse_the_unknown(reader):
    question = "What are the top themes in this story?"  # shares no word with any report
    basic = basic_search(question, reader=reader, use_llm=False)
    assert basic.answer.startswith(EXTRACTIVE_LABEL) and "the passages found for it begin:" in basic.answer
    quoted = [line for line in basic.answer.splitlines() if line.startswith("- ")]
    assert quoted and all("[Data: Sources (" in line for line in quoted)
    assert not any(line[2:3].islower() for line in quoted)  # a sentence, not the tail of one
    drift = drift_search(question, reader=reader, use_llm=False)
    assert drift.answer.startswith(EXTRACTIVE_LABEL) and "[Data: Reports (" in drift.answer
    assert drift.context["reports"].height > 0  # the primer starts from the most important reports
    for mode_search in (basic_search, drift_search):
        assert mode_search("Who repaired the Zorblax engine?", reader=reader, use_llm=False).answer == NO_DATA_ANSWER


def test_a_long_text_unit_ranked_first_does_not_leave_a_small_local_budget_without_sources(reader):
    from graphrag_query.context import pack

    rows = pl.DataFrame({"text": ["word " * 400, "short one", "short two", "word " * 400, "short three"]})
    kept, _, used = pack(rows, lambda r: r["text"], 50, pass_over=2)
    assert kept["text"].to_list() == ["short one", "short two", "short three"] and 0 < used <= 50
    # Without passing over, what is kept is a prefix of the ranking: here nothing.
    assert pack(rows, lambda r: r["text"], 50)[0].is_empty()
    result = local_search("What did Clara Okafor do?", reader=reader, budget=800, use_llm=False)
    assert 0 < result.usage.context_tokens <= 800 and result.context["sources"].height > 0


def test_offline_answer_reads_a_pronoun_from_the_text_unit_before_the_one_retrieved(index, tmp_path):
    # Chunked small, the story puts what Martha buys ("the great plum cake") in one text
    # unit and "Go and buy it ... carry it to the Hollins house" in the next: the answer
    # names the cake, citing both.
    reader = _story_index(
        index,
        tmp_path,
        "bakery",
        "Martha Hollins stopped at the corner of Mill Lane and called to a girl in the street.\n\n"
        "'Do you know whether the baker has sold the great plum cake that stood in his window? "
        "Not the little plum cake: the great one.'\n\n"
        "'It is there still,' replied the girl, who knew the baker well.\n\n"
        "The bells of the chapel rang out over the snow, and the carts went slowly by.\n\n"
        "'Then go and buy it,' said Martha Hollins, 'and carry it to the Hollins house, and you shall "
        "have a shilling for your trouble.' The girl ran off at once through the snow.\n",
        chunk_size=60,
        chunk_overlap=0,
    )
    units = reader.table("text_units").sort("chunk_index")["text"].to_list()
    assert len(units) > 1 and not any("plum cake" in unit and "buy it" in unit for unit in units)
    result = local_search("What does Martha Hollins buy for the Hollins house?", reader=reader, use_llm=False)
    line = result.answer.splitlines()[1]
    assert line.startswith("Answer: great plum cake, from the passage that says"), result.answer
    assert line.count("[Data: Sources (") == 2
