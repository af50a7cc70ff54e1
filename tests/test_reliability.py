"""What counts as done, and what a rerun repairs: a build killed while it was being
published, a deleted vector mirror, LLM calls that failed after their retries, and an
endpoint that refuses the key. ``graphrag-index`` runs as a user runs it (a subprocess
with a real Dagster instance), against the real test HTTP server for the LLM path."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

from graphrag_assets.storage.snapshot import pointer_path, published_builds, snapshot_dir

from .conftest import FAKE_LLM_KEY, REPO, SAMPLE_CORPUS
from .fake_openai import FakeOpenAI, Fault

EDITED = "river_cleanup.txt"
EDIT_MARKER = "Quillon Barrowmere"


class Indexer:
    """``graphrag-index`` over one input folder, DuckDB file, LanceDB folder and DAGSTER_HOME."""

    def __init__(self, tmp_path: Path, **env: str):
        self.input = tmp_path / "input"
        shutil.copytree(SAMPLE_CORPUS, self.input)
        self.database = tmp_path / "index" / "graphrag.duckdb"
        self.vectors = tmp_path / "index" / "lancedb"
        home = tmp_path / "dagster_home"
        home.mkdir()
        shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
        self.env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "DAGSTER_HOME": str(home)} | env
        self.command = [
            sys.executable, "-m", "graphrag_evaluation.cli",
            "--input", str(self.input), "--db", str(self.database), "--vectors", str(self.vectors),
        ]  # fmt: skip

    def run(self, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.command, cwd=REPO, env=self.env | env, capture_output=True, text=True, timeout=600)

    def start(self) -> subprocess.Popen:
        # Its own process group: the kill takes down everything it started, as a crash would.
        return subprocess.Popen(
            self.command,
            cwd=REPO,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def query(self, sql: str, snapshot: bool = False) -> pl.DataFrame:
        path = published_snapshot(self.database) if snapshot else self.database
        with duckdb.connect(str(path), read_only=True) as connection:
            return connection.execute(sql).pl()

    def edit(self) -> None:
        with open(self.input / "default" / EDITED, "a") as file:
            file.write(f"\n\n{EDIT_MARKER} led the autumn river survey with the Harbor Institute.\n")


def published_snapshot(database: Path) -> Path:
    return Path(json.loads(pointer_path(database).read_text())["snapshot"])


def kill_while_publishing(indexer: Indexer) -> None:
    """Run the indexer and SIGKILL it inside ``published_index``: after the snapshot is
    copied, before readers are pointed at it. A FIFO where the new pointer is staged
    blocks the step at exactly that point, so the kill lands there every time."""
    staged = pointer_path(indexer.database).with_suffix(".tmp")
    indexer.database.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(staged)
    snapshots_before = set(snapshot_dir(indexer.database).glob("*.duckdb"))
    process = indexer.start()
    try:
        deadline = time.monotonic() + 300
        while set(snapshot_dir(indexer.database).glob("*.duckdb")) <= snapshots_before:
            assert process.poll() is None, "the indexer ended before publishing"
            assert time.monotonic() < deadline, "the indexer never reached published_index"
            time.sleep(0.1)
        time.sleep(0.5)  # now blocked opening the FIFO
        assert process.poll() is None
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        staged.unlink()


def test_sigkill_while_publishing_a_first_index_then_the_rerun_publishes_it(tmp_path):
    indexer = Indexer(tmp_path)
    kill_while_publishing(indexer)
    assert not pointer_path(indexer.database).exists()

    rerun = indexer.run()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "evaluations + published_index (last build not published)" in rerun.stdout
    assert "no work" not in rerun.stdout
    built = indexer.query("SELECT corpus, epoch_us(built_at) AS stamp FROM corpus_builds")
    assert published_builds(indexer.database) == dict(built.iter_rows())
    assert indexer.query("SELECT count(*) AS n FROM entities", snapshot=True)["n"][0] > 0
    assert "no work: index is up to date" in indexer.run().stdout


def test_sigkill_while_publishing_an_update_then_the_rerun_publishes_the_edit(tmp_path):
    indexer = Indexer(tmp_path)
    assert indexer.run().returncode == 0
    indexer.edit()
    kill_while_publishing(indexer)
    marker = f"SELECT count(*) AS n FROM text_units WHERE text LIKE '%{EDIT_MARKER}%'"
    assert indexer.query(marker)["n"][0] == 1  # in the live file
    assert indexer.query(marker, snapshot=True)["n"][0] == 0  # readers still see the old build

    rerun = indexer.run()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "0 new, 0 changed" in rerun.stdout and "last build not published" in rerun.stdout
    assert indexer.query(marker, snapshot=True)["n"][0] == 1
    assert (
        indexer.query(f"SELECT count(*) AS n FROM entities WHERE title ILIKE '%{EDIT_MARKER}%'", snapshot=True)["n"][0]
        == 1
    )


@pytest.fixture
def endpoint():
    with FakeOpenAI() as fake:
        yield fake


def llm_env(fake: FakeOpenAI, **extra: str) -> dict[str, str]:
    return {
        "GRAPHRAG_LLM_BASE_URL": fake.base_url,
        "GRAPHRAG_LLM_API_KEY": FAKE_LLM_KEY,
        "GRAPHRAG_LLM_MODEL": "fake-chat",
        "GRAPHRAG_EMBEDDING_MODEL": "fake-embed",
        "GRAPHRAG_LLM_CONCURRENCY": "4",
    } | extra


def test_deleted_vector_mirror_is_rebuilt_from_duckdb_without_embedding_again(tmp_path, endpoint):
    indexer = Indexer(tmp_path, **llm_env(endpoint))
    first = indexer.run()
    assert first.returncode == 0, first.stderr[-3000:]
    requests_before = len(endpoint.requests)
    shutil.rmtree(indexer.vectors)

    rerun = indexer.run()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "embeddings + evaluations + published_index (vectors missing" in rerun.stdout
    assert len(endpoint.requests) == requests_before  # no completion, no embedding request
    import lancedb

    tables = lancedb.connect(str(indexer.vectors))
    counts = indexer.query("SELECT kind, count(*) AS n FROM embeddings GROUP BY kind")
    for kind, n in counts.iter_rows():
        assert tables.open_table(kind).count_rows() == n
    assert "no work: index is up to date" in indexer.run().stdout


def test_failed_report_calls_fail_the_run_and_the_next_run_retries_exactly_them(tmp_path, endpoint):
    indexer = Indexer(tmp_path, **llm_env(endpoint, GRAPHRAG_LLM_MAX_RETRIES="1"))
    # An endpoint overloaded for report calls: every attempt gets 429, retries included.
    endpoint.faults.extend(Fault(status=429, retry_after=0, match="[task: community_report]") for _ in range(1000))
    overloaded = indexer.run()
    assert overloaded.returncode == 1
    failed = indexer.query("SELECT item_id FROM llm_failures WHERE stage = 'report'")
    communities = indexer.query("SELECT count(*) AS n FROM communities")["n"][0]
    assert failed.height == communities > 0
    assert f"LLM calls that failed after their retries: report {communities}" in overloaded.stderr
    # What was extracted and summarised is kept (and cached); reports fell back to extractive.
    assert indexer.query("SELECT count(*) AS n FROM entities")["n"][0] > 0

    endpoint.faults.clear()
    reports_before = len(endpoint.completions("community_report"))
    healthy = indexer.run()
    assert healthy.returncode == 0, healthy.stderr[-3000:]
    assert f"retrying {communities} failed summary/report call(s)" in healthy.stdout
    assert len(endpoint.completions("community_report")) - reports_before == communities
    assert indexer.query("SELECT count(*) AS n FROM llm_failures")["n"][0] == 0

    # The same reports and entities as a build that never saw a fault.
    clean = Indexer(tmp_path / "clean", **llm_env(endpoint))
    assert clean.run().returncode == 0
    for columns in (
        "SELECT title, type, description FROM entities ORDER BY title",
        "SELECT community, title, summary, generated_by FROM community_reports ORDER BY community",
    ):
        assert indexer.query(columns, snapshot=True).equals(clean.query(columns, snapshot=True))


def test_a_refused_key_stops_the_run_at_once_naming_the_setting(tmp_path, endpoint):
    indexer = Indexer(tmp_path, **llm_env(endpoint, GRAPHRAG_LLM_API_KEY="sk-wrong-key-123"))
    endpoint.faults.extend(Fault(status=401) for _ in range(1000))
    refused = indexer.run()
    assert refused.returncode == 1
    assert "HTTP 401" in refused.stderr and "GRAPHRAG_LLM_API_KEY" in refused.stderr
    assert "sk-wrong-key-123" not in refused.stdout + refused.stderr
    # Stopped at once: no retries, no step retried, not one call per text unit.
    assert len(endpoint.completions()) <= 4
    assert not pointer_path(indexer.database).exists()

    endpoint.faults.clear()
    fixed = indexer.run()
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert indexer.query("SELECT count(*) AS n FROM entities", snapshot=True)["n"][0] > 0


def test_a_held_index_file_fails_the_run_with_a_message_naming_the_holder_and_loses_nothing(tmp_path):
    indexer = Indexer(tmp_path)
    assert indexer.run().returncode == 0
    indexer.edit()
    code = (
        "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); print('open', flush=True); "
        "sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(indexer.database)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "open"
    try:
        held = indexer.run(GRAPHRAG_LOCK_WAIT_SECONDS="2")
    finally:
        holder.stdin.close()
        holder.wait()
    assert held.returncode == 1
    assert f"is held by process {holder.pid}" in held.stderr and "Traceback" not in held.stderr
    rerun = indexer.run()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert (
        indexer.query(f"SELECT count(*) AS n FROM text_units WHERE text LIKE '%{EDIT_MARKER}%'", snapshot=True)["n"][0]
        == 1
    )


def _sent_again(first: list[dict], rerun: list[dict]) -> list[str]:
    """What ``rerun`` asked that ``first`` had been answered already: completions by model
    and messages, embeddings by input text (a rerun may batch the texts differently)."""

    def asked(requests: list[dict]) -> list[str]:
        items = []
        for request in requests:
            body = request["body"]
            if request["path"].endswith("/embeddings"):
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                items += [f"embedding|{body['model']}|{text}" for text in inputs]
            else:
                items.append(json.dumps([body["model"], body["messages"]], sort_keys=True))
        return items

    answered = set(asked(first))
    return [item for item in asked(rerun) if item in answered]


def test_a_key_revoked_mid_run_keeps_every_answer_sent_and_the_rerun_pays_for_none_twice(tmp_path, endpoint):
    indexer = Indexer(tmp_path, **llm_env(endpoint))  # four calls in flight at a time
    endpoint.latency_seconds = 0.05  # calls overlap, so the refusal meets answers in flight
    endpoint.refuse_after_answers = 6
    started = time.monotonic()
    refused = indexer.run()
    seconds = time.monotonic() - started
    assert refused.returncode == 1, refused.stderr[-3000:]
    assert "HTTP 401" in refused.stderr and "GRAPHRAG_LLM_API_KEY" in refused.stderr
    assert seconds < 60  # stopped at once, no hang
    answered = endpoint.answered()
    assert len(answered) == 6
    # Every answer the endpoint sent is in the cache, and recorded as a paid call.
    completions = [r for r in answered if r["path"].endswith("/chat/completions")]
    texts = sum(len(r["body"]["input"]) for r in answered if r["path"].endswith("/embeddings"))
    cached = indexer.query(
        "SELECT count(*) FILTER (stage <> 'embedding') AS completions, count(*) FILTER (stage = 'embedding') AS texts "
        "FROM llm_cache"
    )
    assert cached.row(0) == (len(completions), texts)
    paid = indexer.query("SELECT count(*) AS n FROM llm_calls WHERE NOT cached")["n"][0]
    assert paid == len(answered)

    endpoint.refuse_after_answers = None  # the key is fixed
    first_requests = len(endpoint.requests)
    fixed = indexer.run()
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert _sent_again(answered, endpoint.requests[first_requests:]) == []
    assert indexer.query("SELECT count(*) AS n FROM entities", snapshot=True)["n"][0] > 0
