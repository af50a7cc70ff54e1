"""``graphrag-index``: run the Dagster asset graph headless, in process, against the
current DAGSTER_HOME (runs show up in the UI's history), then print a summary. The command
is started by the code location (``graphrag_evaluation.cli``), which gives it the
definitions to run: the indexer's assets with the evaluation of each build, whose query
side the indexer does not import."""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dagster import Definitions, JobDefinition

    from .settings import IndexSettings


@dataclass(frozen=True)
class CodeLocation:
    """What the runs of a pass are made of. ``definitions``: the job definitions for the
    settings, built only when there is work to launch (their imports take seconds);
    ``graph_job``: a module-level function building the graph job from the settings in the
    environment, which each step's process calls when a corpus is built in several
    (``indexing.run_index``)."""

    definitions: Callable[[IndexSettings], Definitions]
    graph_job: Callable[[], JobDefinition]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphrag-index",
        description="Index an input folder into the DuckDB GraphRAG index (missing or stale work only).",
    )
    _where_arguments(parser)
    _pass_arguments(parser)
    _settings_arguments(parser)
    return parser


def _where_arguments(parser: argparse.ArgumentParser) -> None:
    """What is indexed, where to, and how much the run says."""
    parser.add_argument(
        "--input",
        help="input folder, laid out as <input>/<corpus>/... (env GRAPHRAG_INPUT_DIR, default: sample_corpus)",
    )
    parser.add_argument("--db", help="DuckDB file (env GRAPHRAG_DB, default: data/graphrag.duckdb)")
    parser.add_argument("--vectors", help="LanceDB directory (env GRAPHRAG_VECTORS, default: data/lancedb)")
    parser.add_argument("--corpus", help="index the whole input folder as this corpus (env GRAPHRAG_CORPUS)")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="print Dagster's run events on the console (otherwise failures are summed up at the end)",
    )


def _pass_arguments(parser: argparse.ArgumentParser) -> None:
    """Which pass runs: indexing (dry, rebuilding, pruning), a removal, a restore, a repair."""
    from .fingerprints import STAGES  # no Dagster: --help stays quick

    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="show what would be indexed and the LLM calls and tokens it needs; change nothing",
    )
    parser.add_argument(
        "--rebuild",
        nargs="?",
        const=STAGES[0],
        choices=STAGES,
        metavar="STAGE",
        help=f"redo STAGE ({', '.join(STAGES)}) for every source of the corpora, and every stage after it; "
        "without STAGE, everything. LLM calls already answered come from the cache",
    )
    parser.add_argument(
        "--prune",
        action="store_true",
        help="make the index equal this input: also delete the sources and corpora it does not hold (a pass "
        "otherwise deletes only files gone from a corpus folder of its input)",
    )
    parser.add_argument(
        "--remove-corpus",
        metavar="NAME",
        help="delete every source of corpus NAME and publish the index without it; index nothing else",
    )
    parser.add_argument(
        "--restore",
        action="store_true",
        help="bring back the sources the last deleting pass removed, from the snapshot published before it "
        "(kept 7 days), and rebuild their corpora",
    )
    parser.add_argument(
        "--repair-from-snapshot",
        action="store_true",
        help="rebuild a damaged DuckDB file (GRAPHRAG_DB) from the last published snapshot, keeping the damaged one "
        "as <db>.damaged; the next pass redoes what was indexed after that snapshot",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="delete without asking: --remove-corpus, --prune, and any pass deleting more than 5 documents or "
        "most of a corpus asks first (and refuses when it cannot ask)",
    )


def _settings_arguments(parser: argparse.ArgumentParser) -> None:
    """Show the settings instead of indexing."""
    parser.add_argument(
        "--show-settings",
        action="store_true",
        help=(
            "print every setting's effective value and where it came from (default, environment, command line), API "
            "keys redacted; index nothing"
        ),
    )
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="with --show-settings: print the declared settings as the README's markdown table instead",
    )


