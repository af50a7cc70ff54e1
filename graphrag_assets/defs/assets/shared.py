"""What the asset steps share: their options (partitions, pool, group, retries), the
rebuild run config, the decision to redo every source, data versions, the retraction of
deleted sources and the rows of failed LLM calls."""

import polars as pl
from dagster import AssetExecutionContext, BackfillPolicy, Config, DataVersion, OpExecutionContext
from pydantic import Field

from graphrag_common.ids import content_hash

from ...build_state import why_redo_everything as redo_reason
from ...settings import IndexSettings
from ...stages.methods import Methods, methods_for
from ...storage.duckdb_store import IndexStore
from ..jobs import STEP_RETRIES
from ..partitions import DUCKDB_POOL, corpus_partitions, source_partitions
from ..resources import LLMResource

SOURCE_ASSET_OPTIONS = dict(
    partitions_def=source_partitions,
    backfill_policy=BackfillPolicy.single_run(),
    pool=DUCKDB_POOL,
    group_name="sources",
    kinds={"duckdb", "polars"},
)


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
    why = redo_reason(store, settings, context.partition_key, stage, rebuild)
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


def methods_of(
    context: AssetExecutionContext | OpExecutionContext, settings: IndexSettings, llm: LLMResource
) -> Methods:
    """The methods the settings choose (offline or model), their calls recorded for this run."""
    return methods_for(
        settings, llm.get_settings(), lambda store, corpus: llm.session(store, corpus, context.run.run_id)
    )
