"""Benchmark: CPU the LLM client spends per call, against an instant fake endpoint.

    .venv/bin/python bench/client_cpu.py                         # 512 extraction calls, 64 in flight
    .venv/bin/python bench/client_cpu.py --calls 1024 --profile  # and where the CPU goes (cProfile)

The endpoint is ``../shared/tools/mockllm/server.py`` in its own process, with no latency
and no limit on calls served at once, so its CPU is not ours and the client is never held
back by it. The client is the one the indexer uses (``llm.session.LLMSession``: the
DuckDB cache in a file, the record of every call, usage counters), configured for
``--concurrency`` calls in flight; each call is an extraction of a different text unit of
A Christmas Carol (our prompt, tool calling, the ``GraphExtraction`` model), so every call
is a cache miss that is sent, validated, cached and recorded. The text units are embedded
too, ``--embed-batch`` (32) texts a request, as a build does.

Recorded: the process's CPU time (user + sys, every thread: the event loop, the cache
writer, DuckDB's own threads) from the first call to the last answer being durable in the
cache, divided by the calls; wall time; and the same for a second pass that the cache
answers. Warm-up calls (imports, connections) are not counted. Results go to
bench/results/client_cpu.json.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
MOCK_SERVER = SHARED / "tools" / "mockllm" / "server.py"
BOOK = SHARED / "corpus" / "christmas_carol" / "book.txt"
RESULTS = REPO / "bench" / "results" / "client_cpu.json"
sys.path.insert(0, str(REPO / "bench"))

from common import git, machine, write_json  # noqa: E402


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, str(MOCK_SERVER), "--port", str(port), "--latency-ms", "0", "--concurrency", "0"],
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5).close()
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the mock server did not start")


def text_units(count: int, words: int = 900) -> list[str]:
    """``count`` different pieces of the book, about 1,200 tokens each (the indexer's size)."""
    book = BOOK.read_text(encoding="utf-8").split()
    pieces = []
    for index in range(count):
        start = (index * 211) % max(1, len(book) - words)
        pieces.append(f"({index}) " + " ".join(book[start : start + words]))
    return pieces


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def one_pass(make_client, units: list[str], embed_batch: int) -> None:
    from graphrag_assets.llm.models import GraphExtraction
    from graphrag_assets.llm.prompts import load_prompt

    prompt = load_prompt("extract_graph")

    async def extract(client, text: str) -> None:
        await client.structured(
            "extraction",
            prompt.version,
            [{"role": "user", "content": prompt.render(entity_types="person, geo", text=text)}],
            GraphExtraction,
        )

    async with make_client() as client:
        calls = [extract(client, text) for text in units]
        if embed_batch:
            calls += [client.embed(units[start : start + embed_batch]) for start in range(0, len(units), embed_batch)]
        await asyncio.gather(*calls)


def measure(session, units: list[str], embed_batch: int, profile: bool) -> dict:
    profiler = cProfile.Profile() if profile else None
    started, wall = cpu(), time.perf_counter()
    if profiler:
        profiler.enable()
    asyncio.run(one_pass(session.client, units, embed_batch))
    session.cache.flush()  # every answer and record durable: part of the cost
    if profiler:
        profiler.disable()
    spent, elapsed = cpu() - started, time.perf_counter() - wall
    result = {
        "calls": len(units),
        "cpu_s": round(spent, 3),
        "wall_s": round(elapsed, 3),
        "cpu_ms_per_call": round(1000 * spent / len(units), 2),
        "calls_per_s": round(len(units) / elapsed, 1),
    }
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
        result["profile"] = out.getvalue()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=512)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument(
        "--embed-batch", type=int, default=32, help="the text units are also embedded, N a request (0: not embedded)"
    )
    parser.add_argument("--profile", action="store_true", help="print where the CPU of the first pass goes")
    parser.add_argument("--no-save", action="store_true", help="print only; leave the result file alone")
    args = parser.parse_args()

    port = free_port()
    server = start_server(port)
    folder = Path(tempfile.mkdtemp(prefix="client-cpu-"))
    os.environ.update(
        {
            "GRAPHRAG_LLM_BASE_URL": f"http://127.0.0.1:{port}/v1",
            "GRAPHRAG_LLM_API_KEY": "sk-bench",
            "GRAPHRAG_LLM_MODEL": "gpt-4.1",
            "GRAPHRAG_EMBEDDING_MODEL": "text-embedding-3-large",
            "GRAPHRAG_LLM_CONCURRENCY": str(args.concurrency),
            "GRAPHRAG_EMBEDDING_CONCURRENCY": "4",
        }
    )
    import duckdb

    from graphrag_assets.llm.cache import CallSite
    from graphrag_assets.llm.session import LLMSession
    from graphrag_assets.llm.settings import LLMSettings

    try:
        connection = duckdb.connect(str(folder / "cache.duckdb"))
        with LLMSession(LLMSettings.from_env(), connection, CallSite("bench", None)) as session:
            load = [round(x, 2) for x in os.getloadavg()]
            measure(session, [f"warm-up {i}" for i in range(8)], 0, False)
            units = text_units(args.calls)
            missed = measure(session, units, args.embed_batch, args.profile)
            hit = measure(session, units, args.embed_batch, False)
            calls = session.usage.calls
        connection.close()
    finally:
        server.terminate()
        server.wait()
    profile = missed.pop("profile", None)
    result = {
        "date": date.today().isoformat(),
        "commit": git("rev-parse", "--short", "HEAD"),
        "command": " ".join(["bench/client_cpu.py", *sys.argv[1:]]),
        "machine": machine(),
        "load_average_before": load,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "concurrency": args.concurrency,
        "embedding_requests_per_pass": -(-args.calls // args.embed_batch) if args.embed_batch else 0,
        "endpoint_calls_made": calls,
        "cache_misses": missed,
        "cache_hits": hit,
    }
    print(json.dumps(result, indent=2))
    if profile:
        print(profile)
    if not args.no_save:
        write_json(RESULTS, result)


if __name__ == "__main__":
    main()
