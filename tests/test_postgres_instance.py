"""The production instance (deploy/postgres/dagster.yaml) against a real PostgreSQL server:
graphrag-index records its runs and events there, and the daemon fails a run whose
processes were killed, frees its DuckDB pool slot and runs it again. The default instance
(dagster_home/dagster.yaml, SQLite) fails the run and frees the slot the same way. Either
instance builds the same index: its tables are identical but for when and by which run
their rows were written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb
import pytest
import yaml
from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

from graphrag_assets.defs.partitions import DUCKDB_POOL
from graphrag_assets.instance.run_launcher import HOST_TAG, process_alive, this_host, worker_process
from graphrag_assets.storage.duckdb_store import IndexStore
from graphrag_assets.storage.schema import TABLES, Table
from graphrag_assets.storage.snapshot import read_pointer

from .conftest import REPO, SAMPLE_CORPUS
from .daemon import GRAPH_ASSETS
from .holder import Holder

POSTGRES_INSTANCE = REPO / "deploy" / "postgres" / "dagster.yaml"
DEFAULT_INSTANCE = REPO / "dagster_home" / "dagster.yaml"
BIN = Path(sys.executable).parent
PARENT_RUN_TAG = "dagster/parent_run_id"
# Besides the timestamps, the columns two builds of the same corpus differ in: the Dagster
# run that made an LLM call and the date communities were built on.
BUILD_COLUMNS = {"run_id", "period"}


def instance_home(tmp_path: Path, instance_file: Path, **run_monitoring) -> Path:
    """A DAGSTER_HOME with the settings of ``instance_file``, ``run_monitoring`` overridden."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    config = yaml.safe_load(instance_file.read_text())
    config["run_monitoring"] |= run_monitoring
    (home / "dagster.yaml").write_text(yaml.safe_dump(config))
    return home


def environment(home: Path, tmp_path: Path, **variables) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "DAGSTER_HOME": str(home)} | variables


def wait_for(condition: Callable, what: str, log: Path, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}; daemon log:\n{log.read_text()[-4000:]}")
        time.sleep(1.0)
    return result


def sample_index_command(index: Path) -> list[str]:
    """graphrag-index of the sample corpus into ``index``, its vectors beside it."""
    return [
        str(BIN / "graphrag-index"),
        "--input",
        str(SAMPLE_CORPUS),
        "--db",
        str(index),
        "--vectors",
        str(index.parent / "lancedb"),
    ]


def test_graphrag_index_records_runs_and_materializations_in_postgres(postgres, tmp_path):
    database = postgres.create_database("index")
    home = instance_home(tmp_path, POSTGRES_INSTANCE)
    index = tmp_path / "index" / "graphrag.duckdb"
    command = sample_index_command(index)
    env = environment(home, tmp_path, **postgres.environment(database))

    first = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    runs = postgres.query(database, "SELECT pipeline_name, status FROM runs")
    assert {name for name, _ in runs} == {"index_sources", "build_graph"}
    assert {status for _, status in runs} == {DagsterRunStatus.SUCCESS.value}
    # so that run monitoring can tell whether their process died
    assert postgres.query(database, "SELECT DISTINCT value FROM run_tags WHERE key = %s", (HOST_TAG,)) == [
        (this_host(),)
    ]
    materialized = postgres.query(
        database, "SELECT DISTINCT asset_key FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION'"
    )
    assert {json.loads(key)[0] for (key,) in materialized} == {"documents", *GRAPH_ASSETS}
    # The DuckDB pool lives in Postgres too, with its one slot.
    assert postgres.query(
        database, "SELECT concurrency_key, count(*) FROM concurrency_slots GROUP BY concurrency_key"
    ) == [(DUCKDB_POOL, 1)]
    assert not list(home.rglob("*.db")), "nothing may be stored in SQLite beside the instance"

    pointer = read_pointer(str(index))
    assert pointer is not None
    with duckdb.connect(pointer["snapshot"], read_only=True) as snapshot:
        assert snapshot.execute("SELECT count(*) FROM entities").fetchone()[0] > 0

    second = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "no work: index is up to date" in second.stdout
    assert len(postgres.query(database, "SELECT run_id FROM runs")) == len(runs)


