"""Benchmark: the LLM path on A Christmas Carol against a local OpenAI-compatible endpoint
with realistic latency (300 ms per call plus 2 ms per completion token), concurrency 16.

    .venv/bin/python bench/index_christmas_carol_llm.py

Records calls by kind, tokens, wall time (whole command, and the span during which LLM
calls were in flight) against the ideal of (sum of call latencies / concurrency), and
peak memory; then re-runs with nothing changed (zero calls expected).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fake_openai import FakeOpenAI  # noqa: E402

CONCURRENCY = 16


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="graphrag-llm-bench-"))
    home = work / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    book = REPO.parent / "shared" / "corpus" / "christmas_carol"
    with FakeOpenAI(latency_seconds=0.3, seconds_per_completion_token=0.002, embedding_dimensions=64) as fake:
        env = os.environ | {
            "DAGSTER_HOME": str(home),
            "GRAPHRAG_LLM_BASE_URL": fake.base_url,
            "GRAPHRAG_LLM_API_KEY": "sk-bench",
            "GRAPHRAG_LLM_MODEL": "fake-chat",
            "GRAPHRAG_EMBEDDING_MODEL": "fake-embed",
            "GRAPHRAG_LLM_CONCURRENCY": str(CONCURRENCY),
        }
        command = [sys.executable, "-m", "graphrag_assets.cli", "--input", str(book), "--corpus", "christmas_carol", "--db", str(work / "index.duckdb"), "--vectors", str(work / "lancedb")]
        started = time.perf_counter()
        first = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if first.returncode != 0:
            raise SystemExit(first.stderr[-3000:])
        requests = list(fake.requests)
        again = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True)
        rerun_requests = len(fake.requests) - len(requests)

    completions = [r for r in requests if r["path"].endswith("/chat/completions")]
    embeddings = [r for r in requests if r["path"].endswith("/embeddings")]
    latency_sum = sum(r["latency"] for r in requests)
    ideal = latency_sum / CONCURRENCY
    llm_span = max(r["finished"] for r in requests) - min(r["started"] for r in requests)
    origin = min(r["started"] for r in requests)
    stages = {}
    for kind in dict.fromkeys(r["task"] or "embedding" for r in requests):
        calls = [r for r in requests if (r["task"] or "embedding") == kind]
        stages[kind] = {
            "calls": len(calls),
            "from_s": round(min(r["started"] for r in calls) - origin, 1),
            "to_s": round(max(r["finished"] for r in calls) - origin, 1),
            "ideal_s": round(sum(r["latency"] for r in calls) / CONCURRENCY, 1),
        }
    result = {
        "corpus": str(book),
        "completion_calls": len(completions),
        "completion_calls_by_kind": dict(Counter(r["task"] for r in completions)),
        "embedding_requests": len(embeddings),
        "prompt_tokens": sum(r["prompt_tokens"] for r in completions),
        "completion_tokens": sum(r["completion_tokens"] for r in completions),
        "sum_of_call_latencies_s": round(latency_sum, 1),
        "ideal_wall_s (sum / concurrency)": round(ideal, 1),
        "llm_span_s (first request to last response)": round(llm_span, 1),
        "llm_span_over_ideal": round(llm_span / ideal, 2),
        "stages": stages,
        "wall_s (whole command, incl. Python and Dagster start-up)": round(wall, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "rerun_requests": rerun_requests,
        "rerun_summary": again.stdout.strip().splitlines()[-1],
        "summary": first.stdout.strip().splitlines()[-1],
    }
    out = REPO / "bench" / "results" / "index_christmas_carol_llm.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
