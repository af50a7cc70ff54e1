"""One indexing pass over an input folder, shared by ``graphrag-index`` (and the sensor):
diff the files against the index, retract deleted sources, register new partitions,
materialize the pending source partitions in as few runs as possible, then rebuild the
graph of every corpus whose sources changed, or a stage of it whose code or settings
changed (``corpus_work``)."""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
from dagster import AssetKey, AssetMaterialization, DagsterInstance, Definitions, JobDefinition

from .build_state import CorpusWork, corpus_work, failed_llm_calls, recorded_fingerprints
from .core.content import GRAPH_LIMIT
from .core.inputs import corpus_folders, corpus_of_partition, discover_sources
from .core.source_diff import SourcePlan, needs_confirmation, plan_sources
from .defs.partitions import RANGE_END_TAG, RANGE_START_TAG, contiguous_ranges, corpus_partitions, source_partitions
from .fingerprints import STAGES, current_fingerprints, stage_changes
from .instance.run_launcher import HOST_TAG, this_host
from .settings import IndexSettings
from .storage import lance_mirror
from .storage.duckdb_store import IndexStore
from .storage.schema import SOURCE_FAILED, SOURCE_FOLDER_COLUMNS, SOURCE_READ
from .storage.snapshot import (
    RESTORE_DAYS,
    open_published,
    record_restore_point,
    restore_points,
    save_restore_points,
)

# source_folders.corpus_folder of a source brought back by --restore: no folder holds it,
# so no pass deletes it but --prune and --remove-corpus.
RESTORED_PREFIX = "restored:"

# Runs launched by this process carry these tags, so that a later pass can tell a run
# whose process died (SIGKILL, power loss) from one that is still going.
LAUNCHER_TAG = "graphrag/launcher"
PID_TAG = "graphrag/pid"
SUMMARY_TABLES = [
    "documents",
    "text_units",
    "entities",
    "relationships",
    "communities",
    "community_reports",
    "embeddings",
]


class DeletionNotConfirmed(RuntimeError):
    """A pass would delete more than it deletes unasked; nothing was changed."""

    def __init__(self, deletion: Deletion):
        self.deletion = deletion
        super().__init__(
            "\n".join(
                ["this pass would delete:", *deletion.lines()[:20]]
                + ["nothing was changed: rerun with --yes (run_index(confirm=...)) to delete them"]
            )
        )


@dataclass
class Deletion:
    """The sources a pass deletes, with their documents per corpus and each corpus's total."""

    sources: list[str]
    documents: dict[str, int]
    corpus_documents: dict[str, int]

    @property
    def asks_first(self) -> bool:
        return needs_confirmation(self.documents, self.corpus_documents)

    def lines(self) -> list[str]:
        by_corpus: dict[str, list[str]] = {}
        for key in self.sources:
            by_corpus.setdefault(corpus_of_partition(key), []).append(key)
        return [
            f"corpus {corpus}: {len(keys)} source(s), {self.documents.get(corpus, 0)} of "
            f"{self.corpus_documents.get(corpus, 0)} document(s): {', '.join(keys[:5])}"
            + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
            for corpus, keys in sorted(by_corpus.items())
        ]


def deletion_of(store, sources: list[str]) -> Deletion:
    counts = store.read(
        "SELECT corpus, count(*) FILTER (WHERE source_partition IN (SELECT unnest($1))) AS deleted, count(*) AS total "
        "FROM documents WHERE corpus IN (SELECT DISTINCT split_part(unnest($1), '/', 1)) GROUP BY corpus",
        [sorted(sources)],
    )
    return Deletion(
        sorted(sources),
        {corpus: n for corpus, n, _ in counts.iter_rows() if n},
        {corpus: total for corpus, _, total in counts.iter_rows()},
    )


def refuse(deletion: Deletion) -> bool:
    """The confirmation of a caller that gave none: a large deletion is not done."""
    return False


