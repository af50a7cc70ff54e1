"""Dagster's default run launcher (a run worker process per run, started by the code
server), plus the health check that run monitoring needs to fail a run whose process died.

``DefaultRunLauncher`` cannot tell whether a run's process is alive, so with it run
monitoring leaves a run whose process was killed (``dg dev`` stopped mid-run, the OOM
killer) STARTED forever, and the step's claim on the DuckDB pool's only slot is never
given back: no step of any later run can start. This launcher looks the run's process up
in the process table of the machine it ran on. Where it cannot tell (a run worker on
another machine, no process id recorded yet) it answers "running": failing a live run
would free the pool slot while its step still writes the index.

Runs of ``graphrag-index`` (``execute_in_process``, not launched by any launcher) carry
the same host tag and are checked the same way, so the daemon also frees the slot of a
killed ``graphrag-index``.
"""

from __future__ import annotations

import socket

import psutil
from dagster import DagsterEventType, DagsterInstance, DagsterRun
from dagster._core.launcher import CheckRunHealthResult, DefaultRunLauncher, LaunchRunContext, WorkerStatus
from dagster._core.remote_origin import GrpcServerCodeLocationOrigin

# The machine whose process table holds the run's worker process.
HOST_TAG = "graphrag/host"
LOCAL_ADDRESSES = {"localhost", "127.0.0.1", "::1"}


def this_host() -> str:
    return socket.gethostname()


def worker_process(instance: DagsterInstance, run: DagsterRun) -> tuple[int, float] | None:
    """The id of the process that executes the run's steps, and when it said so: the last
    engine event with a ``pid`` (Dagster logs one when a run worker starts, and when the
    in-process executor starts, also under ``execute_in_process``)."""
    for entry in reversed(instance.all_logs(run.run_id, of_type=DagsterEventType.ENGINE_EVENT)):
        pid = entry.dagster_event.engine_event_data.metadata.get("pid")
        if pid is not None:
            return int(pid.value), entry.timestamp
    return None


def process_alive(pid: int, reported_at: float) -> bool:
    """Whether process ``pid``, which reported itself at ``reported_at``, still runs. A
    killed child stays a zombie until its parent (the code server) reaps it, and a process
    id is reused after the process is gone: a process created after the report is another."""
    try:
        process = psutil.Process(pid)
        return process.status() != psutil.STATUS_ZOMBIE and process.create_time() <= reported_at + 1.0
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True


def run_worker_health(instance: DagsterInstance, run: DagsterRun) -> CheckRunHealthResult:
    host = run.tags.get(HOST_TAG)
    if host != this_host():
        return CheckRunHealthResult(
            WorkerStatus.RUNNING, f"run worker on {host or 'an unrecorded host'}: not checked from {this_host()}"
        )
    worker = worker_process(instance, run)
    if worker is None:
        return CheckRunHealthResult(WorkerStatus.RUNNING, "no run worker process id recorded yet")
    pid, reported_at = worker
    if process_alive(pid, reported_at):
        return CheckRunHealthResult(WorkerStatus.RUNNING, f"run worker process {pid} is running")
    return CheckRunHealthResult(
        WorkerStatus.FAILED, f"run worker process {pid} on {host} is gone (killed, or its machine restarted)"
    )


class LocalRunLauncher(DefaultRunLauncher):
    """``DefaultRunLauncher`` whose runs run monitoring can check: a run whose worker
    process died is marked failed, and ``free_slots_after_run_end_seconds`` frees its slot."""

    def launch_run(self, context: LaunchRunContext) -> None:
        origin = context.dagster_run.remote_job_origin.repository_origin.code_location_origin
        # A code server of the workspace (`dg dev`, the daemon) starts its run workers
        # on this machine; a separately deployed one may be elsewhere, where ids mean nothing.
        if not isinstance(origin, GrpcServerCodeLocationOrigin) or origin.host in LOCAL_ADDRESSES | {this_host()}:
            self._instance.add_run_tags(context.dagster_run.run_id, {HOST_TAG: this_host()})
        super().launch_run(context)

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        return run_worker_health(self._instance, run)