def _show_settings(args: argparse.Namespace, given: dict[str, str | None]) -> str:
    """What --show-settings prints (the settings were validated before)."""
    from .configuration import INDEX_SETTINGS, SETTINGS, effective_table, markdown_table, resolve

    if args.markdown:
        return markdown_table()
    others = [setting for setting in SETTINGS if setting not in INDEX_SETTINGS]
    return effective_table(resolve(INDEX_SETTINGS, given=given) + resolve(others))


def _job_definitions(settings, started, code_location: CodeLocation):
    # Built only when runs are launched (a no-change pass needs none of their imports).
    definitions = code_location.definitions(settings)
    started()
    return definitions


def _started_up() -> None:
    """The process's long-lived objects exist (modules, the instance, the job definitions):
    move them out of the garbage collector's sight and turn it back on."""
    gc.freeze()
    gc.enable()


def _collector_for_a_command(as_command: bool):
    """Start-up allocates some 400,000 objects that live as long as the process (modules,
    Dagster's definitions and instance): the garbage collector's full passes over them are a
    large part of start-up, and at exit the interpreter's own passes trace everything once
    more after the last run is over. So a command runs its start-up with the collector off,
    freezes what start-up made (``_started_up``), and freezes everything left before the
    interpreter exits, after every file, connection and thread has been closed: exit then
    tears the modules down without tracing them. Called in process (tests, notebooks:
    ``argv`` given), nothing changes."""
    if not as_command:
        return lambda: None
    gc.disable()
    return _started_up


def _confirmation(yes: bool):
    """What asks before a large deletion: --yes agrees; a terminal asks; anything else
    (a script, a pipe) refuses."""

    def confirm(deletion) -> bool:
        from .storage.snapshot import RESTORE_DAYS

        if yes:
            return True
        if not sys.stdin.isatty():
            return False
        print("this pass would delete:", *deletion.lines(), sep="\n")
        answer = input(f"delete them (recoverable with --restore for {RESTORE_DAYS} days)? [y/N] ")
        return answer.strip().lower() in ("y", "yes")

    return confirm


def _ensure_dagster_home() -> Path:
    home = os.environ.get("DAGSTER_HOME")
    if not home:
        home = str(Path("dagster_home").resolve())
        os.environ["DAGSTER_HOME"] = home
    Path(home).mkdir(parents=True, exist_ok=True)
    return Path(home)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# SQLite's words when it cannot write its file (ENOSPC, EFBIG): Dagster's storage under DAGSTER_HOME.
DISK_FULL_MESSAGES = ("disk I/O error", "database or disk is full")


def _stop_at_once_on_signals() -> None:
    """Ctrl-C (SIGINT) and SIGTERM end the command at once, even with a model call in
    flight: its step processes are killed and this one exits, leaving the index as a kill
    does (every answer already received is cached; the next pass takes up the rest). A
    graceful stop would wait for calls that can take minutes on a local server, and while a
    step runs Dagster replaces the signal handlers with its own, which only flag the
    interruption; so the signals also wake a thread of ours (``signal.set_wakeup_fd``
    reports every signal caught, whichever handler catches it)."""
    terminal = os.dup(2)  # the command's stderr: Dagster redirects file 2 while a step runs
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    for number in STOP_SIGNALS:
        signal.signal(number, lambda number, frame: _stop(number, terminal))

    def watch() -> None:
        while caught := os.read(read_end, 64):
            for number in caught:
                if number in STOP_SIGNALS:
                    _stop(number, terminal)

    threading.Thread(target=watch, name="graphrag-index signals", daemon=True).start()


def _stop(number: int, terminal: int) -> None:
    """Say so on ``terminal``, kill the step processes, exit as killed by signal ``number``."""
    import psutil

    os.write(
        terminal,
        f"graphrag-index: stopped by {signal.Signals(number).name}; the answers received are cached and the index "
        "is as a kill leaves it: run again to continue\n".encode(),
    )
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            child.kill()
    os._exit(128 + number)


