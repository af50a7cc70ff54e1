"""Benchmark: the fault table. What each fault keeps, what the next run repairs, what it pays.

    .venv/bin/python bench/faults.py              # about 17 minutes on 2 busy cores
    .venv/bin/python bench/faults.py --only 2 7b  # some faults only (the references are always built)

On a copy of ``sample_corpus/`` in a temporary folder, with a fresh DAGSTER_HOME
(``dagster_home/dagster.yaml`` copied in) per index, ``graphrag-index`` runs as a user runs
it (``.venv/bin/python -m graphrag_evaluation.cli --input ... --db ... --vectors ...``, a
subprocess) against the OpenAI-compatible test server of ``tests/fake_openai.py``, in this
process. Each fault is injected into real processes, as ``tests/test_reliability.py``,
``tests/test_llm_kill.py`` and ``tests/test_live_mode.py`` do:

1. SIGKILL mid-extraction (the process group, after 10 answered completions, 0.25 s per call, concurrency 2);
2. SIGKILL while publishing a first index (a FIFO at ``<db>.published.tmp`` blocks
   ``published_index`` after the snapshot copy, before the pointer swap; the kill lands there);
3. the same while publishing an update (index, put a sentence first in a file, kill);
4. the LanceDB folder deleted after an index;
5. an overloaded endpoint: HTTP 429 (Retry-After 0) on summary calls with
   ``GRAPHRAG_LLM_MAX_RETRIES=1`` and concurrency 1, as many as the build makes such calls
   plus 3: a retried call queues behind the calls waiting for the slot, so the first
   faults fall on first attempts and the last 3 on 3 retries, and 3 calls fail after their
   retry. On report calls instead when the build makes no summary call (the JSON says which);
6. a wrong API key: every call answered 401;
7. the live file held by another process (a read-only DuckDB connection) during an update,
   longer than ``GRAPHRAG_LOCK_WAIT_SECONDS=5`` and the step retries: opened before the run
   and released once the run failed; 7b: opened once the run has planned (its "sources:"
   line), released once the run ended;
8. unreadable inputs: a FIFO and a binary file in the input folder (removed for the rerun).

Then the rerun, once healthy, and a confirmation run (must say "no work", 0 calls). Per
fault it records the faulty run's exit code and stderr summary; rows of entities,
text_units and llm_cache before the fault, after it, and after the rerun; the rerun's
"corpus X: ... (reason)" line, its completion and embedding calls, and how many of them
repeat a call answered before the fault (calls paid twice: same model and messages, or
the same embedding input; for a kill, answered more than 0.5 s before it, as
tests/test_llm_kill.py counts); rows lost against a fault-free reference build made here
(counts of entities, relationships, text_units, communities, community_reports,
embeddings, and the set of entity titles, in the published snapshot and the live file;
LanceDB rows against DuckDB's embeddings); and the rerun's wall time (time to recover).

Writes ``bench/results/faults.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from common import git, machine, write_json  # noqa: E402

from graphrag_assets.storage.snapshot import pointer_path, published_builds, read_pointer, snapshot_dir  # noqa: E402
from tests.fake_openai import FakeOpenAI, Fault  # noqa: E402

PYTHON = REPO / ".venv" / "bin" / "python"
COMPARED = ("entities", "relationships", "text_units", "communities", "community_reports", "embeddings")
KEPT = ("entities", "text_units", "llm_cache")
EDITED = "river_cleanup.txt"
EDIT_MARKER = "Quillon Barrowmere"
KEY = "sk-bench-faults"
WRONG_KEY = "sk-wrong-key-123"
KILL_AFTER_COMPLETIONS = 10
KILL_GRACE_SECONDS = 0.5  # an answer this close to the kill may not be in the cache yet
LOCK_WAIT_SECONDS = "5"
RUN_TIMEOUT = 600


# ---------------------------------------------------------------- one index and its runs


class Index:
    """One input folder (a copy of the sample corpus), DuckDB file, LanceDB folder and
    DAGSTER_HOME, and the endpoint its runs call."""

    def __init__(self, work: Path, name: str, fake: FakeOpenAI, **env: str):
        self.root = work / name
        self.input = self.root / "input"
        shutil.copytree(REPO / "sample_corpus", self.input)
        self.database = self.root / "index" / "graphrag.duckdb"
        self.vectors = self.root / "index" / "lancedb"
        home = self.root / "dagster_home"
        home.mkdir()
        shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
        self.fake = fake
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAG_", "OPENAI_", "DAGSTER_"))}
        self.env = (
            inherited
            | {
                "DAGSTER_HOME": str(home),
                "GRAPHRAG_LLM_BASE_URL": fake.base_url,
                "GRAPHRAG_LLM_API_KEY": KEY,
                "GRAPHRAG_LLM_MODEL": "fake-chat",
                "GRAPHRAG_EMBEDDING_MODEL": "fake-embed",
                "GRAPHRAG_LLM_CONCURRENCY": "4",
            }
            | env
        )
        self.command = [
            str(PYTHON), "-m", "graphrag_evaluation.cli",
            "--input", str(self.input), "--db", str(self.database), "--vectors", str(self.vectors),
        ]  # fmt: skip

    def run(self, timeout: float = RUN_TIMEOUT, **env: str) -> dict:
        first = len(self.fake.requests)
        started = time.perf_counter()
        try:
            done = subprocess.run(
                self.command, cwd=REPO, env=self.env | env, capture_output=True, text=True, timeout=timeout
            )
            code, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as expired:
            code, out, err = "timeout", _text(expired.stdout), _text(expired.stderr)
        wall = time.perf_counter() - started
        return run_record(code, out, err, wall, self.fake, first, len(self.fake.requests))

    def start(self, log: Path, **env: str) -> subprocess.Popen:
        # Its own process group: the kill takes down everything it started, as a crash would.
        with open(log, "w") as out:
            return subprocess.Popen(
                self.command, cwd=REPO, env=self.env | env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def edit(self) -> None:
        """A sentence put first in a file: its names come first in the text unit, so the
        edit changes entities and communities, not only a text unit."""
        path = self.input / "default" / EDITED
        path.write_text(
            f"{EDIT_MARKER} led the autumn river survey with the Harbor Institute.\n\n"
            + path.read_text(encoding="utf-8"),
            encoding="utf-8",
        )


def _text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else (value or "")


def run_record(code, stdout: str, stderr: str, wall: float, fake: FakeOpenAI, first: int, last: int) -> dict:
    lines = stdout.strip().splitlines()
    return {
        "exit_code": code,
        "wall_s": round(wall, 1),
        "stdout": [
            line
            for line in lines
            if line.startswith(("sources:", "corpus ")) or "LLM calls:" in line or line.startswith("run ")
        ],
        "reason": [line for line in lines if line.startswith("corpus ") and line.endswith(")")],
        "stderr_summary": stderr_summary(stderr),
        "calls": calls(fake.requests[first:last]),
        "_requests": (first, last),
        "_output": stdout + stderr,
    }


def stderr_summary(stderr: str) -> list[str]:
    """The lines a user reads: graphrag-index's own messages, or a traceback's last line."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    own = [
        line[:400]
        for line in lines
        if line.startswith(("failed:", "LLM calls that failed", "unreadable source:", "failed runs", "graphrag-index:"))
    ]
    if own:
        return own
    if any(line.startswith("Traceback") for line in lines):
        return ["(traceback) " + lines[-1][:400]]
    return [line[:400] for line in lines[-2:]]