@dataclass
class IndexReport:
    plan: SourcePlan
    kept: list[str] = field(default_factory=list)  # what the pass left alone, one line per corpus
    restorable_until: str | None = None  # the restore point of the deletions, if any
    restored: list[str] = field(default_factory=list)  # sources brought back by restore()
    corpora_built: list[str] = field(default_factory=list)
    source_runs: list[str] = field(default_factory=list)
    graph_runs: list[str] = field(default_factory=list)
    failed_runs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # why failed runs failed, one line each
    failed_calls: dict[str, int] = field(default_factory=dict)  # stage -> LLM calls that failed after retries
    source_errors: list[str] = field(default_factory=list)
    documents_cut: list[str] = field(default_factory=list)  # left out of the graph past GRAPHRAG_MAX_DOCUMENT_PAIRS
    rows: dict[str, dict[str, int]] = field(default_factory=dict)  # corpus -> table -> rows
    llm_calls: int = 0  # calls made, answered or failed (cache hits are no calls)
    llm_failure_causes: dict[str, int] = field(default_factory=dict)  # why calls failed -> calls
    seconds: float = 0.0

    def count_llm_usage(self, calls: int, causes: dict[str, int]) -> None:
        self.llm_calls += calls
        for cause, count in causes.items():
            self.llm_failure_causes[cause] = self.llm_failure_causes.get(cause, 0) + count

    @property
    def did_work(self) -> bool:
        return bool(self.source_runs or self.graph_runs or self.plan.deleted)


def llm_usage_of(result) -> tuple[int, dict[str, int]]:
    """LLM calls a run made (failed ones included) and its failed calls by cause, from its
    steps' materialization metadata, and the metadata of a step that failed (the LLM
    resource puts the step's usage on its failure). A ranged run repeats a step's
    metadata on every partition and a multi-asset step on every asset, so each step
    counts once."""
    usage = {}
    for event in result.all_events:
        if event.is_step_materialization:
            metadata = event.step_materialization_data.materialization.metadata
        elif event.is_step_failure and event.step_failure_data.user_failure_data is not None:
            metadata = event.step_failure_data.user_failure_data.metadata
        else:
            continue
        if "llm_calls" in metadata:
            causes = metadata.get("llm_failure_causes")
            usage[event.step_key] = (int(metadata["llm_calls"].value), dict(causes.value) if causes else {})
    causes: dict[str, int] = {}
    for _, step_causes in usage.values():
        for cause, count in step_causes.items():
            causes[cause] = causes.get(cause, 0) + count
    return sum(calls for calls, _ in usage.values()), causes


def step_errors(result) -> list[str]:
    """One line per failed step of a run: the innermost error (Dagster wraps what a step
    raised), as "ErrorClass: message"."""
    lines = []
    for event in result.all_events:
        if event.is_step_failure:
            error = event.step_failure_data.error
            while error.cause is not None:
                error = error.cause
            lines.append(f"{error.cls_name}: {error.message.split(': ', 1)[-1].strip()}".splitlines()[0])
    return lines


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def release_dead_runs(instance: DagsterInstance, log: Callable[[str], None]) -> list[str]:
    """Mark runs of a dead graphrag-index process as failed and free their concurrency
    slots: a killed run otherwise keeps the DuckDB pool's only slot forever."""
    from dagster import DagsterRunStatus, RunsFilter

    released = []
    for run in instance.get_runs(
        RunsFilter(
            statuses=[DagsterRunStatus.STARTED, DagsterRunStatus.STARTING], tags={LAUNCHER_TAG: "graphrag-index"}
        )
    ):
        if run.tags.get(HOST_TAG, this_host()) != this_host():
            continue  # a process id of another machine (one Postgres instance, several hosts)
        pid = int(run.tags.get(PID_TAG, "0"))
        if pid and not _process_alive(pid):
            instance.report_run_failed(run)
            instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
            released.append(run.run_id)
            log(f"run {run.run_id} of a dead indexer process (pid {pid}) marked failed; its pool slot is free again")
    return released


@dataclass
class IndexPlan:
    """What a pass will do: the source diff, the corpora it builds and reports on, and what
    it leaves alone (one line per corpus, for the summary)."""

    sources: SourcePlan
    corpora: set[str]
    kept: list[str] = field(default_factory=list)
    # source_folders rows of unchanged files found in another folder than recorded (or
    # never recorded: indexes made before the table).
    folders_moved: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=SOURCE_FOLDER_COLUMNS))