def build_index(root: Path, instance_file: Path, **storage: str) -> Path:
    """graphrag-index over the sample corpus on an instance with ``instance_file``'s
    settings, all of it under ``root``; the index file."""
    root.mkdir()
    index = root / "index" / "graphrag.duckdb"
    env = environment(instance_home(root, instance_file), root, **storage)
    done = subprocess.run(sample_index_command(index), cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return index


def differing_columns(table: Table, first: Path, second: Path) -> dict[str, list[dict]]:
    """The columns of ``table`` whose values differ between two index files, each with the
    keys of a few rows where they do ("rows" if rows of some keys are in one file only).
    Timestamps and BUILD_COLUMNS are not compared."""
    columns = [name for name, dtype in table.columns.items() if not dtype.is_temporal() and name not in BUILD_COLUMNS]
    key = list(table.primary_key) if set(table.primary_key) <= set(columns) else columns
    checks = {"rows": key} | {name: [*key, name] for name in columns if name not in key}

    def listed(names: list[str]) -> str:
        return ", ".join(f'"{name}"' for name in names)

    differing = {}
    with duckdb.connect() as connection:
        connection.execute(f"ATTACH '{first}' AS first_index (READ_ONLY)")
        connection.execute(f"ATTACH '{second}' AS second_index (READ_ONLY)")
        for column, compared in checks.items():
            one, other = (
                f'SELECT {listed(compared)} FROM {index}."{table.name}"' for index in ("first_index", "second_index")
            )
            rows = connection.execute(
                f"SELECT DISTINCT {listed(key)} FROM (({one} EXCEPT ALL {other}) UNION ALL ({other} EXCEPT ALL {one})) "
                "ORDER BY ALL LIMIT 5"
            ).fetchall()
            if rows:
                differing[column] = [dict(zip(key, row, strict=True)) for row in rows]
                if column == "rows":
                    break  # every column differs at those keys
    return differing


def test_the_postgres_and_the_default_instance_build_identical_index_tables(postgres, tmp_path):
    on_postgres = build_index(
        tmp_path / "postgres", POSTGRES_INSTANCE, **postgres.environment(postgres.create_database("same_index"))
    )
    on_sqlite = build_index(tmp_path / "default", DEFAULT_INSTANCE)

    with duckdb.connect(str(on_sqlite), read_only=True) as index:
        for name in ("entities", "relationships", "communities", "community_reports", "embeddings"):
            assert index.execute(f"SELECT count(*) FROM {name}").fetchone()[0] > 0, f"no {name} to compare"
    for table in TABLES.values():
        differing = differing_columns(table, on_postgres, on_sqlite)
        assert not differing, (
            f"{table.name} differs between the builds on the Postgres and the default instance, "
            f"in columns (with some of the rows): {differing}"
        )


@contextmanager
def dagster_daemon(env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """``dagster-daemon run`` for the repo's workspace, in its own process group (with its
    code server and their run workers), stopped at the end."""
    with log.open("a") as output:
        daemon = subprocess.Popen(
            [str(BIN / "dagster-daemon"), "run", "-w", "workspace.yaml"],
            cwd=REPO,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield daemon
        finally:
            daemon.terminate()
            try:
                daemon.wait(timeout=60)
            finally:
                # What may outlive the daemon: its code server and the run workers of runs still going.
                with suppress(ProcessLookupError):
                    os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait()


@pytest.mark.parametrize("instance_file", [POSTGRES_INSTANCE, DEFAULT_INSTANCE], ids=["postgres", "default"])
def test_a_run_whose_processes_were_killed_is_failed_frees_the_pool_slot_and_is_run_again(
    instance_file, request, tmp_path, monkeypatch
):
    """``dagster dev`` killed mid-run (daemon, code server and run worker at once): the
    next daemon finds the run STARTED, with the DuckDB pool's slot, and no process behind it."""
    home = instance_home(tmp_path, instance_file, poll_interval_seconds=2, free_slots_after_run_end_seconds=1)
    storage = {}
    if instance_file == POSTGRES_INSTANCE:
        postgres = request.getfixturevalue("postgres")
        storage = postgres.environment(postgres.create_database("monitoring"))
    (tmp_path / "input" / "default").mkdir(parents=True)
    (tmp_path / "input" / "default" / "harbour.txt").write_text(
        "Clara Okafor inspected the Port Calder harbour with Mara Ellison.\n"
    )
    index = tmp_path / "index" / "graphrag.duckdb"
    index.parent.mkdir()
    with IndexStore(index):
        pass  # the tables, so that the daemon's consistency pass can read the file
    env = environment(
        home,
        tmp_path,
        **storage,
        GRAPHRAG_INPUT_DIR=str(tmp_path / "input"),
        GRAPHRAG_DB=str(index),
        GRAPHRAG_VECTORS=str(tmp_path / "index" / "lancedb"),
    )
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    log = tmp_path / "daemon.log"

    def slot_holders() -> set[str]:
        return instance.event_log_storage.get_concurrency_info(DUCKDB_POOL).active_run_ids

    # The sensor's run reads the file and waits for the index the holder keeps open, holding
    # the pool slot meanwhile: a run in the middle of its work.
    with Holder(str(index)) as holder, DagsterInstance.get() as instance:
        with dagster_daemon(env, log) as daemon:
            run_id = wait_for(
                lambda: next(iter(slot_holders()), None), "a run holding the DuckDB pool slot", log, timeout=240
            )
            pid, reported_at = wait_for(
                lambda: worker_process(instance, instance.get_run_by_id(run_id)), "the run worker's process id", log
            )
            os.killpg(daemon.pid, signal.SIGKILL)
            wait_for(
                lambda: not process_alive(pid, reported_at), "the run worker to die with the daemon", log, timeout=30
            )
        assert instance.get_run_by_id(run_id).status == DagsterRunStatus.STARTED and slot_holders() == {run_id}

        with dagster_daemon(env, log):
            wait_for(
                lambda: instance.get_run_by_id(run_id).status == DagsterRunStatus.FAILURE,
                "the killed run marked failed",
                log,
            )
            # by run monitoring, through the launcher's health check
            assert any(
                f"run worker process {pid} on {this_host()} is gone" in entry.message
                for entry in instance.all_logs(run_id)
            )
            wait_for(lambda: run_id not in slot_holders(), "its pool slot freed", log)
            if instance.run_retries_enabled:
                wait_for(lambda: instance.get_runs(RunsFilter(tags={PARENT_RUN_TAG: run_id})), "the run retried", log)
                runs_again = RunsFilter(tags={PARENT_RUN_TAG: run_id}, statuses=[DagsterRunStatus.SUCCESS])
            else:  # the sensor requests the file of a failed run again
                runs_again = RunsFilter(job_name="index_sources", statuses=[DagsterRunStatus.SUCCESS])
            holder.release()
            wait_for(lambda: instance.get_runs(runs_again), "the file read by a run after the killed one", log)
