"""Benchmark: what an incremental update costs on the LLM path.

    .venv/bin/python bench/update_podcasts_llm.py

Indexes the 56 podcast files of episodes EP-03_ and EP-13_ with ``graphrag-index`` against
a local OpenAI-compatible endpoint (300 ms per call plus 2 ms per completion token,
concurrency 16), then applies three changes, one ``graphrag-index`` pass each:

1. add ``EP-11_ Behind_the_Tech_Kevin Scott_Podcast_with_Fei-Fei-Li-part1.txt``;
2. edit one indexed file (a sentence appended);
3. delete one indexed file.

For each pass it records the completion calls by kind, embedding requests, tokens and wall
time, and from the index itself how many communities and reports changed and how many
reports were kept as they were. Writes ``bench/results/update_podcasts_llm.json``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import duckdb
from fake_endpoint import REPO, FakeOpenAI, fake_endpoint

PODCASTS = REPO.parent / "shared" / "corpus" / "podcasts"
ADDED = "EP-11_ Behind_the_Tech_Kevin Scott_Podcast_with_Fei-Fei-Li-part1.txt"


def _reports(database: Path) -> dict[str, tuple]:
    with duckdb.connect(str(database), read_only=True) as connection:
        rows = connection.execute("SELECT id, content_hash, community, level FROM community_reports").fetchall()
    return {row[0]: row[1:] for row in rows}


def _communities(database: Path) -> dict[int, tuple]:
    with duckdb.connect(str(database), read_only=True) as connection:
        rows = connection.execute("SELECT community, list_sort(entity_ids) FROM communities").fetchall()
    return {row[0]: tuple(row[1]) for row in rows}


def _pass(name: str, command: list[str], env: dict, fake: FakeOpenAI, database: Path) -> dict:
    reports_before = _reports(database) if database.exists() else {}
    communities_before = _communities(database) if database.exists() else {}
    seen = len(fake.requests)
    started = time.perf_counter()
    completed = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{name} failed:\n{completed.stdout[-2000:]}\n{completed.stderr[-3000:]}")
    requests = fake.requests[seen:]
    completions = [r for r in requests if r["path"].endswith("/chat/completions")]
    reports_after = _reports(database)
    communities_after = _communities(database)
    kept = sum(1 for key, value in reports_after.items() if reports_before.get(key, (None,))[0] == value[0])
    return {
        "completion_calls": len(completions),
        "completion_calls_by_kind": dict(Counter(r["task"] for r in completions)),
        "embedding_requests": sum(1 for r in requests if r["path"].endswith("/embeddings")),
        "prompt_tokens": sum(r["prompt_tokens"] for r in completions),
        "completion_tokens": sum(r["completion_tokens"] for r in completions),
        "wall_s": round(wall, 1),
        "communities": len(communities_after),
        "communities_with_changed_members": sum(
            1 for c, members in communities_after.items() if communities_before.get(c) != members
        ),
        "reports": len(reports_after),
        "reports_kept_unchanged": kept,
        "reports_new_or_rewritten": len(reports_after) - kept,
        "summary": completed.stdout.strip().splitlines()[-1],
    }


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="graphrag-update-bench-"))
    corpus = work / "input" / "podcasts"
    corpus.mkdir(parents=True)
    initial = sorted(p for p in PODCASTS.iterdir() if p.name.startswith(("EP-03_", "EP-13_")))
    for path in initial:
        shutil.copy(path, corpus / path.name)
    database = work / "index.duckdb"
    with fake_endpoint(work) as (fake, env):
        command = [
            sys.executable,
            "-m",
            "graphrag_evaluation.cli",
            "--input",
            str(work / "input"),
            "--db",
            str(database),
            "--vectors",
            str(work / "lancedb"),
        ]
        passes = {"full_index_56_files": _pass("full index", command, env, fake, database)}

        shutil.copy(PODCASTS / ADDED, corpus / ADDED)
        passes["add_EP-11_part1"] = _pass("add", command, env, fake, database)

        edited = corpus / initial[0].name
        edited.write_text(
            edited.read_text(encoding="utf-8") + "\nKevin Scott later thanked Fei-Fei Li for the conversation.\n",
            encoding="utf-8",
        )
        passes[f"edit_{initial[0].name}"] = _pass("edit", command, env, fake, database)

        (corpus / initial[-1].name).unlink()
        passes[f"delete_{initial[-1].name}"] = _pass("delete", command, env, fake, database)

    result = {
        "corpus": f"{len(initial)} files of {PODCASTS} (EP-03_*, EP-13_*), then {ADDED}",
        "endpoint": "tests/fake_openai.py, 300 ms + 2 ms per completion token, concurrency 16",
        "microsoft_graphrag_3_3_update_for_the_same_add": {
            "completion_calls": 23,
            "embedding_requests": 18,
            "old_communities_and_reports": "left untouched",
        },
        "passes": passes,
    }
    out = REPO / "bench" / "results" / "update_podcasts_llm.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
