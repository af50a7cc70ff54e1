"""Killing the indexer halfway (SIGKILL) and rerunning makes no completion call twice:
every answer is in the DuckDB cache the moment it arrives. Ctrl-C and SIGTERM stop it at
once, as a kill would, even while a call is in flight."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import duckdb

from .conftest import REPO
from .fake_openai import FakeOpenAI


def _key(request: dict) -> str:
    body = request["body"]
    return hashlib.sha256(json.dumps([body.get("model"), body.get("messages")], sort_keys=True).encode()).hexdigest()


def _indexer(tmp_path, input_dir, fake: FakeOpenAI) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of graphrag-index over ``input_dir`` with the fake
    model, two calls in flight, in a Dagster home of its own."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    env = os.environ | {
        "DAGSTER_HOME": str(home),
        "GRAPHRAG_LLM_BASE_URL": fake.base_url,
        "GRAPHRAG_LLM_API_KEY": "sk-test-kill",
        "GRAPHRAG_LLM_MODEL": "fake-chat",
        "GRAPHRAG_LLM_CONCURRENCY": "2",
    }
    command = [sys.executable, "-m", "graphrag_evaluation.cli", "--input", str(input_dir)]
    return command + ["--db", str(tmp_path / "index.duckdb"), "--vectors", str(tmp_path / "lancedb")], env


def test_sigkill_mid_extraction_then_rerun_repeats_no_finished_call(tmp_path, input_dir):
    with FakeOpenAI(latency_seconds=0.25) as fake:
        command, env = _indexer(tmp_path, input_dir, fake)
        # Its own process group: the kill takes down everything it started, as a crash would.
        process = subprocess.Popen(
            command, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        deadline = time.monotonic() + 120
        while len([r for r in fake.completions() if "finished" in r]) < 10:
            assert time.monotonic() < deadline and process.poll() is None, "indexer ended before it could be killed"
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        killed_at = time.monotonic()
        # Answered well before the kill (the cache write follows the response by milliseconds).
        answered = {_key(r) for r in fake.completions() if r.get("finished", killed_at) < killed_at - 0.5}
        before = len(fake.requests)
        assert answered

        rerun_env = env | {"GRAPHRAG_LLM_CONCURRENCY": "16"}
        rerun = subprocess.run(command, env=rerun_env, cwd=REPO, capture_output=True, text=True, timeout=600)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        repeated = [
            r["task"] for r in fake.requests[before:] if r["path"].endswith("/chat/completions") and _key(r) in answered
        ]
        assert repeated == []
    with duckdb.connect(str(tmp_path / "index.duckdb"), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM community_reports").fetchone()[0] > 0
        assert connection.execute("SELECT count(*) FROM llm_failures").fetchone()[0] == 0


def test_ctrl_c_and_sigterm_stop_the_indexer_at_once_with_a_call_in_flight(tmp_path, input_dir):
    import psutil

    # Every answer takes a minute, as on a one-slot local server: a graceful stop would wait for it.
    with FakeOpenAI(latency_seconds=60) as fake:
        command, env = _indexer(tmp_path, input_dir, fake)
        for stop, to_group in ((signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGTERM, True)):
            before = len(fake.requests)
            process = subprocess.Popen(
                command, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
            )
            deadline = time.monotonic() + 120
            while not [r for r in fake.requests[before:] if "finished" not in r]:
                assert time.monotonic() < deadline and process.poll() is None, "no request was sent"
                time.sleep(0.05)
            children = psutil.Process(process.pid).children(recursive=True)
            sent = time.monotonic()
            # Ctrl-C signals the terminal's whole process group; SIGTERM (a service manager) the process, or
            # the whole group (systemd's default stop), when the step processes get it too.
            os.killpg(process.pid, stop) if to_group else process.send_signal(stop)
            error = process.communicate(timeout=10)[1].decode()
            assert time.monotonic() - sent < 5
            assert process.returncode == 128 + stop
            assert f"stopped by {stop.name}" in error and "run again to continue" in error
            # No process is left behind; one may still be exiting (a log tail in disk sleep) for a moment.
            _, alive = psutil.wait_procs(children, timeout=5)
            assert not [child for child in alive if child.is_running() and child.status() != psutil.STATUS_ZOMBIE]
        fake.latency_seconds = 0
        rerun = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, timeout=600)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
    with duckdb.connect(str(tmp_path / "index.duckdb"), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM community_reports").fetchone()[0] > 0