def plan_index(
    settings: IndexSettings,
    instance: DagsterInstance,
    rebuild: str | None = None,
    prune: bool = False,
    dry_run: bool = False,
) -> IndexPlan:
    """What a pass over the input folder would do, without changing anything. A missing
    file is deleted only when its corpus folder is part of this input (``source_diff``);
    ``prune`` makes the index equal this input: every other source and corpus goes.
    Rebuilding the reading stage reads every file again. ``dry_run``: the index is only
    read, and not created when there is none."""
    input_dir = Path(settings.input_dir)
    on_disk = discover_sources(input_dir, settings.forced_corpus())
    folders = corpus_folders(input_dir, settings.forced_corpus())
    real_folders: dict[str, Path] = {}  # resolved once per folder, for this pass only
    hashes = {source.partition_key: source.read_hash(real_folders) for source in on_disk}
    present = {source.corpus for source in on_disk} | ({settings.corpus} if settings.corpus else set())
    # Sources known without a completed index (unreadable files, registered partitions of an
    # interrupted run) have no hash: retried while their file exists, retracted once it is gone.
    with settings.store(look_only=dry_run) as store:  # one opening of the file for both
        store.ensure_schema()
        everywhere = set(store.read("SELECT DISTINCT corpus FROM sources")["corpus"])
        scope = sorted(present | set(folders) | (everywhere if prune else set()))
        indexed = store.read(
            "SELECT s.source_partition, s.source_hash, s.settings_hash, f.corpus_folder FROM sources s "
            "LEFT JOIN source_folders f USING (source_partition) WHERE s.corpus IN (SELECT unnest($1)) "
            "UNION ALL SELECT e.source_partition, NULL, NULL, f.corpus_folder FROM source_errors e "
            "LEFT JOIN source_folders f USING (source_partition) WHERE e.corpus IN (SELECT unnest($1)) "
            "AND e.source_partition NOT IN (SELECT source_partition FROM sources)",
            [scope],
        )
    known = set(indexed["source_partition"])
    registered = [
        key
        for key in instance.get_dynamic_partitions(source_partitions.name)
        if corpus_of_partition(key) in scope and key not in known
    ]
    # A registered partition without rows has nothing to lose: it goes with its file.
    indexed = pl.concat([indexed, pl.DataFrame({"source_partition": registered}).cast(pl.String)], how="diagonal")
    reading = str(current_fingerprints(settings)["reading"])
    plan = plan_sources(
        on_disk, hashes, indexed, reading, read_again=rebuild == "reading", folders=None if prune else folders
    )
    folder_of = dict(zip(indexed["source_partition"], indexed["corpus_folder"], strict=True))
    moved = [
        {"corpus": s.corpus, "source_partition": s.partition_key, "corpus_folder": s.folder}
        for s in plan.unchanged
        if folder_of.get(s.partition_key) != s.folder
    ]
    absent = [f"corpus {corpus}: not in this input, kept" for corpus in sorted(everywhere - set(scope))]
    return IndexPlan(
        plan,
        present | {corpus_of_partition(key) for key in plan.deleted},
        _kept_lines(plan.kept, folder_of) + absent,
        pl.DataFrame(moved, schema=SOURCE_FOLDER_COLUMNS),
    )


def _kept_lines(kept: list[str], folder_of: dict[str, str | None]) -> list[str]:
    """One line per corpus and folder of the sources a pass leaves alone."""
    groups: Counter[tuple[str, str]] = Counter()
    for key in kept:
        folder = folder_of.get(key)
        origin = "restored from a snapshot" if folder and folder.startswith(RESTORED_PREFIX) else f"read from {folder}"
        groups[(corpus_of_partition(key), origin)] += 1
    return [
        f"corpus {corpus}: {n} source(s) {origin}, not in this input, kept (--prune removes them)"
        for (corpus, origin), n in sorted(groups.items())
    ]


@dataclass
class Estimate:
    sources: int = 0
    text_units: int = 0
    text_unit_tokens: int = 0
    extraction_calls: int = 0
    extraction_prompt_tokens: int = 0
    embedding_requests: int = 0  # for the new text units; entity descriptions and reports follow
    communities: dict[str, int] = field(
        default_factory=dict
    )  # corpus -> communities indexed now (corpora with a graph)
    unreadable: list[str] = field(default_factory=list)
    cached_text_units: int = 0  # text units whose extraction the cache answers
    redone: dict[str, str] = field(default_factory=dict)  # corpus -> why all its sources are extracted again
    # corpus -> why everything it holds is embedded again and how many texts that is
    # (its text units, entities and reports), for a corpus not extracted again
    reembedded: dict[str, tuple[str, int]] = field(default_factory=dict)


