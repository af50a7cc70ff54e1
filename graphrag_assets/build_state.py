"""Whether each corpus's index is done, and the least work that finishes it: the one
definition of done, used by ``graphrag-index`` (indexing.py) and by the consistency
sensor alike, so the CLI and the UI repair the same things the same way."""

from __future__ import annotations

from dataclasses import dataclass

from .fingerprints import (
    KEEPS_EARLIER_WORK,
    STAGES,
    assets_of,
    current_fingerprints,
    load_fingerprints,
    stage_changes,
    stages_from,
)
from .settings import IndexSettings
from .storage.duckdb_store import IndexStore
from .storage.snapshot import published_builds


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
# llm_failures scopes of graph stages: "<corpus>#summary", "<corpus>#report".
GRAPH_FAILURE_SCOPE = r"#(summary|report)$"


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
    builds = {
        row["corpus"]: row
        for row in store.read("SELECT *, epoch_us(built_at) AS stamp FROM corpus_builds").iter_rows(named=True)
    }
    failed = dict(
        store.read(
            "SELECT regexp_replace(scope, ?, '') AS corpus, count(*) AS n FROM llm_failures "
            "WHERE regexp_matches(scope, ?) GROUP BY ALL",
            [GRAPH_FAILURE_SCOPE, GRAPH_FAILURE_SCOPE],
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
        "SELECT stage, count(*) AS n FROM llm_failures "
        "WHERE (CASE WHEN regexp_matches(scope, $2) THEN regexp_replace(scope, $2, '') "
        "ELSE split_part(scope, '/', 1) END) IN (SELECT unnest($1)) GROUP BY stage ORDER BY stage",
        [sorted(corpora), GRAPH_FAILURE_SCOPE],
    )
    return dict(rows.iter_rows())