def calls(requests: list[dict]) -> dict:
    completions = [r for r in requests if r["path"].endswith("/chat/completions")]
    embeddings = [r for r in requests if r["path"].endswith("/embeddings")]
    answered = [r for r in completions if "finished" in r]
    return {
        "completions": len(completions),
        "completions_answered": len(answered),
        "completions_by_task": dict(sorted(Counter(r["task"] for r in completions).items())),
        "embedding_requests": len(embeddings),
        "embedded_texts": sum(len(_inputs(r)) for r in embeddings),
    }


def _inputs(request: dict) -> list[str]:
    value = request["body"].get("input", [])
    return value if isinstance(value, list) else [value]


def _key(request: dict) -> str:
    body = request["body"]
    payload = [
        body.get("model"),
        body.get("input") if request["path"].endswith("/embeddings") else body.get("messages"),
    ]
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def paid_twice(fake: FakeOpenAI, rerun: dict, answered_before: float | None = None) -> dict:
    """Calls of the rerun that repeat a call answered before it (before ``answered_before``,
    a monotonic time, when given): completions by model and messages, embedding requests by
    model and input, and embedded texts one by one (a text re-embedded in another batch)."""
    first, last = rerun["_requests"]
    cutoff = answered_before if answered_before is not None else float("inf")
    before = [r for r in fake.requests[:first] if "finished" in r and r["finished"] < cutoff]
    late = [r for r in fake.requests[:first] if "finished" in r and r["finished"] >= cutoff]
    keys = {_key(r) for r in before}
    texts = {(r["body"].get("model"), t) for r in before if r["path"].endswith("/embeddings") for t in _inputs(r)}
    late_keys = {_key(r) for r in late}
    rerun_requests = fake.requests[first:last]
    repeated = [r for r in rerun_requests if _key(r) in keys]
    result = {
        "completions": sum(1 for r in repeated if r["path"].endswith("/chat/completions")),
        "completions_by_task": dict(Counter(r["task"] for r in repeated if r["path"].endswith("/chat/completions"))),
        "embedding_requests": sum(1 for r in repeated if r["path"].endswith("/embeddings")),
        "embedded_texts": sum(
            1
            for r in rerun_requests
            if r["path"].endswith("/embeddings")
            for t in _inputs(r)
            if (r["body"].get("model"), t) in texts
        ),
    }
    result["total"] = result["completions"] + result["embedding_requests"]
    if answered_before is not None:
        # Answered by the endpoint in the last 0.5 s before the kill: possibly never received
        # or cached by the killed process. Reported apart; not counted as paid twice.
        result["answered_within_0.5s_of_kill_and_repeated"] = sum(1 for r in rerun_requests if _key(r) in late_keys)
    return result