def estimate_pending(
    plan: SourcePlan, settings: IndexSettings, rebuild: str | None = None, dry_run: bool = False
) -> Estimate:
    """What the next pass will extract and what that costs, before anything is spent: the
    pending sources, and every source of a corpus whose chunking or extraction is redone
    (its settings, model or code changed since the last build, or ``rebuild`` asks), and
    the sources whose extraction failed; their text units and the extraction calls and
    prompt tokens they need. A text unit whose extraction the cache answers costs no call
    (its gleaning passes were cached with it); the others are an upper bound: every
    gleaning pass runs, and with claims on, one claim call per text unit more. Summary and
    report calls depend on the graph the extraction finds; the communities a corpus holds
    now bound the report calls of an update (one per community whose content changes, and
    per new one)."""
    from graphrag_common.tokens import count_tokens

    from .core.chunking import chunk_documents
    from .core.inputs import InputError, read_source
    from .llm.client import EMBEDDING_BATCH_TEXTS, EMBEDDING_BATCH_TOKENS
    from .llm.prompts import load_prompt
    from .llm.settings import LLMSettings
    from .llm_stages.extraction import extraction_cached

    llm = LLMSettings.from_env()
    passes = 1 + llm.gleanings + int(llm.claims) if llm.enabled else 0
    template = count_tokens(load_prompt("extract_graph").text) if llm.enabled else 0
    store = settings.store(look_only=dry_run)
    with store:  # one opening of the file for the estimate
        store.ensure_schema()
        sources, estimate = _sources_to_extract(plan, store, settings, rebuild)
        texts: list[str] = []
        for source in sources:
            try:
                units = chunk_documents(read_source(source, settings.table_columns()), settings.chunking())
            except InputError as error:
                estimate.unreadable.append(str(error))
                continue
            estimate.text_units += units.height
            estimate.text_unit_tokens += int(units["n_tokens"].sum() or 0)
            texts += units["text"].to_list()
        if llm.enabled and texts:

            def cached(keys: list[str]) -> set[str]:
                found = store.read("SELECT DISTINCT key FROM llm_cache WHERE key IN (SELECT unnest(?))", [keys])
                return set(found["key"])

            estimate.cached_text_units = sum(extraction_cached(llm, cached, texts))
        asked = estimate.text_units - estimate.cached_text_units
        estimate.extraction_calls = asked * passes
        estimate.extraction_prompt_tokens = (estimate.text_unit_tokens + template * estimate.text_units) * passes
        if llm.embeddings_enabled and estimate.text_units:
            estimate.embedding_requests = max(
                math.ceil(estimate.text_units / EMBEDDING_BATCH_TEXTS),
                math.ceil(estimate.text_unit_tokens / EMBEDDING_BATCH_TOKENS),
            )
        corpora = sorted({source.corpus for source in sources})
        counts = store.read(
            "SELECT corpus, count(*) AS n FROM communities WHERE corpus IN (SELECT unnest(?)) GROUP BY corpus "
            "ORDER BY corpus",
            [corpora],
        )
    estimate.communities = dict(counts.iter_rows())
    return estimate


def _sources_to_extract(
    plan: SourcePlan, store: IndexStore, settings: IndexSettings, rebuild: str | None
) -> tuple[list, Estimate]:
    """The sources on disk the next pass extracts (as the extraction step decides,
    ``why_redo_everything``) and an estimate naming why whole corpora are redone."""
    current = current_fingerprints(settings)
    estimate = Estimate(sources=len(plan.pending))
    chosen = {source.partition_key: source for source in plan.pending}
    unchanged: dict[str, list] = {}
    for source in plan.unchanged:
        unchanged.setdefault(source.corpus, []).append(source)
    redo_stages = STAGES[: STAGES.index("extraction") + 1]  # reading, chunking, extraction
    for corpus, sources in sorted(unchanged.items()):
        changes = stage_changes(recorded_fingerprints(store, corpus), current)
        why = f"{rebuild} rebuild requested" if rebuild in redo_stages else None
        why = why or next((changes[stage] for stage in redo_stages if stage in changes), None)
        if why is None and "embeddings" in changes:
            texts = store.read(
                "SELECT (SELECT count(*) FROM text_units WHERE corpus = $1) + (SELECT count(*) FROM entities WHERE "
                "corpus = $1) + (SELECT count(*) FROM community_reports WHERE corpus = $1) AS n",
                [corpus],
            )["n"][0]
            estimate.reembedded[corpus] = (changes["embeddings"], int(texts))
        if why is None:
            waiting = store.sources_not_extracted(corpus)
            failed = set(waiting.filter(pl.col("status") == SOURCE_FAILED)["source_partition"])
            sources = [source for source in sources if source.partition_key in failed]
        else:
            estimate.redone[corpus] = why
        chosen |= {source.partition_key: source for source in sources}
    return sorted(chosen.values(), key=lambda source: source.partition_key), estimate


