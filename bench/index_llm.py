"""Benchmark: the LLM path against a local OpenAI-compatible endpoint with realistic
latency (300 ms per call plus 2 ms per completion token), concurrency 16.

    .venv/bin/python bench/index_llm.py                                 # the book, 5 runs
    .venv/bin/python bench/index_llm.py --podcast-files 400 --repeat 1  # 400 podcast files

Records calls by kind, tokens, wall time (whole command, and the span during which LLM
calls were in flight) and peak memory; then re-runs with nothing changed (zero calls
expected). The span varies by a few tenths of a second from run to run on a small
corpus, so several first indexes are run and the median one is reported, with every
span. The span is compared with two bounds no scheduler can beat:

- the ideal: sum of call latencies / concurrency;
- the dependency bound: the stages are barriers set by the data (merge decisions and
  summaries need every extraction, clustering needs the merged graph, reports need the
  communities), so the span is at least the sum over stages of max(stage latencies /
  concurrency, the stage's longest chain of dependent calls: a text unit's extraction
  then its gleaning, or a report then the embedding of its text). Merge decisions and
  summaries are one stage: most summaries do not wait for the decisions. Embedding
  requests are counted with the reports: those of text units and entities can overlap
  any stage, but a report's embedding can only follow the report.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from fake_endpoint import CONCURRENCY, REPO, fake_endpoint

SHARED = REPO.parent / "shared" / "corpus"
# Stages in data-dependency order; calls of one stage can overlap, stages cannot.
STAGES = {
    "extraction": ("extract_graph", "glean", "extract_claims"),
    "merge decisions and summaries": ("confirm_merges", "summarize_descriptions"),
    "reports": ("community_report", None),  # None: embedding requests
}


def _chain_key(request: dict) -> str:
    """A text unit's extraction and gleaning calls both end with its text (after the
    prompts' last "-----Text-----" marker)."""
    first = str(request["body"].get("messages", [{}])[0].get("content", ""))
    return hashlib.sha256(first.rsplit("-----Text-----", 1)[-1].encode()).hexdigest()


def dependency_bound(requests: list[dict]) -> tuple[float, dict]:
    total, per_stage = 0.0, {}
    for stage, tasks in STAGES.items():
        calls = [r for r in requests if r["task"] in tasks]
        if not calls:
            continue
        chains: dict[str, float] = defaultdict(float)
        for r in calls:
            chains[_chain_key(r) if stage == "extraction" else str(id(r))] += r["latency"]
        longest = max(chains.values())
        if stage == "reports":
            longest = max(r["latency"] for r in calls if r["task"]) + max(
                (r["latency"] for r in calls if not r["task"]), default=0
            )
        bound = max(sum(r["latency"] for r in calls) / CONCURRENCY, longest)
        per_stage[stage] = round(bound, 2)
        total += bound
    return total, per_stage


def dagster_steps(home: Path, origin_wall: float) -> list[dict]:
    """Each run's steps (start and end, seconds from the first LLM request), from the
    instance's event log: where the time between LLM stages goes."""
    from dagster import DagsterEventType, DagsterInstance

    os.environ["DAGSTER_HOME"] = str(home)
    steps = []
    with DagsterInstance.get() as instance:
        for run in reversed(instance.get_runs()):
            events = instance.all_logs(
                run.run_id,
                of_type={
                    DagsterEventType.RUN_START,
                    DagsterEventType.RUN_SUCCESS,
                    DagsterEventType.STEP_START,
                    DagsterEventType.STEP_SUCCESS,
                },
            )
            for event in events:
                steps.append(
                    {
                        "run": run.job_name,
                        "event": event.dagster_event.event_type_value,
                        "step": event.step_key,
                        "at_s": round(event.timestamp - origin_wall, 2),
                    }
                )
    return steps


def _input(args, work: Path) -> tuple[Path, str, str]:
    if not args.podcast_files:
        return SHARED / "christmas_carol", "christmas_carol", str(SHARED / "christmas_carol")
    folder = work / "input"
    folder.mkdir()
    files = sorted((SHARED / "podcasts").glob("*.txt"))[: args.podcast_files]
    for path in files:
        shutil.copy(path, folder / path.name)
    return folder, "podcasts", f"first {len(files)} files of {SHARED / 'podcasts'}"


def index_once(args, run: int) -> dict:
    """One first index of the corpus in a fresh work folder, then a re-run with nothing
    changed (zero calls expected)."""
    work = Path(tempfile.mkdtemp(prefix="graphrag-llm-bench-"))
    folder, corpus, description = _input(args, work)
    with fake_endpoint(work) as (fake, env):
        command = [
            sys.executable,
            "-m",
            "graphrag_evaluation.cli",
            "--input",
            str(folder),
            "--corpus",
            corpus,
            "--db",
            str(work / "index.duckdb"),
            "--vectors",
            str(work / "lancedb"),
        ]
        wall_minus_monotonic = time.time() - time.monotonic()
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
    bound, bound_by_stage = dependency_bound(requests)
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
        "corpus": description,
        "completion_calls": len(completions),
        "completion_calls_by_kind": dict(Counter(r["task"] for r in completions)),
        "embedding_requests": len(embeddings),
        "prompt_tokens": sum(r["prompt_tokens"] for r in completions),
        "completion_tokens": sum(r["completion_tokens"] for r in completions),
        "sum_of_call_latencies_s": round(latency_sum, 1),
        "ideal_wall_s (sum / concurrency)": round(ideal, 1),
        "dependency_bound_s": round(bound, 1),
        "dependency_bound_by_stage_s": bound_by_stage,
        "llm_span_s (first request to last response)": round(llm_span, 2),
        "stages": stages,
        "dagster_timeline": dagster_steps(Path(env["DAGSTER_HOME"]), origin + wall_minus_monotonic),
        "wall_s (whole command, incl. Python and Dagster start-up)": round(wall, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "rerun_requests": rerun_requests,
        "rerun_summary": again.stdout.strip().splitlines()[-1],
        "summary": first.stdout.strip().splitlines()[-1],
    }
    shutil.rmtree(work)
    print(f"run {run}: LLM span {llm_span:.2f} s", file=sys.stderr)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--podcast-files", type=int, default=0, help="index the first N podcast files instead of A Christmas Carol"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="first indexes to run; the run with the median LLM span is reported in full",
    )
    args = parser.parse_args()
    runs = sorted(
        (index_once(args, n + 1) for n in range(args.repeat)),
        key=lambda r: r["llm_span_s (first request to last response)"],
    )
    result = runs[len(runs) // 2]
    median = result["llm_span_s (first request to last response)"]
    result |= {
        "llm_span_s of every run (sorted)": [r["llm_span_s (first request to last response)"] for r in runs],
        "llm_span_over_ideal (median run)": round(median / result["ideal_wall_s (sum / concurrency)"], 2),
        "llm_span_over_dependency_bound (median run)": round(median / result["dependency_bound_s"], 2),
    }
    name = f"index_llm_podcasts_{args.podcast_files}" if args.podcast_files else "index_llm_christmas_carol"
    out = REPO / "bench" / "results" / f"{name}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