# ---------------------------------------------------------------- what the index holds


def _count(connection, table: str) -> int | None:
    try:
        return connection.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
    except duckdb.CatalogException:
        return None


def _tables(path: Path) -> dict:
    with duckdb.connect(str(path), read_only=True) as connection:
        counts = {
            t: _count(connection, t) for t in (*COMPARED, "documents", "llm_cache", "llm_failures", "source_errors")
        }
        try:
            titles = sorted(row[0] for row in connection.execute("SELECT title FROM entities").fetchall())
        except duckdb.CatalogException:
            titles = []
        try:
            marker = connection.execute(
                f"SELECT count(*) FROM text_units WHERE text LIKE '%{EDIT_MARKER}%'"
            ).fetchone()[0]
        except duckdb.CatalogException:
            marker = None
        try:
            kinds = dict(connection.execute("SELECT kind, count(*) FROM embeddings GROUP BY kind").fetchall())
        except duckdb.CatalogException:
            kinds = {}
        try:
            built = dict(connection.execute("SELECT corpus, epoch_us(built_at) FROM corpus_builds").fetchall())
        except duckdb.CatalogException:
            built = {}
    return {
        "counts": counts,
        "titles": titles,
        "edit_marker_text_units": marker,
        "embedding_kinds": kinds,
        "built": built,
    }


