"""What every benchmark records about where and on what it ran, and how it runs a command."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def machine() -> dict:
    """Cores, memory, Python and platform of this machine."""
    import psutil

    return {
        "cpus": psutil.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def git(*args: str) -> str:
    """A git command's output in the checkout ("" where git or the checkout is missing)."""
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def write_json(path: str | Path, data: dict) -> None:
    """A result file, its folder made if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def run_measured(command: list[str], env: dict[str, str], cwd: Path = REPO) -> dict:
    """Run a command to completion and measure it: wall time; CPU time and the largest
    single resident set from ``os.wait4`` (the command and every descendant it waited for);
    and the peak of the summed resident sets of its whole process tree, sampled every
    0.2 s (what the machine must hold when steps run as processes side by side). Raises
    with the end of stderr when the command fails."""
    import tempfile
    import threading
    import time

    import psutil

    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
        peak, done = [0], threading.Event()

        def sample() -> None:
            root = psutil.Process(process.pid)
            while not done.wait(0.2):
                try:
                    tree = [root, *root.children(recursive=True)]
                    peak[0] = max(peak[0], sum(p.memory_info().rss for p in tree if p.is_running()))
                except psutil.Error:
                    pass

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        done.set()
        sampler.join()
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        stdout.seek(0)
        stderr.seek(0)
        if process.returncode != 0:
            raise SystemExit(f"{command[0]} failed ({process.returncode}):\n{stderr.read()[-4000:]}")
        output = stdout.read()
    return {
        "wall_seconds": round(time.perf_counter() - started, 1),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mib": round(usage.ru_maxrss / 1024),  # KiB on Linux
        "peak_tree_rss_mib": round(peak[0] / 2**20),
        "stdout": output,
    }


GRAPHRAG_INDEX = [sys.executable, "-c", "import sys; from graphrag_evaluation.cli import main; sys.exit(main())"]


def fresh_dagster_home(folder: Path) -> Path:
    """A new DAGSTER_HOME with the repository's instance settings."""
    import shutil

    home = folder / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    return home


def step_seconds(dagster_home: Path) -> dict:
    """Per run of the instance: its length, and each step's start (seconds after the run's
    first event) and duration, from the event log."""
    from dagster import DagsterInstance
    from dagster._core.events import DagsterEventType

    runs = {}
    os.environ["DAGSTER_HOME"] = str(dagster_home)  # the instance's storage finds its folders by it
    with DagsterInstance.from_config(str(dagster_home)) as instance:
        for run in instance.get_runs():
            records = instance.all_logs(run.run_id)
            first, started, steps = records[0].timestamp, {}, {}
            for record in records:
                event = record.dagster_event
                if event is None:
                    continue
                if event.event_type == DagsterEventType.STEP_START:
                    started[record.step_key] = record.timestamp
                elif event.event_type == DagsterEventType.STEP_SUCCESS:
                    steps[record.step_key] = {
                        "start": round(started[record.step_key] - first, 1),
                        "seconds": round(record.timestamp - started[record.step_key], 1),
                    }
            runs[f"{run.job_name} {run.run_id[:8]}"] = {
                "seconds": round(records[-1].timestamp - first, 1),
                "steps": steps,
            }
    return runs


def index_corpus(work: Path, input_dir: Path, corpus: str, settings: dict[str, str], rerun: bool = True) -> dict:
    """``graphrag-index`` of ``input_dir`` as one corpus, from scratch in ``work`` (fresh
    DAGSTER_HOME, index and vectors), with these GRAPHRAG_* settings; then again with
    nothing changed. Measures both (``run_measured``), and records the steps of the runs
    and the rows of the published index."""
    from graphrag_assets.storage.snapshot import open_published, read_pointer

    home = fresh_dagster_home(work)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHRAG_")} | {
        "DAGSTER_HOME": str(home),
        "GRAPHRAG_DB": str(work / "index.duckdb"),
        "GRAPHRAG_VECTORS": str(work / "lancedb"),
    }
    env |= settings
    command = [*GRAPHRAG_INDEX, "--input", str(input_dir), "--corpus", corpus]
    first = run_measured(command, env)
    result = {"first_index": first | {"summary": first.pop("stdout").strip().splitlines()[-1]}}
    if rerun:
        again = run_measured(command, env)
        result["rerun_nothing_changed"] = again | {"summary": again.pop("stdout").strip().splitlines()[-1]}
    with open_published(read_pointer(work / "index.duckdb")) as snapshot:
        tables = ["documents", "text_units", "entities", "relationships", "communities", "community_reports"]
        result["rows"] = {t: snapshot.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
        result["tokens"] = int(snapshot.execute("SELECT sum(n_tokens) FROM text_units").fetchone()[0] or 0)
    result["runs"] = step_seconds(home)
    return result