def run_index(
    settings: IndexSettings,
    instance: DagsterInstance,
    definitions: Callable[[], Definitions],
    log: Callable[[str], None] = print,
    dagster_log_level: str = "WARNING",
    rebuild: str | None = None,
    prune: bool = False,
    confirm: Callable[[Deletion], bool] = refuse,
    graph_job: Callable[[], JobDefinition] | None = None,
) -> IndexReport:
    """``definitions`` builds the job definitions, only when there is work to launch (their
    imports take seconds); ``graph_job``, for a corpus with text for several shards, the
    same graph job in each step's process (``_run_in_processes``; without it the graph runs
    in this process). ``rebuild``: a stage (``fingerprints.STAGES``) to redo for every
    source of the corpora, with every stage after it. ``prune``: also delete every source
    and corpus this input does not hold. A deletion larger than ``source_diff`` allows
    unasked goes ahead only if ``confirm`` says so (else DeletionNotConfirmed, nothing
    changed)."""
    started = time.perf_counter()
    store = settings.store()
    planned = plan_index(settings, instance, rebuild, prune)
    plan, corpora = planned.sources, planned.corpora
    report = IndexReport(plan, kept=planned.kept)
    log(
        f"sources: {len(plan.added) + len(plan.changed) + len(plan.unchanged)} on disk in "
        f"{len({s.corpus for s in plan.added + plan.changed + plan.unchanged})} corpus(es); "
        f"{len(plan.added)} new, {len(plan.changed)} changed, {len(plan.deleted)} deleted, {len(plan.unchanged)} "
        f"unchanged"
    )
    for line in planned.kept:
        log(line)
    if plan.deleted:
        deletion = deletion_of(store, plan.deleted)
        if deletion.asks_first and not confirm(deletion):
            raise DeletionNotConfirmed(deletion)
    if planned.folders_moved.height:
        with store.transaction() as tx:  # unchanged files found in another folder than recorded
            tx.replace("source_folders", planned.folders_moved, planned.folders_moved["source_partition"].to_list())
    # With nothing to do the instance is not touched again: a dead run's pool slot is freed
    # by the next pass that launches a run, the only one it could block.
    if plan.pending or plan.deleted or corpus_work(store, settings, corpora, rebuild):
        _launch_runs(settings, instance, definitions, plan, corpora, report, dagster_log_level, rebuild, log, graph_job)
    return _summed_up(settings, report, corpora, started)


def _forget_emptied_corpora(
    settings: IndexSettings, instance: DagsterInstance, corpora: set[str], report: IndexReport
) -> None:
    """A corpus left without sources, once its empty graph is published, is no partition of
    the UI any more (``restore`` and a new file bring it back)."""
    with settings.store() as store:
        remaining = set(store.read("SELECT DISTINCT corpus FROM sources")["corpus"])
    registered = set(instance.get_dynamic_partitions(corpus_partitions.name))
    for corpus in sorted(corpora - remaining):
        if corpus in report.corpora_built and corpus in registered:
            instance.delete_dynamic_partition(corpus_partitions.name, corpus)


def _summed_up(settings: IndexSettings, report: IndexReport, corpora: set[str], started: float) -> IndexReport:
    """The report with the corpora's rows, unreadable sources and failed LLM calls."""
    store = settings.store()
    with store:  # one opening of the file for the summary
        report.failed_calls = failed_llm_calls(store, corpora)
        errors = store.read(
            "SELECT error FROM source_errors WHERE corpus IN (SELECT unnest(?)) ORDER BY source_partition",
            [sorted(corpora)],
        )
        cut = store.read(
            "SELECT w.source_partition, d.title, w.characters, length(d.text) AS length FROM document_wrapping w "
            "JOIN documents d ON d.id = w.document_id WHERE w.kind = ? AND w.corpus IN (SELECT unnest(?)) "
            "ORDER BY 1, 2",
            [GRAPH_LIMIT, sorted(corpora)],
        )
        counts = store.read(
            " UNION ALL ".join(
                f"SELECT corpus, '{table}' AS table_name, count(*) AS n FROM \"{table}\" "
                "WHERE corpus IN (SELECT unnest($1)) GROUP BY corpus"
                for table in SUMMARY_TABLES
            ),
            [sorted(corpora)],
        )
    report.source_errors = errors["error"].to_list()
    report.documents_cut = [
        f"{source}: {title}: its last {left_out:,} of {length:,} characters, past GRAPHRAG_MAX_DOCUMENT_PAIRS "
        f"(chunked and searchable; table document_wrapping, kind {GRAPH_LIMIT})"
        for source, title, left_out, length in cut.iter_rows()
    ]
    found = {(corpus, table): n for corpus, table, n in counts.iter_rows()}
    for corpus in sorted(corpora):
        report.rows[corpus] = {table: int(found.get((corpus, table), 0)) for table in SUMMARY_TABLES}
    report.seconds = time.perf_counter() - started
    return report


