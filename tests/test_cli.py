"""graphrag-index as a user runs it: a subprocess, environment variables, exit codes."""

import os
import shutil
import subprocess
import sys

import duckdb
from dagster import AssetCheckKey, AssetKey, DagsterInstance
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

from .conftest import OFFLINE_CHECKS, REPO, SAMPLE_CORPUS, shared_path


def _run(args, dagster_home, tmp_path, **env):
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "DAGSTER_HOME": str(dagster_home),
        "GRAPHRAG_DB": str(tmp_path / "out" / "index.duckdb"),
        "GRAPHRAG_VECTORS": str(tmp_path / "out" / "lancedb"),
    } | env
    command = [sys.executable, "-c", "import sys; from graphrag_evaluation.cli import main; sys.exit(main())", *args]
    return subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=600)


def test_christmas_carol_index_meets_the_bar_and_its_checks_pass(dagster_home, tmp_path):
    book = shared_path("corpus", "christmas_carol")
    result = _run(["--input", str(book), "--corpus", "christmas_carol"], dagster_home, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "corpus christmas_carol:" in result.stdout and "LLM calls: 0" in result.stdout
    with duckdb.connect(str(tmp_path / "out" / "index.duckdb"), read_only=True) as connection:
        entities = connection.execute("SELECT count(*) FROM entities WHERE corpus = 'christmas_carol'").fetchone()[0]
        levels = connection.execute("SELECT count(DISTINCT level) FROM communities").fetchone()[0]
        unreported = connection.execute(
            "SELECT count(*) FROM communities c ANTI JOIN community_reports r USING (corpus, community)"
        ).fetchone()[0]
        reports, communities = connection.execute(
            "SELECT (SELECT count(*) FROM community_reports), (SELECT count(*) FROM communities)"
        ).fetchone()
        kinds = connection.execute("SELECT count(DISTINCT kind) FROM embeddings").fetchone()[0]
        titles = {
            row[0]
            for row in connection.execute("SELECT title FROM entities WHERE corpus = 'christmas_carol'").fetchall()
        }
    # The story's people and places rather than a count: precision over volume (bench/entities.py).
    assert entities >= 50
    assert {"Scrooge", "Tiny Tim", "Fezziwig", "Jacob Marley", "Fred", "Dick Wilkins", "London"} <= titles
    assert levels >= 2
    assert unreported == 0 and reports == communities
    assert kinds == 3
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    with DagsterInstance.get() as instance:
        keys = [AssetCheckKey(AssetKey(a), n) for a, n in OFFLINE_CHECKS]
        statuses = {r.status for r in instance.event_log_storage.get_latest_asset_check_execution_by_key(keys).values()}
        assert statuses == {AssetCheckExecutionRecordStatus.SUCCEEDED}
        assert len(instance.get_runs()) == 2  # one source run, one graph run

    again = _run(["--input", str(book), "--corpus", "christmas_carol"], dagster_home, tmp_path)
    assert again.returncode == 0 and "no work: index is up to date" in again.stdout


def test_unreadable_file_exits_2_naming_it_and_indexes_the_rest(dagster_home, tmp_path):
    folder = tmp_path / "input"
    shutil.copytree(REPO / "sample_corpus", folder)
    (folder / "default" / "scan.txt").write_bytes(b"\xff\xfe\x00\x00binary")
    result = _run([], dagster_home, tmp_path, GRAPHRAG_INPUT_DIR=str(folder))
    assert result.returncode == 2
    assert "unreadable source: default/scan.txt: file looks binary" in result.stderr
    assert "documents 12" in result.stdout


def test_invalid_setting_is_named(dagster_home, tmp_path):
    result = _run([], dagster_home, tmp_path, GRAPHRAG_CHUNK_OVERLAP="5000")
    assert result.returncode == 2
    assert "GRAPHRAG_CHUNK_OVERLAP" in result.stderr


def test_dry_run_estimates_llm_work_and_changes_nothing(dagster_home, tmp_path):
    result = _run(
        ["--dry-run"],
        dagster_home,
        tmp_path,
        GRAPHRAG_LLM_MODEL="some-model",
        GRAPHRAG_LLM_BASE_URL="http://127.0.0.1:9/v1",
        GRAPHRAG_GLEANINGS="1",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "dry run: 7 new, 0 changed, 0 deleted source(s); 13 text units" in result.stdout
    assert "LLM extraction: at most 26 calls" in result.stdout  # 13 units x (1 + 1 gleaning)
    assert (
        "embeddings" not in result.stdout and "communities now" not in result.stdout
    )  # no embedding model, no graph yet
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    with DagsterInstance.get() as instance:
        assert instance.get_runs() == [] and instance.get_dynamic_partitions("sources") == []
    # Nothing indexed, and not even an empty index file made.
    assert not (tmp_path / "out" / "index.duckdb").exists()


def test_dry_run_bounds_embeddings_and_reports_by_what_the_corpus_holds(dagster_home, tmp_path):
    folder = tmp_path / "input"
    shutil.copytree(SAMPLE_CORPUS, folder)
    assert _run(["--input", str(folder)], dagster_home, tmp_path).returncode == 0
    (folder / "default" / "new_notes.txt").write_text(
        "Mara Ellison and Tobias Renn opened the Beacon Point lab.\n", encoding="utf-8"
    )
    llm = {
        "GRAPHRAG_LLM_MODEL": "some-model",
        "GRAPHRAG_EMBEDDING_MODEL": "some-embedder",
        "GRAPHRAG_LLM_BASE_URL": "http://127.0.0.1:9/v1",
    }
    result = _run(["--input", str(folder), "--dry-run"], dagster_home, tmp_path, **llm)
    assert result.returncode == 0, result.stderr[-2000:]
    with duckdb.connect(str(tmp_path / "out" / "index.duckdb"), read_only=True) as connection:
        communities = connection.execute("SELECT count(*) FROM communities WHERE corpus = 'default'").fetchone()[0]
    assert communities > 0
    assert "embeddings: about 1 request(s) for the new text units" in result.stdout
    assert f"corpus default holds {communities} communities now" in result.stdout


def test_the_summary_counts_failed_calls_and_names_their_causes(dagster_home, tmp_path):
    from .fake_openai import FakeOpenAI, Fault

    unreachable = _run(
        [],
        dagster_home,
        tmp_path,
        GRAPHRAG_LLM_MODEL="some-model",
        GRAPHRAG_LLM_BASE_URL="http://127.0.0.1:9/v1",
        GRAPHRAG_LLM_MAX_RETRIES="0",
    )
    assert unreachable.returncode == 1
    # The sample corpus's 13 text units, one extraction call each, every one refused.
    assert "LLM calls: 13, 13 failed" in unreachable.stdout
    assert "LLM calls failed: 13 x connection refused" in unreachable.stderr
    refusal = "1 validation error: response_format.type Input should be 'text' or 'json_object'"
    with FakeOpenAI() as fake:
        fake.faults.extend([Fault(500, message=refusal)] * 20)
        refused = _run(
            [],
            dagster_home,
            tmp_path,
            GRAPHRAG_LLM_MODEL="some-model",
            GRAPHRAG_LLM_BASE_URL=fake.base_url,
            GRAPHRAG_LLM_MODE="json_schema",
            GRAPHRAG_LLM_CONCURRENCY="1",
        )
    assert refused.returncode == 1
    assert len(fake.completions()) == 3  # not retried, and the run stopped at the third alike
    assert "LLM calls: 3, 3 failed" in refused.stdout
    assert f"LLM calls failed: 3 x HTTP 500: {refusal}" in refused.stderr
    assert "refused alike 3 times" in refused.stderr and "GRAPHRAG_LLM_MODE (now 'json_schema'" in refused.stderr


def test_dry_run_counts_what_the_next_run_extracts_after_a_settings_or_model_change(dagster_home, tmp_path):
    from .fake_openai import FakeOpenAI

    folder = tmp_path / "input"
    shutil.copytree(SAMPLE_CORPUS, folder)
    assert _run(["--input", str(folder)], dagster_home, tmp_path).returncode == 0  # the offline quick start
    with FakeOpenAI() as fake:
        llm = {"GRAPHRAG_LLM_MODEL": "fake-chat", "GRAPHRAG_LLM_BASE_URL": fake.base_url, "GRAPHRAG_GLEANINGS": "1"}
        dry = _run(["--input", str(folder), "--dry-run"], dagster_home, tmp_path, **llm)
        assert dry.returncode == 0, dry.stderr[-2000:]
        assert "corpus default: every source extracted again" in dry.stdout
        assert "13 text units" in dry.stdout and "LLM extraction: at most 26 calls" in dry.stdout
        assert fake.requests == []  # a dry run asks nothing
        run = _run(["--input", str(folder)], dagster_home, tmp_path, **llm)
        assert run.returncode == 0, run.stderr[-2000:]
        # The fake model finds nothing more when gleaning, the bound's one pass per unit.
        assert len(fake.completions("extract_graph")) + len(fake.completions("glean")) == 26
        # Nothing changed since: nothing to extract. Another model: everything again.
        again = _run(["--input", str(folder), "--dry-run"], dagster_home, tmp_path, **llm)
        assert "0 text units" in again.stdout and "at most 0 calls" in again.stdout
        other = llm | {"GRAPHRAG_LLM_MODEL": "other-chat"}
        changed = _run(["--input", str(folder), "--dry-run"], dagster_home, tmp_path, **other)
        assert "13 text units" in changed.stdout and "at most 26 calls and about" in changed.stdout
        assert "prompt tokens with other-chat" in changed.stdout
        # Back to a model the cache has answered: every extraction is a cache hit.
        rebuilt = _run(["--input", str(folder), "--dry-run", "--rebuild", "extraction"], dagster_home, tmp_path, **llm)
        assert "at most 0 calls (13 text units answered by the cache)" in rebuilt.stdout
        # Another embedder: nothing extracted, everything embedded again, by the endpoint or offline.
        with duckdb.connect(str(tmp_path / "out" / "index.duckdb"), read_only=True) as connection:
            texts = sum(
                connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("text_units", "entities", "community_reports")
            )
        embedder = llm | {"GRAPHRAG_EMBEDDING_MODEL": "fake-embed"}
        embedded = _run(["--input", str(folder), "--dry-run"], dagster_home, tmp_path, **embedder)
        assert "0 text units" in embedded.stdout
        assert f"its {texts} text units, entities and reports embedded again" in embedded.stdout
        assert f"about {-(-texts // 64)} embedding request(s)" in embedded.stdout
        offline = llm | {"GRAPHRAG_EMBEDDING_DIMENSIONS": "128"}
        assert (
            "offline, no calls" in _run(["--input", str(folder), "--dry-run"], dagster_home, tmp_path, **offline).stdout
        )