def main(argv: list[str] | None, code_location: CodeLocation) -> int:
    """``graphrag-index`` running the code location's jobs; ``argv`` None means the command
    line of this process."""
    if argv is None:
        _stop_at_once_on_signals()
    started = _collector_for_a_command(argv is None)
    try:
        return _main(argv, started, code_location)
    finally:
        if argv is None:
            gc.freeze()  # what the run left: the interpreter's exit need not trace it either


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line, refusing options that do not go together."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.markdown and not args.show_settings:
        parser.error("--markdown goes with --show-settings")
    passes = (args.remove_corpus, args.restore, args.repair_from_snapshot, args.prune or args.rebuild or args.dry_run)
    if sum(map(bool, passes)) > 1:
        parser.error(
            "--remove-corpus, --restore, --repair-from-snapshot and indexing (--prune, --rebuild, --dry-run) are "
            "separate passes"
        )
    return args


def _quiet_dagster_warnings() -> None:
    import warnings

    from dagster import BetaWarning, PreviewWarning

    # Single-run backfill policies are "beta" in Dagster 1.13; nothing for a user to act on.
    warnings.filterwarnings("ignore", category=BetaWarning)
    warnings.filterwarnings("ignore", category=PreviewWarning)


def _main(argv: list[str] | None, started, code_location: CodeLocation) -> int:
    args = _arguments(argv)
    # Imported after argument parsing so that --help is instant.
    _quiet_dagster_warnings()
    from .llm.settings import LLMSettings
    from .settings import IndexSettings

    given = {"input_dir": args.input, "db": args.db, "vectors": args.vectors, "corpus": args.corpus}
    try:
        settings = IndexSettings.from_env(**given)
        llm = LLMSettings.from_env()
        location = settings.location()
        shown = _show_settings(args, given) if args.show_settings else None
    except ValueError as error:
        print(f"graphrag-index: invalid setting: {error}", file=sys.stderr)
        return 2
    if shown is not None:
        print(shown)
        return 0
    if args.repair_from_snapshot:
        return _repair_from_snapshot(settings)
    home = _ensure_dagster_home()
    print(
        f"graphrag-index: input {settings.input_dir} -> {location.describe()} (vectors "
        f"{settings.vectors}); DAGSTER_HOME={home}"
    )
    return _index(args, settings, llm, home, started, code_location)


def _repair_from_snapshot(settings) -> int:
    from .storage.snapshot import NothingToRepairFrom, repair_from_snapshot

    try:
        damaged, pointer = repair_from_snapshot(Path(settings.db))
    except NothingToRepairFrom as error:
        print(f"graphrag-index: {error}", file=sys.stderr)
        return 2
    print(
        f"graphrag-index: {settings.db} rebuilt from the snapshot published {pointer['published_at']} "
        f"({pointer['snapshot']}); the damaged file is kept as {damaged}. Run graphrag-index to redo what was "
        "indexed after that snapshot"
    )
    return 0


