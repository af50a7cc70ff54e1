"""Definitions for given settings (the CLI and tests build their own; the workspace's
``defs`` reads the environment)."""

from dagster import Definitions, load_assets_from_modules

from ..settings import IndexSettings
from .assets import evaluations, graph, sources, text_units_and_extractions
from .jobs import build_graph_job, executor_for, index_sources_job
from .resources import EmbeddingResource, IndexDatabase, LLMResource
from .sensors import consistency_sensor, graph_automation_sensor, source_files_sensor


def build_definitions(settings: IndexSettings) -> Definitions:
    return Definitions(
        assets=load_assets_from_modules([sources, text_units_and_extractions, graph, evaluations]),
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


def graph_job_from_the_environment():
    """The graph job for the settings in the environment: what graphrag-index runs when each
    step is a process of its own (``dagster.reconstructable`` needs a module-level function
    every process can call; graphrag-index puts its settings in the environment first,
    ``IndexSettings.environment``)."""
    return build_definitions(IndexSettings.from_env()).resolve_job_def("build_graph")
