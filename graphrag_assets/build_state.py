"""Whether each corpus's index is done, and the least work that finishes it: the one
definition of done, used by ``graphrag-index`` (indexing.py) and by the consistency
sensor alike, so the CLI and the UI repair the same things the same way."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import polars as pl

from .configuration import value_of
from .core.evaluation import Comparison, build_id, compare
from .fingerprints import (
    KEEPS_EARLIER_WORK,
    STAGES,
    Fingerprint,
    assets_of,
    current_fingerprints,
    dump_fingerprints,
    load_fingerprints,
    stage_changes,
    stages_from,
)
from .settings import IndexSettings
from .storage.duckdb_store import IndexStore, Transaction
from .storage.schema import CORPUS_BUILD_COLUMNS, LLM_FAILURE_COLUMNS
from .storage.snapshot import published_builds

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def build_stamp(built_at: dt.datetime) -> int:
    """A build's stamp: its ``built_at`` in epoch microseconds, as the LanceDB mirror and
    the published snapshot record the build they hold."""
    return (built_at - EPOCH) // dt.timedelta(microseconds=1)


def record_build(
    tx: Transaction, store: IndexStore, corpus: str, fingerprints: dict[str, Fingerprint], built_at: dt.datetime
) -> None:
    """Write the row that says the corpus's build is complete (``corpus_builds``): the
    sources it was built from and every stage's fingerprint, in the caller's transaction,
    so a build killed before it commits has no new row and the next pass redoes what is
    missing."""
    build = pl.DataFrame(
        [
            {
                "corpus": corpus,
                "sources_hash": store.sources_fingerprint(corpus),
                "stage_fingerprints": dump_fingerprints(fingerprints),
                "built_at": built_at,
            }
        ],
        schema=CORPUS_BUILD_COLUMNS,
    )
    tx.replace("corpus_builds", build, [corpus])


def graph_failure_scope(corpus: str, step: str) -> str:
    """The ``llm_failures`` rows a graph step (``summary``, ``report``) replaces."""
    return f"{corpus}#{step}"


def failure_rows(failures: pl.DataFrame, corpus: str, sources: pl.Expr | None = None, step: str = "") -> pl.DataFrame:
    """A stage's failed calls (``llm.errors.FAILURE_COLUMNS``) as ``llm_failures`` rows, with
    what the next build retries: the source each came from (``sources``, an expression over
    the calls' columns), or, without, the graph ``step`` of the corpus; and the time."""
    scope = sources if sources is not None else pl.lit(graph_failure_scope(corpus, step))
    return failures.with_columns(
        scope.alias("scope"),
        pl.lit(dt.datetime.now(dt.UTC)).alias("recorded_at"),
        pl.lit(corpus).alias("corpus"),
        (sources if sources is not None else pl.lit(None, pl.String)).alias("source_partition"),
    ).select(list(LLM_FAILURE_COLUMNS))


def recorded_builds(store: IndexStore) -> dict[str, dict]:
    """corpus -> its last complete build (``corpus_builds`` row, with its ``stamp``)."""
    rows = store.read("SELECT *, epoch_us(built_at) AS stamp FROM corpus_builds")
    return {row["corpus"]: row for row in rows.iter_rows(named=True)}


def last_build(store: IndexStore, corpus: str) -> dict | None:
    """The corpus's last complete build (``corpus_builds`` row, with its ``stamp``), or None."""
    rows = store.read("SELECT *, epoch_us(built_at) AS stamp FROM corpus_builds WHERE corpus = ?", [corpus])
    return rows.row(0, named=True) if rows.height else None


def recorded_fingerprints(store: IndexStore, corpus: str) -> dict[str, Fingerprint]:
    """The fingerprints of the corpus's last complete build (none: no build yet)."""
    build = last_build(store, corpus)
    return load_fingerprints(build["stage_fingerprints"] if build else None)


@dataclass(frozen=True)
class CorpusWork:
    """Why a corpus is not done, the graph assets that finish it (``None``: the whole
    graph job; the cache makes every LLM call already answered free), and those of them
    told to redo every source (their ``rebuild`` run config)."""

    reason: str
    assets: tuple[str, ...] | None = None
    rebuild: tuple[str, ...] = ()


# A build is evaluated (when its corpus has questions) right before it is published.
PUBLISH_ASSETS = ("evaluations", "published_index")
MIRROR_ASSETS = ("embeddings", *PUBLISH_ASSETS)  # vectors come from DuckDB; nothing is embedded again


def why_redo_everything(
    store: IndexStore, settings: IndexSettings, corpus: str, stage: str, rebuild: bool = False
) -> str | None:
    """Why ``stage`` redoes every source of the corpus rather than keep earlier work: asked
    to (``rebuild``), or its fingerprint differs from the last build's (``None``: neither)."""
    if rebuild:
        return f"{stage} rebuild requested"
    return stage_changes(recorded_fingerprints(store, corpus), current_fingerprints(settings)).get(stage)


def graph_assets_from(stage: str) -> tuple[str, ...] | None:
    """The graph job's assets that redo ``stage`` and every stage after it (``None``: the
    whole job; reading is redone by the source runs before it)."""
    if STAGES.index(stage) <= STAGES.index("extraction"):
        return None  # reading runs before; chunking and extraction are the first steps of the whole job
    return assets_of(stages_from(stage)) + PUBLISH_ASSETS


def corpus_work(
    store: IndexStore, settings: IndexSettings, corpora: set[str], rebuild: str | None = None
) -> dict[str, CorpusWork]:
    """The corpora that are not done, and why. Done means: the graph was built from the
    sources of now, by the code and settings of now (every stage's fingerprint), every
    source extracted, no LLM call of its graph stages failed, its vectors mirrored to
    LanceDB and the build published to readers. Each missing piece is repaired by the next
    run, paying only for what is missing: a stage built otherwise is redone with every
    stage after it. ``rebuild`` (a stage) redoes that stage for every source, and forces
    the stages after it to redo everything too."""
    builds = recorded_builds(store)
    failed = dict(
        store.read(
            "SELECT corpus, count(*) AS n FROM llm_failures WHERE source_partition IS NULL GROUP BY corpus"
        ).iter_rows()
    )
    current = current_fingerprints(settings)
    forced = tuple(asset for asset in assets_of(stages_from(rebuild)) if asset in KEEPS_EARLIER_WORK) if rebuild else ()
    vectors = settings.vector_store()
    mirrored, damage = vectors.mirrored_builds(), vectors.damage()
    published = published_builds(settings.location())
    work = {}
    for corpus in corpora:
        build = builds.get(corpus)
        if build is None:
            work[corpus] = CorpusWork("no graph yet")
            continue
        unextracted = store.sources_not_extracted(corpus).height
        redo = list(stage_changes(load_fingerprints(build["stage_fingerprints"]), current).items())
        if rebuild:
            redo.append((rebuild, f"rebuild of {rebuild} requested"))
        if build["sources_hash"] != store.sources_fingerprint(corpus) or unextracted:
            redo.append(
                ("chunking", f"sources changed ({unextracted} to extract)" if unextracted else "sources changed")
            )
        if redo:
            redo.sort(key=lambda change: STAGES.index(change[0]))
            reasons = "; ".join(dict.fromkeys(why for _, why in redo))
            work[corpus] = CorpusWork(reasons, graph_assets_from(redo[0][0]), forced)
        elif failed.get(corpus):
            work[corpus] = CorpusWork(f"retrying {failed[corpus]} failed summary/report call(s)")
        elif mirrored.get(corpus) != build["stamp"]:
            missing = f"vectors damaged ({damage})" if damage else f"vectors missing from {settings.vectors}"
            work[corpus] = CorpusWork(missing, MIRROR_ASSETS)
        elif published.get(corpus) != build["stamp"]:
            work[corpus] = CorpusWork("last build not published", PUBLISH_ASSETS)
    return work


def failed_llm_calls(store: IndexStore, corpora: set[str]) -> dict[str, int]:
    """stage -> calls that failed after their retries, over the given corpora."""
    rows = store.read(
        "SELECT stage, count(*) AS n FROM llm_failures WHERE corpus IN (SELECT unnest(?)) "
        "GROUP BY stage ORDER BY stage",
        [sorted(corpora)],
    )
    return dict(rows.iter_rows())


@dataclass(frozen=True)
class Verdict:
    previous_build: str
    comparison: Comparison


def against_published_build(store: IndexStore, settings: IndexSettings, corpus: str) -> Verdict | None:
    """The corpus's last build (``corpus_builds``) against the build readers have now (the
    published one; before any is, the last evaluated one before it); None when either has
    no evaluation. The evaluations step checks with it, and published_index decides with
    it whether a build that answers worse may be published."""
    build = last_build(store, corpus)
    if build is None:
        return None
    built_at = build["built_at"]
    current = store.read("SELECT * FROM evaluations WHERE build_id = ?", [build_id(corpus, built_at)])
    published = published_builds(settings.location()).get(corpus)
    if current.is_empty():
        return None
    if published is not None and build_id(corpus, published) != build_id(corpus, built_at):
        previous = build_id(corpus, published)
    else:
        earlier = store.read(
            "SELECT build_id FROM evaluations WHERE corpus = ? AND built_at < ? ORDER BY built_at DESC LIMIT 1",
            [corpus, built_at],
        )
        if earlier.is_empty():
            return None
        previous = earlier["build_id"][0]
    before = store.read("SELECT * FROM evaluations WHERE build_id = ?", [previous])
    if before.is_empty():
        return None
    return Verdict(previous, compare(before, current, value_of("GRAPHRAG_EVAL_MAX_DROP")))