def _index(args: argparse.Namespace, settings, llm, home: Path, started, code_location: CodeLocation) -> int:
    """Run the pass and print its report, or explain the failure that stopped it (a bad
    input, an unconfirmed deletion, a full disk, a damaged or locked index); the exit code."""
    import sqlite3

    import duckdb
    import sqlalchemy.exc
    from dagster import DagsterInstance

    from .core.inputs import InputError
    from .indexing import DeletionNotConfirmed
    from .storage.connection import initialising
    from .storage.location import BackendUnavailable

    try:
        # Two commands starting on a fresh home would both create its storage (one then fails,
        # or the home is left with two schema versions): the first creates it, the other waits.
        with initialising(home / ".instance-init.lock"):
            instance = DagsterInstance.get()
        with instance:
            if args.dry_run:
                _print_dry_run(args, settings, llm, instance)
                return 0
            report = _run_pass(args, settings, instance, started, code_location)
    except (InputError, BackendUnavailable, ValueError) as error:
        print(f"graphrag-index: {error}", file=sys.stderr)
        return 2
    except DeletionNotConfirmed as error:
        print(f"graphrag-index: {error}", file=sys.stderr)
        return 3
    except (sqlalchemy.exc.OperationalError, sqlite3.OperationalError) as error:
        cause = str(getattr(error, "orig", error))
        if not any(words in cause for words in DISK_FULL_MESSAGES):
            raise
        print(
            f"graphrag-index: cannot write Dagster's run storage under DAGSTER_HOME={home} ({cause}; "
            f"{shutil.disk_usage(home).free // 2**20} MiB free there): the disk is full or a file-size limit was "
            f"reached. Nothing indexed is lost ({settings.location().describe()} is untouched by it): free space "
            "there and run again",
            file=sys.stderr,
        )
        return 1
    except duckdb.Error as error:
        return _explain_index_error(error, settings)
    return _print_report(report, settings, llm)


def _explain_index_error(error, settings) -> int:
    """Say why the index could not be opened, damaged or held by another process, or raise
    what is neither."""
    import duckdb

    from .storage.connection import (
        LOCK_WAIT_VARIABLE,
        is_damaged_file_error,
        is_lock_error,
        lock_holder,
        lock_wait_seconds,
    )
    from .storage.snapshot import pointer_path, read_pointer

    location = settings.location()
    if is_damaged_file_error(error):
        published = read_pointer(location) if location.lake is None else None
        print(
            f"graphrag-index: {location.describe()} is damaged, not a whole DuckDB database ({error}). "
            + (
                f"The last published snapshot is {published['snapshot']} ({published['published_at']}): "
                "graphrag-index --repair-from-snapshot rebuilds the file from it, keeping the damaged one"
                if published
                else f"No snapshot is published ({pointer_path(location)}): move the file away and index again"
            ),
            file=sys.stderr,
        )
        return 2
    if not isinstance(error, duckdb.IOException) or not is_lock_error(error):
        raise error
    print(
        f"graphrag-index: {location.describe()} is held by {lock_holder(error)} (waited "
        f"{lock_wait_seconds():.0f} s, "
        f"{LOCK_WAIT_VARIABLE}); nothing indexed is lost: rerun once it is closed. Readers should use the "
        "published snapshot (graphrag-sql), which never blocks the indexer.",
        file=sys.stderr,
    )
    return 1


def _print_dry_run(args: argparse.Namespace, settings, llm, instance) -> None:
    """What the pass would do and what it would cost, changing nothing."""
    from .indexing import estimate_pending, plan_index
    from .llm.client import EMBEDDING_BATCH_TEXTS

    planned = plan_index(settings, instance, args.rebuild, args.prune, dry_run=True)
    plan = planned.sources
    for line in planned.kept:
        print(line)
    if plan.deleted:
        print(f"would delete: {', '.join(plan.deleted[:20])}" + (" ..." if len(plan.deleted) > 20 else ""))
    estimate = estimate_pending(plan, settings, args.rebuild, dry_run=True)
    for corpus, why in estimate.redone.items():
        print(f"corpus {corpus}: every source extracted again ({why})")
    print(
        f"dry run: {len(plan.added)} new, {len(plan.changed)} changed, {len(plan.deleted)} deleted "
        f"source(s); "
        f"{estimate.text_units} text units ({estimate.text_unit_tokens} tokens) to extract"
    )
    _print_model_calls(estimate, llm)
    for corpus, (why, texts) in estimate.reembedded.items():
        cost = (
            f"about {math.ceil(texts / EMBEDDING_BATCH_TEXTS)} embedding request(s)"
            if llm.embeddings_enabled
            else "offline, no calls"
        )
        print(f"corpus {corpus}: its {texts} text units, entities and reports embedded again ({why}): {cost}")
    for problem in estimate.unreadable:
        print(f"unreadable source: {problem}", file=sys.stderr)


