"""Benchmark: the live mode, as README.md "Live mode: drop a file, watch it arrive" describes it.

    .venv/bin/python bench/live_mode.py              # writes bench/results/live_mode.json
    .venv/bin/python bench/live_mode.py --keep /tmp/live-mode   # keep the temp folders and logs

In a fresh temp folder (a copy of ``sample_corpus/`` as the input, with two more corpora
beside ``default`` made of four of its files (``OTHER_CORPORA``), a fresh DAGSTER_HOME with
``dagster_home/dagster.yaml`` copied in, the DuckDB index and LanceDB vectors beside them,
no other ``GRAPHRAG_*`` variable of the caller), it does what a new user does:

1. starts ``dagster dev -w workspace.yaml -p PORT`` from the repository root in its own
   process group (stdout and stderr to ``dagster_dev.log``) and waits for the first
   publish (``<db>.published.json``): the source sensor's first tick reads the folder, the
   graph automation builds and publishes it;
2. adds a file to ``default``, then edits one, then deletes one, and for each measures the
   wall time from the change on disk to the moment the published snapshot (opened
   read-only, polled every 0.5 s) holds it in ``default``'s own graph (its text units: a
   publish of another corpus does not count), and counts the runs the change launched and
   the corpora they built (Dagster GraphQL), after a quiet period that would show a
   redundant follow-up run;
3. "the UI runs as fast as the CLI": launches ``build_graph`` for partition ``default``
   through the webserver (``DagsterGraphQLClient.submit_job_execution``), first with nothing
   changed, then after an edit (graph_automation paused, the source sensor's run waited
   for), and times it from launch to RUN_SUCCESS and by its run record; ``graphrag-index``
   on its own fresh copy of the corpus does the same work (a graph build forced by an
   edit) right after each UI build, under the same load, and again once ``dagster dev`` is
   stopped;
4. stops ``dagster dev`` (SIGINT to its process group, SIGKILL after 20 s), writes the JSON
   and prints a table.

A change that does not reach the published index within ``--timeout`` (300 s) is a bug:
the script records the sensor and automation tick history and the tail of the dagster
dev log in the JSON, keeps the temp folder and exits with status 1.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import duckdb
import psutil
import requests
from common import machine, write_json  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = REPO / ".venv" / "bin"
LOCATION, REPOSITORY = "graphrag", "__repository__"
ACTIVE = ["QUEUED", "NOT_STARTED", "STARTING", "STARTED", "CANCELING"]

ADDED_NAME = "notes.txt"
ADDED_TEXT = (
    "Notes from the Tamsworth Lantern Quay\n\n"
    "Zephyrine Obadike repaired the Tamsworth Lantern Quay lights with Anselm Korvath in March. "
    "Zephyrine Obadike said the Tamsworth Lantern Quay had been dark since the winter storms, and Anselm Korvath "
    "ordered the lamps from the Harbor Institute workshop. The Tamsworth Lantern Quay reopened to walkers in April.\n"
)
ADDED_MARKER = "Tamsworth Lantern Quay"  # in no file of sample_corpus
EDITED_NAME = "river_cleanup.txt"
DELETED_NAME = "calder_shipping.txt"
# Corpora beside default, so that a change to one corpus shows whether the others are built too.
OTHER_CORPORA = {
    "archive": ["harbor_institute.md", "festival_notes.jsonl"],
    "translations": ["ocean_research_zh.md", "sister_city_zh.txt"],
}


def edit_sentence(tag: str) -> str:
    return f"\nIn the autumn, Tobias Wren{tag} counted otters at the Verrin River mouth for the Harbor Institute.\n"


# --------------------------------------------------------------------------- helpers


def append(path: Path, text: str) -> None:
    with open(path, "a") as handle:
        handle.write(text)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def pointer_path(database: Path) -> Path:
    return database.with_name(database.name + ".published.json")


def read_pointer(database: Path) -> dict | None:
    try:
        return json.loads(pointer_path(database).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def snapshot_value(database: Path, sql: str, params: list | None = None):
    """(pointer, first value of ``sql`` on the published snapshot), read-only; (None, None)
    when nothing is published or the snapshot went away meanwhile."""
    pointer = read_pointer(database)
    if pointer is None:
        return None, None
    try:
        with duckdb.connect(pointer["snapshot"], read_only=True) as connection:
            return pointer, connection.execute(sql, params or []).fetchone()[0]
    except (duckdb.Error, OSError):
        return None, None


def published_epoch(pointer: dict) -> float:
    return dt.datetime.fromisoformat(pointer["published_at"]).timestamp()


class GraphQL:
    def __init__(self, port: int):
        self.url = f"http://127.0.0.1:{port}/graphql"

    def __call__(self, query: str, variables: dict | None = None) -> dict:
        response = requests.post(self.url, json={"query": query, "variables": variables or {}}, timeout=60)
        response.raise_for_status()
        body = response.json()
        if body.get("errors"):
            raise RuntimeError(json.dumps(body["errors"])[:2000])
        return body["data"]

    def runs(self, created_after: float | None = None, statuses: list[str] | None = None) -> list[dict]:
        run_filter: dict = {}
        if created_after is not None:
            run_filter["createdAfter"] = created_after
        if statuses:
            run_filter["statuses"] = statuses
        data = self(
            """query($filter: RunsFilter) { runsOrError(filter: $filter, limit: 200) {
                 __typename ... on Runs {
                   results { runId jobName status creationTime startTime endTime tags { key value } }
                 }
                 ... on PythonError { message } } }""",
            {"filter": run_filter},
        )["runsOrError"]
        if data["__typename"] != "Runs":
            raise RuntimeError(str(data))
        return sorted(data["results"], key=lambda run: run["creationTime"])

    def ticks(self, sensor: str, limit: int = 30) -> list[dict]:
        data = self(
            """query($selector: SensorSelector!, $limit: Int) { sensorOrError(sensorSelector: $selector) {
                 __typename ... on Sensor { sensorState { status ticks(limit: $limit) {
                   timestamp endTimestamp status skipReason runIds error { message }
                   logEvents { events { message } } } } } ... on PythonError { message } } }""",
            {
                "selector": {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY, "sensorName": sensor},
                "limit": limit,
            },
        )["sensorOrError"]
        return data.get("sensorState", {}).get("ticks", []) if data["__typename"] == "Sensor" else [data]


def describe_run(run: dict, origin: float) -> dict:
    tags = {t["key"]: t["value"] for t in run["tags"]}
    launched_by = (
        tags.get("dagster/sensor_name")
        or (
            "automation"
            if tags.get("dagster/from_automation_condition") or tags.get("dagster/auto_materialize")
            else None
        )
        or ("graphrag-index" if tags.get("graphrag/launcher") else None)
        or "manual"
    )
    partition = tags.get("dagster/partition") or (
        f"{tags['dagster/asset_partition_range_start']}..{tags['dagster/asset_partition_range_end']}"
        if "dagster/asset_partition_range_start" in tags
        else None
    )

    def rel(t):
        return None if t is None else round(t - origin, 1)

    return {
        "job": run["jobName"],
        "status": run["status"],
        "launched_by": launched_by,
        "partition": partition,
        "created_s": rel(run["creationTime"]),
        "started_s": rel(run["startTime"]),
        "ended_s": rel(run["endTime"]),
        "run_seconds": round(run["endTime"] - run["startTime"], 1) if run["startTime"] and run["endTime"] else None,
        "run_id": run["runId"],
    }


class Bug(Exception):
    pass


# --------------------------------------------------------------------------- the live mode


class LiveMode:
    def __init__(self, work: Path, port: int, timeout: float, settle: float):
        self.work, self.port, self.timeout, self.settle = work, port, timeout, settle
        self.input = work / "input"
        self.home = work / "dagster_home"
        self.database = work / "index.duckdb"
        self.vectors = work / "lancedb"
        self.log_path = work / "dagster_dev.log"
        shutil.copytree(REPO / "sample_corpus", self.input)
        for corpus, names in OTHER_CORPORA.items():
            (self.input / corpus).mkdir()
            for name in names:
                shutil.copy(REPO / "sample_corpus" / "default" / name, self.input / corpus / name)
        self.home.mkdir()
        shutil.copy(REPO / "dagster_home" / "dagster.yaml", self.home / "dagster.yaml")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHRAG_") and k != "DAGSTER_HOME"}
        self.env |= {
            "DAGSTER_HOME": str(self.home),
            "GRAPHRAG_INPUT_DIR": str(self.input),
            "GRAPHRAG_DB": str(self.database),
            "GRAPHRAG_VECTORS": str(self.vectors),
        }
        self.gql = GraphQL(port)
        self.process: subprocess.Popen | None = None

    def start(self) -> float:
        self.log = open(self.log_path, "w")
        self.started = time.time()
        self.process = subprocess.Popen(
            [str(VENV_BIN / "dagster"), "dev", "-w", "workspace.yaml", "-p", str(self.port)],
            cwd=REPO,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return self.started

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait_webserver(self) -> float:
        deadline = time.time() + self.timeout
        while time.time() < deadline:
            if not self.alive():
                raise Bug(f"dagster dev exited with status {self.process.returncode} before the webserver answered")
            try:
                if requests.get(f"http://127.0.0.1:{self.port}/server_info", timeout=2).ok:
                    # and the code location is loaded
                    data = self.gql("{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }")
                    entries = data["workspaceOrError"]["locationEntries"]
                    if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                        return time.time()
            except (requests.RequestException, RuntimeError, KeyError, TypeError):
                pass
            time.sleep(0.5)
        raise Bug("the webserver did not answer within the timeout")

    def wait_published(self, sql: str, params: list | None, predicate, since: float, what: str) -> tuple[float, dict]:
        """Poll the published snapshot every 0.5 s until ``predicate(value)``."""
        deadline = since + self.timeout
        while time.time() < deadline:
            pointer, value = snapshot_value(self.database, sql, params)
            if pointer is not None and predicate(value):
                return time.time(), pointer
            if not self.alive():
                raise Bug(f"dagster dev exited (status {self.process.returncode}) while waiting for {what}")
            time.sleep(0.5)
        raise Bug(f"{what}: not in the published index {self.timeout:.0f} s after the change")

    def settle_runs(self, since: float) -> list[dict]:
        """Wait until no run is active and none was created for ``settle`` seconds (longer than
        the sensor and automation intervals, so a redundant follow-up run would show), then
        return every run created since ``since``."""
        deadline = time.time() + self.timeout
        quiet_since = time.time()
        seen = -1
        while time.time() < deadline:
            runs = self.gql.runs(created_after=since)
            active = [r for r in runs if r["status"] in ACTIVE]
            if active or len(runs) != seen:
                quiet_since, seen = time.time(), len(runs)
            elif time.time() - quiet_since >= self.settle:
                return runs
            time.sleep(2)
        raise Bug(
            f"runs still active {self.timeout:.0f} s after the change: {[(r['jobName'], r['status']) for r in active]}"
        )

    def change(self, name: str, apply, sql: str, params: list, predicate) -> dict:
        load = loadavg()
        _, before = snapshot_value(self.database, sql, params)
        if predicate(before):
            raise RuntimeError(f"{name}: the published index already satisfies the check before the change ({sql})")
        changed_at = time.time()
        apply()
        seen_at, pointer = self.wait_published(sql, params, predicate, changed_at, name)
        runs = self.settle_runs(changed_at - 0.001)
        described = [describe_run(r, changed_at) for r in runs]
        return {
            "to_published_s": round(seen_at - changed_at, 1),
            "published_at_s": round(published_epoch(pointer) - changed_at, 1),
            "runs": len(runs),
            "runs_by_job": {
                job: sum(1 for r in described if r["job"] == job) for job in sorted({r["job"] for r in described})
            },
            "failed_runs": sum(1 for r in described if r["status"] != "SUCCESS"),
            "graph_builds_by_corpus": dict(Counter(r["partition"] for r in described if r["job"] != "index_sources")),
            "timeline": described,
            "loadavg_before": load,
        }

    def set_sensor(self, name: str, running: bool) -> None:
        selector = {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY, "sensorName": name}
        if running:
            data = self.gql(
                (
                    "mutation($s: SensorSelector!) { startSensor(sensorSelector: $s) { __typename ... on PythonError "
                    "{ message } } }"
                ),
                {"s": selector},
            )["startSensor"]
        else:
            state = self.gql(
                (
                    "query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { ... on Sensor { sensorState "
                    "{ id } } } }"
                ),
                {"s": selector},
            )["sensorOrError"]["sensorState"]
            data = self.gql(
                "mutation($id: String) { stopSensor(id: $id) { __typename ... on PythonError { message } } }",
                {"id": state["id"]},
            )["stopSensor"]
        if data["__typename"] == "PythonError":
            raise RuntimeError(f"{'start' if running else 'stop'} {name}: {data['message']}")

    def wait_run(self, job: str, since: float) -> dict:
        deadline = since + self.timeout
        while time.time() < deadline:
            done = [r for r in self.gql.runs(created_after=since) if r["jobName"] == job and r["status"] not in ACTIVE]
            if done:
                if done[0]["status"] != "SUCCESS":
                    raise Bug(f"{job} run {done[0]['runId']} ended {done[0]['status']}")
                return done[0]
            time.sleep(1)
        raise Bug(f"no {job} run finished {self.timeout:.0f} s after {since}")

    def ui_build(self) -> dict:
        from dagster_graphql import DagsterGraphQLClient

        client = DagsterGraphQLClient("127.0.0.1", port_number=self.port)
        launched = time.time()
        run_id = client.submit_job_execution(
            "build_graph",
            repository_location_name=LOCATION,
            repository_name=REPOSITORY,
            run_config={},
            tags={"dagster/partition": "default"},
        )
        while True:
            status = client.get_run_status(run_id).value
            if status in ("SUCCESS", "FAILURE", "CANCELED"):
                break
            if time.time() - launched > self.timeout:
                raise Bug(f"UI-launched build_graph {run_id} not done after {self.timeout:.0f} s (status {status})")
            time.sleep(0.25)
        done = time.time()
        run = next(r for r in self.gql.runs(created_after=launched - 1) if r["runId"] == run_id)
        return {
            "status": status,
            "launch_to_done_s": round(done - launched, 1),
            "run_seconds": round(run["endTime"] - run["startTime"], 1),
            "queued_and_spawn_s": round(run["startTime"] - launched, 1),
            "run_id": run_id,
        }

    def diagnostics(self) -> dict:
        out = {}
        for sensor in ("source_files_sensor", "graph_automation", "consistency_sensor"):
            try:
                out[f"ticks_{sensor}"] = [
                    {
                        "at_s": round(t["timestamp"] - self.started, 1),
                        "status": t.get("status"),
                        "skip": t.get("skipReason"),
                        "runs": len(t.get("runIds") or []),
                        "error": (t.get("error") or {}).get("message", "")[:1500] or None,
                        "log": [e["message"] for e in (t.get("logEvents") or {}).get("events", [])][:10],
                    }
                    for t in self.gql.ticks(sensor)
                ]
            except Exception as error:  # the webserver may be gone: say so
                out[f"ticks_{sensor}"] = f"unavailable: {error!r}"[:500]
        try:
            out["runs"] = [describe_run(r, self.started) for r in self.gql.runs()]
        except Exception as error:
            out["runs"] = f"unavailable: {error!r}"[:500]
        self.log.flush()
        out["dagster_dev_log_tail"] = self.log_path.read_text(errors="replace")[-8000:].splitlines()
        return out

    def stop(self) -> dict:
        if not self.alive():
            return {"signal": None, "exit_status": None if self.process is None else self.process.returncode}
        stopping = time.time()
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            status = self.process.wait(timeout=20)
            how = "SIGINT"
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            status = self.process.wait(timeout=20)
            how = "SIGKILL after 20 s"
        exit_at = time.time()
        # What the group left behind (the code servers and run processes exit on their own
        # heartbeat timeouts); they get 60 s, then SIGKILL.
        at_exit = self.group_members()
        gone_after = None
        while time.time() - stopping < 80:
            if not self.group_members():
                gone_after = round(time.time() - stopping, 1)
                break
            time.sleep(0.5)
        killed = []
        if gone_after is None:
            killed = self.group_members()
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.log.close()
        return {
            "signal": how,
            "exit_status": status,
            "seconds": round(exit_at - stopping, 1),
            "processes_left_in_group_at_exit": at_exit,
            "group_empty_after_s": gone_after,
            "killed_after_80_s": killed,
        }

    def group_members(self) -> list[str]:
        members = []
        for proc in psutil.process_iter(["pid", "cmdline"]):
            try:
                if os.getpgid(proc.info["pid"]) == self.process.pid:
                    members.append(" ".join(proc.info["cmdline"] or [])[:160])
            except (ProcessLookupError, psutil.Error, OSError):
                pass
        return members


# --------------------------------------------------------------------------- where a run's time goes

PHASE_EVENTS = {"PIPELINE_STARTING": "starting", "PIPELINE_START": "started"}


def run_phases(home: Path, run_ids: list[str]) -> dict[str, dict]:
    """run id -> seconds from the run's creation to the launcher picking it up (queued), from
    there to the run's process executing it (process start-up: Python, Dagster and the code's
    imports), and each step's duration; read from the instance's event log once nothing
    else uses it (read-only)."""
    from dagster import DagsterInstance

    phases = {}
    # The instance's event log storage finds its folder through DAGSTER_HOME.
    os.environ["DAGSTER_HOME"] = str(home)
    with DagsterInstance.from_config(str(home)) as instance:
        for run_id in run_ids:
            record = instance.get_run_record_by_id(run_id)
            if record is None:
                continue
            created = record.create_timestamp.timestamp()
            marks, steps, starts = {}, {}, {}
            for entry in instance.all_logs(run_id):
                if not entry.is_dagster_event:
                    continue
                kind = entry.dagster_event_type.value
                if kind in PHASE_EVENTS:
                    marks[PHASE_EVENTS[kind]] = entry.timestamp
                elif kind == "STEP_START":
                    starts[entry.step_key] = entry.timestamp
                elif kind in ("STEP_SUCCESS", "STEP_FAILURE") and entry.step_key in starts:
                    steps[entry.step_key] = round(entry.timestamp - starts[entry.step_key], 1)
            phases[run_id] = {
                "queued_s": round(marks["starting"] - created, 1) if "starting" in marks else None,
                "process_start_s": round(marks["started"] - marks["starting"], 1)
                if {"started", "starting"} <= set(marks)
                else None,
                "steps_s": steps,
            }
    return phases


# --------------------------------------------------------------------------- the CLI


class CLI:
    """``graphrag-index`` on its own fresh copy of the corpus (own DAGSTER_HOME, DuckDB file and
    vectors): a first index, then passes whose graph build is forced by an edit (a sentence
    appended to one file); graph-run durations from the instance's run records."""

    def __init__(self, work: Path):
        self.input, self.home, self.database = work / "input", work / "dagster_home", work / "index.duckdb"
        shutil.copytree(REPO / "sample_corpus", self.input)
        for corpus, names in OTHER_CORPORA.items():
            (self.input / corpus).mkdir()
            for name in names:
                shutil.copy(REPO / "sample_corpus" / "default" / name, self.input / corpus / name)
        self.home.mkdir()
        shutil.copy(REPO / "dagster_home" / "dagster.yaml", self.home / "dagster.yaml")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHRAG_") and k != "DAGSTER_HOME"}
        self.env |= {
            "DAGSTER_HOME": str(self.home),
            "GRAPHRAG_INPUT_DIR": str(self.input),
            "GRAPHRAG_DB": str(self.database),
            "GRAPHRAG_VECTORS": str(work / "lancedb"),
        }
        self.passes: list[dict] = []

    def run(self, label: str, edit: bool) -> dict:
        if edit:
            append(self.input / "default" / EDITED_NAME, edit_sentence(f" (CLI pass {len(self.passes)})"))
        load = loadavg()
        started = time.time()
        done = subprocess.run(
            [str(VENV_BIN / "graphrag-index")], cwd=REPO, env=self.env, capture_output=True, text=True
        )
        wall = time.time() - started
        if done.returncode != 0:
            raise Bug(f"graphrag-index failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        self.passes.append(
            {
                "pass": label,
                "wall_s": round(wall, 1),
                "started": started,
                "loadavg_before": load,
                "summary": done.stdout.strip().splitlines()[-1],
            }
        )
        return self.passes[-1]

    def results(self) -> list[dict]:
        from dagster import DagsterInstance, RunsFilter

        with DagsterInstance.from_config(str(self.home)) as instance:  # read-only use, between CLI runs
            records = instance.get_run_records(RunsFilter(job_name="build_graph"), ascending=True)
            graph = [(r.create_timestamp.timestamp(), r.start_time, r.end_time, r.dagster_run.run_id) for r in records]
        phases = run_phases(self.home, [g[3] for g in graph])
        out = []
        for item in self.passes:
            runs = [g for g in graph if item["started"] - 0.5 <= g[0] <= item["started"] + item["wall_s"] + 0.5]
            out.append(
                {k: v for k, v in item.items() if k != "started"}
                | {
                    "graph_runs": len(runs),
                    "graph_run_seconds": round(runs[-1][2] - runs[-1][1], 1) if runs else None,
                    "graph_steps_s": phases.get(runs[-1][3], {}).get("steps_s") if runs else None,
                }
            )
        return out


