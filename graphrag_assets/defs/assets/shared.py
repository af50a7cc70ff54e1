"""What the asset steps share: their options (partitions, pool, group, retries), the
rebuild run config, the decision to redo every source, data versions, the retraction of
deleted sources and the rows of failed LLM calls."""

import datetime as dt

import polars as pl
from dagster import AssetExecutionContext, BackfillPolicy, Config, DataVersion, OpExecutionContext
from pydantic import Field

from graphrag_common.ids import content_hash

from ...fingerprints import current_fingerprints, recorded_fingerprints, stage_changes
from ...settings import IndexSettings
from ...storage.duckdb_store import IndexStore
from ...storage.schema import LLM_FAILURE_COLUMNS, SOURCE_READ, TABLES, conform
from ..jobs import STEP_RETRIES
from ..partitions import DUCKDB_POOL, corpus_partitions, source_partitions

SOURCE_ASSET_OPTIONS = dict(
    partitions_def=source_partitions,
    backfill_policy=BackfillPolicy.single_run(),
    pool=DUCKDB_POOL,
    group_name="sources",
    kinds={"duckdb", "polars"},
)


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
GRAPH_ASSET_OPTIONS = dict(
    partitions_def=corpus_partitions, pool=DUCKDB_POOL, group_name="graph", retry_policy=STEP_RETRIES
)


class RebuildConfig(Config):
    """Run config of the assets that keep earlier work (``fingerprints.KEEPS_EARLIER_WORK``)."""

    rebuild: bool = Field(
        default=False,
        description="Redo every source of the corpus instead of keeping what is unchanged (graphrag-index --rebuild).",
    )


# The graph of steps making text_units and extractions, and its step taking their rebuild config
# (defs/assets/text_units_and_extractions.py).
CHUNKING_AND_EXTRACTION = "chunking_and_extraction"
CHUNKING_AND_EXTRACTION_PLAN = "plan_chunking_and_extraction"
REBUILD_FIELDS = {"text_units": "rebuild_chunking", "extractions": "rebuild_extraction"}


def rebuild_run_config(assets: tuple[str, ...]) -> dict:
    """The run config that tells these assets (``fingerprints.KEEPS_EARLIER_WORK``) to redo
    every source of the corpus."""
    ops: dict = {asset: {"config": {"rebuild": True}} for asset in assets if asset not in REBUILD_FIELDS}
    plan = {REBUILD_FIELDS[asset]: True for asset in assets if asset in REBUILD_FIELDS}
    if plan:
        ops[CHUNKING_AND_EXTRACTION] = {"ops": {CHUNKING_AND_EXTRACTION_PLAN: {"config": plan}}}
    return {"ops": ops}


def why_redo_everything(
    context: AssetExecutionContext | OpExecutionContext,
    store: IndexStore,
    settings: IndexSettings,
    stage: str,
    rebuild: bool,
) -> str | None:
    """Why this step redoes every source of its corpus rather than keep earlier work: asked
    to (``rebuild``, its run config), or its stage's fingerprint differs from the last
    build's (``None``: neither). Decided here, not only by graphrag-index, so that a run from
    the UI or automation redoes it too."""
    why = (
        f"{stage} rebuild requested"
        if rebuild
        else stage_changes(recorded_fingerprints(store, context.partition_key), current_fingerprints(settings)).get(
            stage
        )
    )
    if why:
        context.log.info(f"redoing every source of corpus {context.partition_key}: {why}")
    return why


def frame_version(frame: pl.DataFrame, columns: list[str]) -> DataVersion:
    """A data version from the content of the rows (order-independent)."""
    rows = frame.select(columns).sort(columns[0]).write_ndjson() if frame.height else ""
    return DataVersion(content_hash(rows)[:24])


def retract_deleted_sources(
    context: AssetExecutionContext | OpExecutionContext, store: IndexStore, corpus: str
) -> None:
    """Sources whose partition was deleted (by the sensor or a rerun) lose their rows, before
    anything of the corpus is built without them."""
    registered = set(context.instance.get_dynamic_partitions(source_partitions.name))
    indexed = store.read("SELECT DISTINCT source_partition FROM documents WHERE corpus = ?", [corpus])[
        "source_partition"
    ].to_list()
    orphans = [key for key in indexed if key not in registered]
    if orphans:
        store.retract_sources(orphans)
        context.log.info(f"retracted {len(orphans)} deleted source(s): {orphans[:10]}")


def source_rows(docs: pl.DataFrame, text_units: pl.DataFrame | None = None) -> pl.DataFrame:
    """``sources`` rows of the files these documents were read from, status ``read``: with
    ``text_units`` (the files' chunks) their count, else NULL (not chunked yet)."""
    rows = docs.group_by("corpus", "source_partition").agg(
        pl.col("source_path").first(), pl.col("source_hash").first(), pl.col("id").n_unique().alias("documents")
    )
    if text_units is None:
        rows = rows.with_columns(pl.lit(None, pl.Int64).alias("text_units"))
    else:
        counts = text_units.group_by("source_partition").agg(pl.len().alias("text_units"))
        rows = rows.join(counts, on="source_partition", how="left").with_columns(pl.col("text_units").fill_null(0))
    return conform(
        TABLES["sources"],
        rows.with_columns(
            pl.lit(None, pl.String).alias("settings_hash"),
            pl.lit(utc_now()).alias("indexed_at"),
            pl.lit(SOURCE_READ).alias("status"),
        ),
    )


def failure_rows(failures: pl.DataFrame, scope: pl.Expr | str) -> pl.DataFrame:
    """A stage's failed calls (``llm.errors.FAILURE_COLUMNS``) as ``llm_failures`` rows: with
    their scope (what the next build retries: a source, or a corpus's graph stage) and the time."""
    scope_expr = pl.lit(scope) if isinstance(scope, str) else scope
    return failures.with_columns(scope_expr.alias("scope"), pl.lit(utc_now()).alias("recorded_at")).select(
        list(LLM_FAILURE_COLUMNS)
    )
