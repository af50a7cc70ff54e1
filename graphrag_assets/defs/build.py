"""The indexer's definitions for given settings: its assets, jobs, sensors and resources.
The code location adds the evaluation of each build to them (``graphrag_evaluation``: the
evaluations asset asks its questions through the query side, which the indexer does not
import)."""

from dagster import Definitions, load_assets_from_modules

from ..settings import IndexSettings
from .assets import graph, sources, text_units_and_extractions
from .jobs import build_graph_job, executor_for, index_sources_job
from .resources import EmbeddingResource, IndexDatabase, LLMResource
from .sensors import consistency_sensor, graph_automation_sensor, source_files_sensor


def build_definitions(settings: IndexSettings) -> Definitions:
    return Definitions(
        assets=load_assets_from_modules([sources, text_units_and_extractions, graph]),
        jobs=[index_sources_job, build_graph_job],
        sensors=[source_files_sensor, graph_automation_sensor, consistency_sensor],
        resources={
            "settings": settings,
            "database": IndexDatabase(
                database=settings.db,
                ducklake_catalog=settings.ducklake_catalog,
                ducklake_data_path=settings.ducklake_data_path,
            ),
            "llm": LLMResource(),
            "embedding": EmbeddingResource(),
        },
        # Every run's executor: the jobs', "Materialize all" and automation runs (see jobs.py).
        executor=executor_for(settings.parallel_shards()),
    )