# --------------------------------------------------------------------------- main


def code_version() -> dict:
    """The commit measured, and the files that differed from it (read-only git calls)."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()

    return {
        "commit": git("rev-parse", "HEAD"),
        "modified": git("status", "--porcelain", "--untracked-files=no").splitlines(),
    }


def table(result: dict) -> str:
    lines = [
        (
            "| | to published (s) | runs launched | first run created (s) | source run (s) | graph run created (s) "
            "| graph run (s) |"
        ),
        "|---|---|---|---|---|---|---|",
    ]

    def row(label: str, entry: dict) -> str:
        runs = entry["timeline"]
        source = [r for r in runs if r["job"] == "index_sources"]
        graph = [r for r in runs if r["job"] != "index_sources"]
        jobs = ", ".join(f"{n} {job}" for job, n in Counter(r["job"] for r in runs).items())
        return (
            f"| {label} | **{entry['to_published_s']}** | {len(runs)} ({jobs}) "
            f"| {runs[0]['created_s'] if runs else ''} | "
            f"{' + '.join(str(r['run_seconds']) for r in source)} | {' / '.join(str(r['created_s']) for r in graph)} | "
            f"{' + '.join(str(r['run_seconds']) for r in graph)} |"
        )

    if result.get("first_index"):
        lines.append(
            row(
                f"start `dagster dev` (webserver up at {result['first_index']['webserver_up_s']} s)",
                result["first_index"],
            )
        )
    for name, change in result.get("changes", {}).items():
        lines.append(row(f"{name} a file", change))
    ui, ui_edit, cli = (
        result.get("ui_build_graph"),
        result.get("ui_build_graph_after_edit"),
        result.get("cli_build_graph"),
    )
    if ui and ui_edit and cli:
        ratio = result["ui_over_cli"]
        lines += [
            "",
            (
                "| build_graph for `default` | graph run (run record, median) | launch to success / whole command "
                "(median) |"
            ),
            "|---|---|---|",
            (
                f"| UI (GraphQL launch) after an edit | {ui_edit['median_run_seconds']} | "
                f"{ui_edit['median_launch_to_done_s']} "
                f"|"
            ),
            f"| UI (GraphQL launch), nothing changed | {ui['median_run_seconds']} | {ui['median_launch_to_done_s']} |",
            (
                f"| `graphrag-index` after an edit, right after each UI build (dagster dev idle) | "
                f"{cli['median_run_seconds']} "
                f"| {cli['median_wall_s']} |"
            ),
            (
                f"| `graphrag-index` after an edit, dagster dev stopped | "
                f"{cli['dagster_dev_stopped_median_run_seconds']} "
                f"| {cli['dagster_dev_stopped_median_wall_s']} |"
            ),
            (
                f"| UI / CLI, same work, same conditions | **{ratio['same_work_after_an_edit']}x** | "
                f"{ratio['launch_to_success_vs_whole_command']}x "
                f"|"
            ),
            f"| UI / CLI with dagster dev stopped | {ratio['vs_cli_with_dagster_dev_stopped']}x | |",
        ]
    return "\n".join(lines)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="webserver port (default: a free one)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a change may take to be published")
    parser.add_argument(
        "--settle", type=float, default=45.0, help="quiet seconds after a change before counting its runs"
    )
    parser.add_argument("--repeat", type=int, default=3, help="UI-launched and CLI edit-forced graph builds to time")
    parser.add_argument("--keep", help="work in this folder and keep it (default: a temp folder, removed on success)")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "live_mode.json"))
    return parser.parse_args()


def work_folder(keep: str | None) -> Path:
    """The folder kept (emptied first) or a fresh temp folder."""
    if not keep:
        return Path(tempfile.mkdtemp(prefix="graphrag-live-bench-"))
    work = Path(keep)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    return work


def first_index(live: LiveMode) -> dict:
    """dagster dev started on the fresh folder, until its first publish."""
    started = live.start()
    webserver = live.wait_webserver()
    seen_at, pointer = live.wait_published(
        "SELECT count(*) FROM documents", None, lambda n: (n or 0) > 0, started, "first index"
    )
    runs = live.settle_runs(started - 60)
    return {
        "webserver_up_s": round(webserver - started, 1),
        "to_published_s": round(seen_at - started, 1),
        "published_at_s": round(published_epoch(pointer) - started, 1),
        "runs": len(runs),
        "timeline": [describe_run(r, started) for r in runs],
    }


def readme_graphrag_sql(live: LiveMode) -> dict:
    """README: "cp notes.txt sample_corpus/default/" then graphrag-sql shows it."""
    readme_check = "SELECT count(*) AS text_units FROM text_units WHERE source_partition = 'default/notes.txt'"
    readme_sql = subprocess.run(
        [str(VENV_BIN / "graphrag-sql"), readme_check], cwd=REPO, env=live.env, capture_output=True, text=True
    )
    return {
        "command": f'.venv/bin/graphrag-sql "{readme_check}"',
        "exit_status": readme_sql.returncode,
        "output": (readme_sql.stdout + readme_sql.stderr).strip().splitlines(),
        "shows_added_file": readme_sql.returncode == 0
        and any(word.isdigit() and int(word) > 0 for word in readme_sql.stdout.replace("│", " ").split()),
    }


def file_changes(live: LiveMode, result: dict) -> None:
    """A file added to ``default``, one edited, one deleted, each until it is published
    (``result["changes"]``, which keeps those measured when one fails)."""
    folder = live.input / "default"
    changes = result["changes"] = {}
    changes["add"] = live.change(
        "add",
        lambda: (folder / ADDED_NAME).write_text(ADDED_TEXT),
        "SELECT count(*) FROM text_units WHERE corpus = 'default' AND text LIKE ?",
        [f"%{ADDED_MARKER}%"],
        lambda n: (n or 0) > 0,
    )
    result["readme_graphrag_sql"] = readme_graphrag_sql(live)
    print(f"add -> published in {changes['add']['to_published_s']} s, {changes['add']['runs']} run(s)", flush=True)

    marker = "Tobias Wren (live edit)"
    changes["edit"] = live.change(
        "edit",
        lambda: append(folder / EDITED_NAME, edit_sentence(" (live edit)")),
        "SELECT count(*) FROM text_units WHERE corpus = 'default' AND text LIKE ?",
        [f"%{marker}%"],
        lambda n: (n or 0) > 0,
    )
    print(f"edit -> published in {changes['edit']['to_published_s']} s, {changes['edit']['runs']} run(s)", flush=True)

    key = f"default/{DELETED_NAME}"
    changes["delete"] = live.change(
        "delete",
        lambda: (folder / DELETED_NAME).unlink(),
        (
            "SELECT (SELECT count(*) FROM documents WHERE source_partition = $1) + (SELECT count(*) FROM "
            "text_units "
            "WHERE source_partition = $1)"
        ),
        [key],
        lambda n: n == 0,
    )
    print(
        f"delete -> published in {changes['delete']['to_published_s']} s, {changes['delete']['runs']} run(s)",
        flush=True,
    )


def ui_builds_unchanged(live: LiveMode, repeat: int) -> list[dict]:
    """build_graph for "default" launched through the webserver with nothing changed since
    the last build: what clicking "Materialize" does."""
    ui = []
    for _ in range(repeat):
        since = time.time()
        ui.append(live.ui_build())
        extra = [r for r in live.settle_runs(since) if r["runId"] != ui[-1]["run_id"]]
        ui[-1]["other_runs_launched"] = [describe_run(r, since) for r in extra]
        print(f"UI build_graph, nothing changed: {ui[-1]['run_seconds']} s, {len(extra)} follow-up run(s)", flush=True)
    return ui


def ui_builds_after_edits(live: LiveMode, cli: CLI, repeat: int) -> list[dict]:
    """The same work as graphrag-index after an edit: graph_automation paused, a sentence
    appended, the source sensor's index_sources run waited for, then build_graph launched
    through the webserver; automation is switched on again afterwards. graphrag-index does
    the same work right after each, under the same load (dagster dev idle)."""
    folder = live.input / "default"
    ui_edit = []
    for index in range(repeat):
        live.set_sensor("graph_automation", False)
        try:
            since = time.time()
            append(folder / EDITED_NAME, edit_sentence(f" (UI pass {index + 1})"))
            live.wait_run("index_sources", since)
            load = loadavg()
            ui_edit.append(live.ui_build())
            ui_edit[-1]["loadavg_before"] = load
            _, present = snapshot_value(
                live.database,
                "SELECT count(*) FROM documents WHERE text LIKE ?",
                [f"%Tobias Wren (UI pass {index + 1})%"],
            )
            ui_edit[-1]["edit_published"] = bool(present)
        finally:
            live.set_sensor("graph_automation", True)
        extra = [
            r
            for r in live.settle_runs(since)
            if r["runId"] != ui_edit[-1]["run_id"] and r["jobName"] != "index_sources"
        ]
        ui_edit[-1]["other_runs_launched"] = [describe_run(r, since) for r in extra]
        print(
            f"UI build_graph after an edit: {ui_edit[-1]['run_seconds']} s, {len(extra)} follow-up run(s)",
            flush=True,
        )
        cli.run(f"edit {index + 1}, dagster dev running (idle)", edit=True)
    return ui_edit


def with_medians(how: str, runs: list[dict]) -> dict:
    return {
        "how": how,
        "runs": runs,
        "median_run_seconds": round(statistics.median(r["run_seconds"] for r in runs), 1),
        "median_launch_to_done_s": round(statistics.median(r["launch_to_done_s"] for r in runs), 1),
    }


def live_session(live: LiveMode, cli: CLI, repeat: int, result: dict) -> None:
    """Everything measured while dagster dev runs, into ``result``."""
    result["first_index"] = first_index(live)
    print(f"first publish {result['first_index']['to_published_s']} s after start", flush=True)
    file_changes(live, result)
    ui = ui_builds_unchanged(live, repeat)
    ui_edit = ui_builds_after_edits(live, cli, repeat)
    result["ui_build_graph"] = with_medians(
        "DagsterGraphQLClient.submit_job_execution('build_graph', tags={'dagster/partition': 'default'}), "
        "nothing changed since the last build",
        ui,
    )
    result["ui_build_graph_after_edit"] = with_medians(
        "graph_automation stopped, a sentence appended to one file, its index_sources run (source sensor) "
        "waited for, "
        "then build_graph for 'default' launched through GraphQL; graph_automation started again after it",
        ui_edit,
    )


def add_run_phases(live: LiveMode, result: dict) -> None:
    """Where each run's time went (queue, process start-up, steps), from the stopped instance."""
    ui_runs = result["ui_build_graph"]["runs"] + result["ui_build_graph_after_edit"]["runs"]
    timelines = [result["first_index"]["timeline"]] + [c["timeline"] for c in result["changes"].values()]
    timelines += [[r] for r in ui_runs]
    timelines += [r["other_runs_launched"] for r in ui_runs]
    phases = run_phases(live.home, [run["run_id"] for timeline in timelines for run in timeline])
    for timeline in timelines:
        for run in timeline:
            run.update(phases.get(run["run_id"], {}))