def state(index: Index) -> dict:
    """The live file, the published snapshot and the LanceDB mirror, read without holding
    anything (nothing runs while this reads)."""
    if not index.database.exists():
        return {"live": None, "snapshot": None, "published": False, "lancedb": {}}
    live = _tables(index.database)
    pointer = read_pointer(index.database)
    snapshot = _tables(Path(pointer["snapshot"])) if pointer and Path(pointer["snapshot"]).is_file() else None
    lance = {}
    if index.vectors.exists():
        import lancedb

        db = lancedb.connect(str(index.vectors))
        names = set(db.list_tables().tables)
        lance = {kind: db.open_table(kind).count_rows() for kind in sorted(names)}
    return {
        "live": live,
        "snapshot": snapshot,
        # the live file's last build is the one readers see
        "published": bool(live["built"]) and published_builds(index.database) == live["built"],
        "lancedb": lance,
    }


def kept(snapshot_of_state: dict) -> dict:
    live = snapshot_of_state["live"]
    return {t: (live["counts"].get(t) or 0) if live else 0 for t in KEPT}


def rows_lost(final: dict, reference: dict) -> dict:
    """Rows of the fault-free reference missing after the rerun, in the published snapshot
    (what readers see) and the live file; differences that are not losses listed apart."""
    result = {}
    for where in ("snapshot", "live"):
        got, ref = final[where], reference[where]
        if got is None:
            result[where] = {
                "lost": sum(ref["counts"][t] or 0 for t in COMPARED),
                "note": "no published snapshot" if where == "snapshot" else "no index",
            }
            continue
        deficits = {t: (ref["counts"][t] or 0) - (got["counts"][t] or 0) for t in COMPARED}
        missing = sorted(set(ref["titles"]) - set(got["titles"]))
        extra = sorted(set(got["titles"]) - set(ref["titles"]))
        lost = sum(max(0, d) for t, d in deficits.items() if t != "entities") + max(
            deficits["entities"], len(missing), 0
        )
        result[where] = {
            "lost": lost,
            "count_differences": {t: -d for t, d in deficits.items() if d},  # final minus reference
            "entity_titles_missing": missing,
            "entity_titles_extra": extra,
        }
    duck = final["live"]["embedding_kinds"] if final["live"] else {}
    result["lancedb_rows_missing"] = sum(max(0, n - final["lancedb"].get(kind, 0)) for kind, n in duck.items())
    result["lost"] = result["snapshot"]["lost"] + result["live"]["lost"] + result["lancedb_rows_missing"]
    return result


def summary_of(s: dict) -> dict:
    """A state without the title lists, for the JSON."""
    out = {"published": s["published"], "lancedb": s["lancedb"]}
    for where in ("live", "snapshot"):
        if s[where] is not None:
            out[where] = {"counts": s[where]["counts"], "edit_marker_text_units": s[where]["edit_marker_text_units"]}
        else:
            out[where] = None
    return out


# ---------------------------------------------------------------- faults


def kill_mid_extraction(index: Index) -> dict:
    """Start the indexer slowed to 0.25 s per call, SIGKILL its process group once
    ``KILL_AFTER_COMPLETIONS`` completions were answered."""
    process = index.start(index.root / "killed.log", GRAPHRAG_LLM_CONCURRENCY="2")
    started = time.perf_counter()
    deadline = time.monotonic() + RUN_TIMEOUT
    while len([r for r in index.fake.completions() if "finished" in r]) < KILL_AFTER_COMPLETIONS:
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(
                f"the indexer ended before it could be killed:\n{(index.root / 'killed.log').read_text()[-3000:]}"
            )
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    killed_at = time.monotonic()
    tasks = Counter(r["task"] for r in index.fake.completions() if "finished" in r)
    return {
        "exit_code": process.returncode,
        "wall_s": round(time.perf_counter() - started, 1),
        "killed_at": killed_at,
        "stderr_summary": [
            f"(SIGKILL of the process group after {sum(tasks.values())} answered completions: {dict(tasks)})"
        ],
        "calls": calls(index.fake.requests),
    }