def _print_model_calls(estimate, llm) -> None:
    """The dry run's model calls: extraction, reports and embeddings, or none offline."""
    if llm.enabled:
        print(
            f"LLM extraction: at most {estimate.extraction_calls} calls"
            + (
                f" ({estimate.cached_text_units} text units answered by the cache)"
                if estimate.cached_text_units
                else ""
            )
            + f" and about {estimate.extraction_prompt_tokens} prompt tokens "
            f"with {llm.model_for('extraction')}; summaries and reports follow from the graph found"
        )
        for corpus, communities in estimate.communities.items():
            print(
                f"corpus {corpus} holds {communities} communities now: a report call for each whose "
                f"content changes, and for each new one"
            )
    else:
        print("no LLM configured: offline methods, no LLM calls")
    if llm.embeddings_enabled:
        print(
            f"embeddings: about {estimate.embedding_requests} request(s) for the new text units, then "
            f"entity descriptions and reports as they are written"
        )


def _run_pass(args: argparse.Namespace, settings, instance, started, code_location: CodeLocation):
    """Run the pass asked for (a removal, a restore, or indexing) and return its report."""
    from .indexing import remove_corpus, restore, run_index

    definitions = lambda: _job_definitions(settings, started, code_location)  # noqa: E731
    level = "DEBUG" if args.verbose else "CRITICAL"
    confirm = _confirmation(args.yes)
    graph_job = code_location.graph_job
    if args.remove_corpus:
        return remove_corpus(
            settings,
            instance,
            definitions,
            args.remove_corpus,
            confirm,
            dagster_log_level=level,
            graph_job=graph_job,
        )
    if args.restore:
        return restore(settings, instance, definitions, dagster_log_level=level, graph_job=graph_job)
    return run_index(
        settings,
        instance,
        definitions,
        dagster_log_level=level,
        rebuild=args.rebuild,
        prune=args.prune,
        confirm=confirm,
        graph_job=graph_job,
    )


def _print_report(report, settings, llm) -> int:
    """The pass's summary and its failures; the exit code they make."""
    for corpus, counts in report.rows.items():
        print(f"corpus {corpus}: " + ", ".join(f"{table} {n}" for table, n in counts.items()))
    work = (
        "no work: index is up to date"
        if not report.did_work
        else (f"{len(report.source_runs)} source run(s), {len(report.graph_runs)} graph run(s)")
    )
    methods = (
        f"extraction and reports by {llm.model_for('extraction')}/{llm.model_for('report')}"
        if llm.enabled
        else "offline extraction, extractive reports"
    ) + f", {llm.embedding_model if llm.embeddings_enabled else settings.make_embedder().name} embeddings"
    failed = sum(report.llm_failure_causes.values())
    print(
        f"{work}; {report.seconds:.1f} s; LLM calls: {report.llm_calls}"
        + (f", {failed} failed" if failed else "")
        + f" ({methods})"
    )
    for cause, calls in sorted(report.llm_failure_causes.items(), key=lambda item: (-item[1], item[0])):
        print(f"LLM calls failed: {calls} x {cause}", file=sys.stderr)
    for error in report.source_errors:
        print(f"unreadable source: {error}", file=sys.stderr)
    for document in report.documents_cut:
        print(f"left out of the graph: {document}", file=sys.stderr)
    for error in dict.fromkeys(report.errors):
        print(f"failed: {error}", file=sys.stderr)
    if report.failed_calls:
        calls = ", ".join(f"{stage} {n}" for stage, n in report.failed_calls.items())
        print(
            (
                f"LLM calls that failed after their retries: {calls} (table llm_failures); the next run retries "
                f"exactly "
                f"these"
            ),
            file=sys.stderr,
        )
    if report.failed_runs:
        print(f"failed runs (see the Dagster UI): {', '.join(report.failed_runs)}", file=sys.stderr)
    if report.failed_runs or report.failed_calls:
        return 1
    return 2 if report.source_errors else 0