def cli_build_graph(passes: list[dict]) -> dict:
    alongside = [p for p in passes if "running" in p["pass"]]
    alone = [p for p in passes if "stopped" in p["pass"]]
    return {
        "how": "graphrag-index on its own fresh copy of the corpus; a first index before dagster dev starts, "
        "then passes "
        "forced by "
        "an edit (a sentence appended to one file): one right after each UI build after an edit (dagster dev "
        "running, idle), "
        "and more after dagster dev stopped",
        "passes": passes,
        "median_run_seconds": round(statistics.median(p["graph_run_seconds"] for p in alongside), 1),
        "median_wall_s": round(statistics.median(p["wall_s"] for p in alongside), 1),
        "dagster_dev_stopped_median_run_seconds": round(statistics.median(p["graph_run_seconds"] for p in alone), 1),
        "dagster_dev_stopped_median_wall_s": round(statistics.median(p["wall_s"] for p in alone), 1),
    }


def ui_over_cli(result: dict) -> dict:
    cli_run = result["cli_build_graph"]["median_run_seconds"]
    return {
        "same_work_after_an_edit": round(result["ui_build_graph_after_edit"]["median_run_seconds"] / cli_run, 2),
        "ui_nothing_changed": round(result["ui_build_graph"]["median_run_seconds"] / cli_run, 2),
        "launch_to_success_vs_whole_command": round(
            result["ui_build_graph_after_edit"]["median_launch_to_done_s"] / result["cli_build_graph"]["median_wall_s"],
            2,
        ),
        "vs_cli_with_dagster_dev_stopped": round(
            result["ui_build_graph_after_edit"]["median_run_seconds"]
            / result["cli_build_graph"]["dagster_dev_stopped_median_run_seconds"],
            2,
        ),
        "target": 1.5,
    }