def remove_corpus(
    settings: IndexSettings,
    instance: DagsterInstance,
    definitions: Callable[[], Definitions],
    corpus: str,
    confirm: Callable[[Deletion], bool] = refuse,
    log: Callable[[str], None] = print,
    dagster_log_level: str = "WARNING",
    graph_job: Callable[[], JobDefinition] | None = None,
) -> IndexReport:
    """Delete every source of ``corpus`` and publish the index without it, whatever the
    input folder holds; asks ``confirm`` first, always (ValueError naming the corpora
    there are when it has none). ``graph_job``: as for ``run_index``."""
    started = time.perf_counter()
    store = settings.store()
    with store:
        store.ensure_schema()
        corpora = store.read("SELECT DISTINCT corpus FROM sources UNION SELECT DISTINCT corpus FROM source_errors")
        keys = store.read(
            "SELECT source_partition FROM sources WHERE corpus = $1 "
            "UNION SELECT source_partition FROM source_errors WHERE corpus = $1",
            [corpus],
        )["source_partition"].to_list()
    keys = sorted(
        set(keys)
        | {k for k in instance.get_dynamic_partitions(source_partitions.name) if corpus_of_partition(k) == corpus}
    )
    if not keys:
        there = ", ".join(sorted(corpora["corpus"])) or "none"
        raise ValueError(f"--remove-corpus: the index has no corpus {corpus!r} (corpora: {there})")
    deletion = deletion_of(store, keys)
    if not confirm(deletion):
        raise DeletionNotConfirmed(deletion)
    report = IndexReport(SourcePlan(deleted=keys))
    _launch_runs(
        settings, instance, definitions, report.plan, {corpus}, report, dagster_log_level, None, log, graph_job
    )
    return _summed_up(settings, report, {corpus}, started)


def restore(
    settings: IndexSettings,
    instance: DagsterInstance,
    definitions: Callable[[], Definitions],
    log: Callable[[str], None] = print,
    dagster_log_level: str = "WARNING",
    graph_job: Callable[[], JobDefinition] | None = None,
) -> IndexReport:
    """Bring back the sources the latest deleting pass removed, as the snapshot published
    before it held them, and rebuild their corpora (extraction answers come from the LLM
    cache). Restored sources have no file: no pass deletes them again but ``--prune`` and
    ``--remove-corpus``. Sources indexed again since are left as they are now. ValueError
    when there is no restore point. ``graph_job``: as for ``run_index``."""
    started = time.perf_counter()
    location = settings.location()
    points = restore_points(location)
    if not points:
        raise ValueError(
            f"--restore: no restore point for {location.describe()} (a deleting pass keeps one for {RESTORE_DAYS} days)"
        )
    point = points[-1]
    store = settings.store()
    back, sources = _restore_sources(store, point)
    corpora = set(sources["corpus"])
    _register(instance, back, corpora)
    for key in back:  # the UI's partitions of documents show where these rows came from
        instance.report_runless_asset_event(
            AssetMaterialization(
                "documents", partition=key, metadata={"restored_from": point["pointer"]["published_at"]}
            )
        )
    report = IndexReport(SourcePlan())
    log(
        f"restoring {len(back)} source(s) of {', '.join(sorted(corpora)) or 'no corpus'} from the snapshot of "
        f"{point['pointer']['published_at'][:19]}"
    )
    if back:
        lance_mirror.start()
        release_dead_runs(instance, log)
        builds = sorted(corpus_work(store, settings, corpora).items())
        _build_graphs(
            instance,
            definitions(),
            builds,
            _run_config(dagster_log_level),
            _launcher_tags(),
            report,
            log,
            settings,
            graph_job,
        )
    if not report.failed_runs:
        save_restore_points(location, points[:-1])
    report.restored = back
    return _summed_up(settings, report, corpora, started)