def kill_while_publishing(index: Index) -> dict:
    """Run the indexer and SIGKILL it inside ``published_index``: after the snapshot is
    copied, before readers are pointed at it (a FIFO where the new pointer is staged)."""
    staged = pointer_path(index.database).with_suffix(".tmp")
    index.database.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(staged)
    snapshots_before = set(snapshot_dir(index.database).glob("*.duckdb"))
    first = len(index.fake.requests)
    started = time.perf_counter()
    process = index.start(index.root / "killed.log")
    try:
        deadline = time.monotonic() + RUN_TIMEOUT
        while set(snapshot_dir(index.database).glob("*.duckdb")) <= snapshots_before:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(
                    f"the indexer never reached published_index:\n{(index.root / 'killed.log').read_text()[-3000:]}"
                )
            time.sleep(0.1)
        time.sleep(0.5)  # now blocked opening the FIFO
        assert process.poll() is None, "the indexer ended inside published_index"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        staged.unlink()
    return {
        "exit_code": process.returncode,
        "wall_s": round(time.perf_counter() - started, 1),
        "stderr_summary": [
            "(SIGKILL of the process group inside published_index: snapshot copied, pointer not swapped)"
        ],
        "calls": calls(index.fake.requests[first:]),
        "pointer_exists_after_kill": pointer_path(index.database).exists(),
    }