def main() -> int:
    options = arguments()
    work = work_folder(options.keep)
    port = options.port or free_port()
    result: dict = {
        "command": " ".join([".venv/bin/python", "bench/live_mode.py"] + sys.argv[1:]),
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "machine": machine(),
        "loadavg_start": loadavg(),
        "dagster_dev": f".venv/bin/dagster dev -w workspace.yaml -p {port}",
        "code": code_version(),
        "work": str(work),
        "settle_seconds": options.settle,
    }
    (work / "live").mkdir()
    live = LiveMode(work / "live", port, options.timeout, options.settle)
    cli = CLI(work / "cli")
    # The CLI's own first index, before dagster dev starts (its edit passes come later).
    cli.run("first index", edit=False)
    failure = None
    try:
        live_session(live, cli, options.repeat, result)
    except Bug as error:
        failure = str(error)
        result["bug"] = failure
        result["diagnostics"] = live.diagnostics()
    except BaseException as error:
        failure = f"{type(error).__name__}: {error}"
        result["error"] = failure
        if live.alive():
            result["diagnostics"] = live.diagnostics()
        raise
    finally:
        result["stop"] = live.stop()
        if failure:
            result["loadavg_end"] = loadavg()
            write_json(options.out, result)
            print(f"FAILED: {failure}\nlogs kept in {work}", file=sys.stderr)
    if failure:
        return 1
    add_run_phases(live, result)

    # The CLI again with dagster dev stopped (its daemon no longer shares the cores).
    try:
        for index in range(options.repeat):
            cli.run(f"edit {index + 1}, dagster dev stopped", edit=True)
        passes = cli.results()
    except Bug as error:
        result["bug"] = str(error)
        write_json(options.out, result)
        print(f"FAILED: {error}\nlogs kept in {work}", file=sys.stderr)
        return 1
    result["cli_build_graph"] = cli_build_graph(passes)
    result["ui_over_cli"] = ui_over_cli(result)
    result["loadavg_end"] = loadavg()
    write_json(options.out, result)
    print(table(result))
    print(f"load average: {result['loadavg_start']} at start, {result['loadavg_end']} at end; wrote {options.out}")
    if not options.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