def _restore_sources(store: IndexStore, point: dict) -> tuple[list[str], pl.DataFrame]:
    """Write back the documents and sources of the restore ``point`` that are not indexed
    now, as read and not yet extracted, in the folder that names the restore; (their keys,
    their sources rows as the snapshot held them)."""
    with open_published(point["pointer"]) as snapshot:
        held = {
            name: snapshot.execute(
                f"SELECT * FROM {name} WHERE source_partition IN (SELECT unnest(?))", [point["sources"]]
            ).pl()
            for name in ("documents", "sources")
        }
    with store:
        store.ensure_schema()
        indexed_now = set(
            store.read(
                "SELECT source_partition FROM sources WHERE source_partition IN (SELECT unnest(?))", [point["sources"]]
            )["source_partition"]
        )
    back = sorted(set(held["sources"]["source_partition"]) - indexed_now)
    sources = held["sources"].filter(pl.col("source_partition").is_in(back))
    with store.transaction() as tx:
        tx.replace("documents", held["documents"].filter(pl.col("source_partition").is_in(back)), back)
        # Read, not extracted: the corpus's build chunks and extracts them again.
        tx.replace(
            "sources",
            sources.with_columns(
                settings_hash=pl.lit(None, pl.String), text_units=pl.lit(None, pl.Int64), status=pl.lit(SOURCE_READ)
            ),
            back,
        )
        folders = sources.select(
            "corpus", "source_partition", corpus_folder=pl.lit(RESTORED_PREFIX + point["created_at"])
        )
        tx.replace("source_folders", folders, back)
    return back, sources


def _register(instance: DagsterInstance, source_keys: list[str], corpora: set[str]) -> None:
    """Add the source and corpus partitions that are not registered yet (one call each)."""
    registered = set(instance.get_dynamic_partitions(source_partitions.name))
    new_keys = [key for key in source_keys if key not in registered]
    if new_keys:
        instance.add_dynamic_partitions(source_partitions.name, new_keys)
    known_corpora = set(instance.get_dynamic_partitions(corpus_partitions.name))
    if corpora - known_corpora:
        instance.add_dynamic_partitions(corpus_partitions.name, sorted(corpora - known_corpora))


def _launch_runs(
    settings: IndexSettings,
    instance: DagsterInstance,
    definitions: Callable[[], Definitions],
    plan: SourcePlan,
    corpora: set[str],
    report: IndexReport,
    dagster_log_level: str,
    rebuild: str | None,
    log: Callable[[str], None],
    graph_job: Callable[[], JobDefinition] | None,
) -> None:
    """Keep a restore point, retract deleted sources, register new partitions (one call),
    run the pending source partitions, then build every corpus that is not done; the runs
    go to ``report``."""
    # Every pass with work ends in a graph build, which writes the vector mirror.
    lance_mirror.start()
    release_dead_runs(instance, log)
    if plan.deleted:
        point = record_restore_point(settings.location(), plan.deleted, f"{len(plan.deleted)} source(s) deleted")
        if point is not None:
            report.restorable_until = point["expires_at"]
            log(
                f"{len(plan.deleted)} source(s) deleted; graphrag-index --restore brings them back from the snapshot "
                f"published before, until {point['expires_at'][:16]} ({RESTORE_DAYS} days)"
            )
    defs = definitions()
    store = settings.store()
    if plan.deleted:
        store.retract_sources(plan.deleted)
        still_registered = set(instance.get_dynamic_partitions(source_partitions.name))
        for key in plan.deleted:
            if key in still_registered:
                instance.delete_dynamic_partition(source_partitions.name, key)

    _register(instance, [s.partition_key for s in plan.added + plan.changed + plan.unchanged], corpora)

    run_config, launcher = _run_config(dagster_log_level), _launcher_tags()
    pending = {s.partition_key for s in plan.pending}
    if pending:
        ordered = instance.get_dynamic_partitions(source_partitions.name)
        job = defs.resolve_job_def("index_sources")
        for first, last in contiguous_ranges(ordered, pending):
            result = job.execute_in_process(
                instance=instance,
                run_config=run_config,
                tags={RANGE_START_TAG: first, RANGE_END_TAG: last} | launcher,
                raise_on_error=False,
            )
            (report.source_runs if result.success else report.failed_runs).append(result.run_id)
            report.count_llm_usage(*llm_usage_of(result))

    builds = sorted(corpus_work(store, settings, corpora, rebuild).items())
    _build_graphs(instance, defs, builds, run_config, launcher, report, log, settings, graph_job)
    if plan.deleted:
        _forget_emptied_corpora(settings, instance, {corpus_of_partition(key) for key in plan.deleted}, report)