class Holder:
    """Another process with a read-only connection open on the live file."""

    def __init__(self, database: Path):
        # Retries while the indexer itself has the file open (fault 7b starts it mid-run).
        code = (
            "import duckdb, sys, time\n"
            "while True:\n"
            "    try:\n"
            "        c = duckdb.connect(sys.argv[1], read_only=True)\n"
            "        break\n"
            "    except duckdb.IOException:\n"
            "        time.sleep(0.05)\n"
            "print('open', flush=True)\n"
            "sys.stdin.read()\n"
        )
        self.process = subprocess.Popen(
            [str(PYTHON), "-c", code, str(database)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout.readline().strip() == "open"

    def release(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


BINARY = bytes(range(256)) * 8


def hold_mid_run(index: Index) -> tuple[dict, int]:
    """Run the indexer; once it has planned (its "sources:" line), another process opens
    the live file read-only and keeps it until the run has ended."""
    first = len(index.fake.requests)
    log = index.root / "held_mid_run.stderr"
    env = index.env | {"GRAPHRAG_LOCK_WAIT_SECONDS": LOCK_WAIT_SECONDS, "PYTHONUNBUFFERED": "1"}
    started = time.perf_counter()
    holder = None
    with open(log, "w") as err:
        process = subprocess.Popen(
            index.command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True
        )
        lines = []
        try:
            for line in process.stdout:
                lines.append(line)
                if line.startswith("sources:") and holder is None:
                    holder = Holder(index.database)
            process.wait(timeout=RUN_TIMEOUT)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            if holder is not None:
                holder.release()
    wall = time.perf_counter() - started
    record = run_record(
        process.returncode, "".join(lines), log.read_text(), wall, index.fake, first, len(index.fake.requests)
    )
    return record, holder.process.pid if holder else 0


@dataclass
class Injected:
    """A fault as injected: the run it made (None: no run, the damage was done by hand),
    the settings of the runs that repair it, the index they must end up equal to, when
    the indexer was killed, and what else the fault records."""

    faulty: dict | None
    reference: dict
    rerun_env: dict = field(default_factory=dict)
    killed_at: float | None = None
    extra: dict = field(default_factory=dict)


def inject(number: int, index: Index, fake: FakeOpenAI, references: dict) -> Injected:
    """Fault ``number`` on ``index``, its endpoint ``fake``."""
    reference = references["original"]
    if number == 1:
        faulty = kill_mid_extraction(index)
        return Injected(faulty, reference, killed_at=faulty.pop("killed_at"))
    if number == 2:
        return Injected(kill_while_publishing(index), reference)
    if number == 3:
        index.edit()
        return Injected(kill_while_publishing(index), references["edited"])
    if number == 4:
        shutil.rmtree(index.vectors)
        return Injected(None, reference)
    if number == 5:
        overload = {"GRAPHRAG_LLM_MAX_RETRIES": "1", "GRAPHRAG_LLM_CONCURRENCY": "1"}
        target, injected_faults = references["fault5_target"], references["fault5_faults"]
        for _ in range(injected_faults):
            fake.faults.append(Fault(status=429, retry_after=0, match=f"[task: {target}]"))
        faulty = index.run(**overload)
        extra = {"faults_injected": injected_faults, "faults_fired": injected_faults - len(fake.faults)}
        extra["target"] = target
        fake.faults.clear()
        return Injected(faulty, reference, overload, extra=extra)
    if number == 6:
        fake.faults.extend(Fault(status=401) for _ in range(1000))
        faulty = index.run(GRAPHRAG_LLM_API_KEY=WRONG_KEY)
        extra = {"faults_fired": 1000 - len(fake.faults)}
        fake.faults.clear()
        extra["wrong_key_in_output"] = WRONG_KEY in faulty["_output"]
        return Injected(faulty, reference, extra=extra)
    if number in (7, 9):
        index.edit()
        if number == 7:
            holder = Holder(index.database)
            try:
                faulty = index.run(GRAPHRAG_LOCK_WAIT_SECONDS=LOCK_WAIT_SECONDS)
            finally:
                holder.release()
            holder_pid = holder.process.pid
        else:  # 7b: held from the middle of a run
            faulty, holder_pid = hold_mid_run(index)
        extra = {"holder_pid": holder_pid, "holder_pid_in_output": str(holder_pid) in faulty["_output"]}
        return Injected(faulty, references["edited"], {"GRAPHRAG_LOCK_WAIT_SECONDS": LOCK_WAIT_SECONDS}, extra=extra)
    if number == 8:
        fifo = index.input / "default" / "pipe.txt"
        binary = index.input / "default" / "scan.txt"
        os.mkfifo(fifo)
        binary.write_bytes(BINARY)
        faulty = index.run()
        fifo.unlink()
        binary.unlink()
        return Injected(faulty, reference)
    raise ValueError(number)


def fault(
    number: int, title: str, injected: str, work: Path, references: dict, endpoint_options: dict | None = None
) -> dict:
    """Run fault ``number`` in its own index and endpoint; return its record."""
    with FakeOpenAI(**(endpoint_options or {})) as fake:
        fake._server.handle_error = lambda request, address: None  # a killed client's reset connections are expected
        index = Index(work, f"fault{label(number)}", fake)
        before = {"live": None, "snapshot": None, "published": False, "lancedb": {}}
        setup = None
        load = os.getloadavg()

        if number in (3, 4, 7, 9):  # a healthy first index, then the fault
            setup = index.run()
            if setup["exit_code"] != 0:
                raise SystemExit(f"fault {number}: the first index failed: {setup['stderr_summary']}")
            before = state(index)

        done = inject(number, index, fake, references)
        after_fault = state(index)
        if number == 5:
            done.extra["failed_calls_recorded"] = (
                after_fault["live"]["counts"]["llm_failures"] if after_fault["live"] else None
            )
        rerun = index.run(**done.rerun_env)
        after_rerun = state(index)
        answered_before = (done.killed_at - KILL_GRACE_SECONDS) if done.killed_at else None
        twice = paid_twice(fake, rerun, answered_before=answered_before)
        confirm = index.run(**done.rerun_env)
        lost = rows_lost(after_rerun, done.reference)
        load_after = os.getloadavg()

    repaired = (
        rerun["exit_code"] == 0
        and after_rerun["published"]
        and lost["lost"] == 0
        and (after_rerun["live"]["counts"]["llm_failures"] or 0) == 0
        and (after_rerun["live"]["counts"]["source_errors"] or 0) == 0
    )
    return {
        "fault": label(number),
        "title": title,
        "injected": injected,
        "first_index": public(setup),
        "faulty_run": public(done.faulty),
        "kept": {"before_fault": kept(before), "after_fault": kept(after_fault), "after_rerun": kept(after_rerun)},
        "state_before_fault": summary_of(before),
        "state_after_fault": summary_of(after_fault),
        "rerun": public(rerun),
        "calls_paid_twice": twice,
        "rows_lost": lost,
        "state_after_rerun": summary_of(after_rerun),
        "repaired": repaired,
        "confirmation_run": public(confirm)
        | {"no_work": any("no work: index is up to date" in line for line in confirm["stdout"])},
        "time_to_recover_s": rerun["wall_s"],
        "load_average": {"start": [round(x, 2) for x in load], "end": [round(x, 2) for x in load_after]},
    } | done.extra


def public(record: dict | None) -> dict | None:
    """A run's record without its private fields (``_output``)."""
    return None if record is None else {k: v for k, v in record.items() if not k.startswith("_")}


FAULTS = {
    1: (
        "SIGKILL mid-extraction",
        (
            f"SIGKILL of the indexer's process group after {KILL_AFTER_COMPLETIONS} answered completions (0.25 s per "
            f"call, concurrency 2)"
        ),
    ),
    2: (
        "SIGKILL while publishing a first index",
        "FIFO at <db>.published.tmp blocks published_index after the snapshot copy; SIGKILL there",
    ),
    3: (
        "SIGKILL while publishing an update",
        "index; append a sentence to river_cleanup.txt; FIFO; SIGKILL inside published_index",
    ),
    4: ("LanceDB folder deleted", "index; rm -r the LanceDB folder"),
    5: (
        "overloaded endpoint",
        "6 x HTTP 429 (Retry-After 0) on summary calls, GRAPHRAG_LLM_MAX_RETRIES=1, concurrency 1",
    ),
    6: ("wrong API key", "every call answered HTTP 401; GRAPHRAG_LLM_API_KEY wrong"),
    7: (
        "live file held by another process, from before the run",
        (
            "index; edit; a read-only DuckDB connection opened on the live file before the run and held until it "
            "failed; GRAPHRAG_LOCK_WAIT_SECONDS=5"
        ),
    ),
    9: (
        "live file held by another process, from the middle of a run",
        (
            'index; edit; the read-only connection opened once the run printed its plan ("sources: ...") and held '
            "until the run ended; GRAPHRAG_LOCK_WAIT_SECONDS=5"
        ),
    ),
    8: (
        "unreadable input files",
        "a FIFO (pipe.txt) and a binary file (scan.txt, NUL bytes) in the input folder; both removed for the rerun",
    ),
}
ORDER = [1, 2, 3, 4, 5, 6, 7, 9, 8]


def label(number: int) -> str:
    return "7b" if number == 9 else str(number)


# ---------------------------------------------------------------- references


def build_references(work: Path) -> dict:
    """A fault-free build of the sample corpus, then the same edit the update faults make
    (an incremental update, as faults 3 and 7 do)."""
    with FakeOpenAI() as fake:
        index = Index(work, "reference", fake)
        first = index.run()
        if first["exit_code"] != 0:
            raise SystemExit(f"the reference build failed: {first['stderr_summary']}")
        original = state(index)
        index.edit()
        update = index.run()
        if update["exit_code"] != 0:
            raise SystemExit(f"the reference update failed: {update['stderr_summary']}")
        edited = state(index)
        update_twice = paid_twice(fake, update)
    has_summaries = first["calls"]["completions_by_task"].get("summarize_descriptions", 0) > 0
    return {
        "original": original,
        "edited": edited,
        "fault5_target": "summarize_descriptions" if has_summaries else "community_report",
        # Calls waiting for the one slot go before a retry (it queues behind them): the
        # first N faults fall on the N calls' first attempts, the next 3 on 3 retries.
        "fault5_faults": first["calls"]["completions_by_task"].get(
            "summarize_descriptions" if has_summaries else "community_report", 0
        )
        + 3,
        "record": {
            "build": {k: v for k, v in first.items() if not k.startswith("_")},
            "state": summary_of(original),
            "entity_titles": len(original["live"]["titles"]),
            "update_after_edit": {k: v for k, v in update.items() if not k.startswith("_")},
            "update_calls_repeating_an_answered_call": update_twice,
            "edited_state": summary_of(edited),
        },
    }


# ---------------------------------------------------------------- report


def git_state() -> dict:
    return {"commit": git("rev-parse", "HEAD"), "uncommitted": git("status", "--porcelain").splitlines()}


def table_row(r: dict) -> str:
    faulty = r["faulty_run"]
    code = "—" if faulty is None else ("SIGKILL" if faulty["exit_code"] == -9 else str(faulty["exit_code"]))
    k = r["kept"]
    kept_text = "/".join(str(k["after_fault"][t]) for t in KEPT)
    rerun = r["rerun"]
    reason = "; ".join(line.split(": ", 1)[1] for line in rerun["reason"])
    if not reason:  # no corpus to finish: what the plan line says
        reason = (
            next((line for line in rerun["stdout"] if line.startswith("sources:")), "").split("; ", 1)[-1]
            + "; "
            + (rerun["stdout"][-1].split(";")[0] if rerun["stdout"] else "")
        )
    c = rerun["calls"]
    twice = r["calls_paid_twice"]
    in_flight = twice.get("answered_within_0.5s_of_kill_and_repeated")
    return (
        f"| {r['fault']}. {r['title']} | {code} | {kept_text} | {reason}; exit {rerun['exit_code']}; "
        f"{c['completions']} completions, {c['embedding_requests']} embedding requests | {twice['total']}"
        + (f" (+{in_flight} in flight at the kill)" if in_flight else "")
        + f" | {r['rows_lost']['lost']} | {r['time_to_recover_s']} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="faults to run: 1 2 3 4 5 6 7 7b 8 (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    wanted = [n for n in ORDER if not args.only or label(n) in args.only]

    started = time.perf_counter()
    load_start = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="graphrag-faults-"))
    print(f"work folder {work}; load average {load_start}", flush=True)
    references = build_references(work)
    print(f"reference: {references['record']['build']['stdout']}", flush=True)
    records = []
    for number in wanted:
        title, injected = FAULTS[number]
        if number == 5:
            injected = injected.replace(
                "summary calls",
                "summary calls"
                if references["fault5_target"] == "summarize_descriptions"
                else "report calls (the build makes no summary call)",
            )
        t = time.perf_counter()
        record = fault(number, title, injected, work, references, {"latency_seconds": 0.25} if number == 1 else None)
        records.append(record)
        print(f"fault {label(number)} ({time.perf_counter() - t:.0f} s): " + table_row(record), flush=True)

    result = {
        "benchmark": "fault table (bench/faults.py)",
        "command": ".venv/bin/python bench/faults.py" + (f" --only {' '.join(args.only)}" if args.only else ""),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine()
        | {
            "load_average_start": [round(x, 2) for x in load_start],
            "load_average_end": [round(x, 2) for x in os.getloadavg()],
        },
        "code": git_state(),
        "corpus": "sample_corpus/ (7 files, 1 corpus 'default')",
        "endpoint": (
            "tests/fake_openai.py in process; no latency (0.25 s per call for fault 1); concurrency 4 unless stated"
        ),
        "reference": references["record"],
        "faults": records,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    out = REPO / "bench" / "results" / "faults.json"
    write_json(out, result)
    print(
        "\n| fault | faulty run exit | kept (entities/text_units/llm_cache) | rerun did | calls paid twice | "
        "rows lost | time to recover |"
    )
    print("|---|---|---|---|---|---|---|")
    for record in records:
        print(table_row(record))
    print(f"\nwrote {out} ({result['wall_s']} s)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