def _run_config(dagster_log_level: str) -> dict:
    # Run events still go to the instance (and the UI); this only quiets the console.
    return {"loggers": {"console": {"config": {"log_level": dagster_log_level}}}}


def _launcher_tags() -> dict[str, str]:
    return {LAUNCHER_TAG: "graphrag-index", PID_TAG: str(os.getpid()), HOST_TAG: this_host()}


def _build_graphs(
    instance: DagsterInstance,
    defs: Definitions,
    builds: list[tuple[str, CorpusWork]],
    run_config: dict,
    launcher: dict[str, str],
    report: IndexReport,
    log: Callable[[str], None],
    settings: IndexSettings,
    graph_job: Callable[[], JobDefinition] | None,
) -> None:
    """One graph run per corpus that is not done, stopping at a refused endpoint."""
    from .defs.assets.shared import rebuild_run_config
    from .llm.errors import EndpointRefused

    for corpus, work in builds:
        steps = "graph build" if work.assets is None else " + ".join(work.assets)
        log(f"corpus {corpus}: {steps} ({work.reason})")
        selection = [AssetKey(name) for name in work.assets] if work.assets else None
        config = run_config | rebuild_run_config(work.rebuild)
        if graph_job and work.assets is None and settings.parallel_shards() > 1 and _worth_shards(settings, corpus):
            log(f"corpus {corpus}: chunking and extraction in up to {settings.parallel_shards()} processes")
            with _run_in_processes(settings, instance, graph_job, config, corpus, launcher, selection) as result:
                success, run_id, calls, errors = _outcome(result)  # read while the result is open
        else:
            result = defs.resolve_job_def("build_graph").execute_in_process(
                instance=instance,
                run_config=config,
                partition_key=corpus,
                tags=launcher,
                raise_on_error=False,
                asset_selection=selection,
            )
            success, run_id, calls, errors = _outcome(result)
        (report.graph_runs if success else report.failed_runs).append(run_id)
        report.count_llm_usage(*calls)
        if success:
            report.corpora_built.append(corpus)
        else:
            report.errors += errors
            if any(error.startswith(EndpointRefused.__name__) for error in report.errors):
                break  # a wrong key, model or address fails every corpus alike


def _outcome(result) -> tuple[bool, str, tuple[int, dict[str, int]], list[str]]:
    """A graph run's success, id, LLM calls (``llm_usage_of``) and step errors."""
    return result.success, result.run_id, llm_usage_of(result), step_errors(result)


def _worth_shards(settings: IndexSettings, corpus: str) -> bool:
    """Whether the corpus has enough to chunk or extract for more than one shard (the plan
    step decides the shards; this only chooses the processes to run them in)."""
    pending = settings.store().read(
        "SELECT coalesce(sum(length(d.text)), 0) AS characters FROM documents d "
        "LEFT JOIN sources s ON s.source_partition = d.source_partition "
        "WHERE d.corpus = ? AND coalesce(s.status, 'read') != 'extracted'",
        [corpus],
    )["characters"][0]
    return settings.shards_for(int(pending)) > 1


def _run_in_processes(
    settings: IndexSettings,
    instance: DagsterInstance,
    graph_job: Callable[[], JobDefinition],
    run_config: dict,
    corpus: str,
    tags: dict[str, str],
    selection: list[AssetKey] | None,
):
    """A graph run with the multiprocess executor: each step a process that loads the code
    location's graph job with these settings, from the environment (``graph_job``, a
    module-level function that ``dagster.reconstructable`` names to the processes)."""
    from dagster import execute_job, reconstructable

    from .defs.jobs import multiprocess_config

    saved = dict(os.environ)
    os.environ.update(settings.environment())
    try:
        return execute_job(
            reconstructable(graph_job),
            instance=instance,
            run_config=run_config
            | {"execution": {"config": {"multiprocess": multiprocess_config(settings.parallel_shards())}}},
            tags=tags | {"dagster/partition": corpus},
            raise_on_error=False,
            asset_selection=selection,
        )
    finally:
        os.environ.clear()
        os.environ.update(saved)
