"""Definitions for given settings (the CLI and tests build their own; the workspace's
``defs`` reads the environment)."""

from dagster import Definitions, in_process_executor, load_assets_from_modules

from ..settings import IndexSettings
from .assets import graph, sources, text_units_and_extractions
from .jobs import build_graph_job, index_sources_job
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
                database=settings.database,
                ducklake_catalog=settings.ducklake_catalog,
                ducklake_data_path=settings.ducklake_data_path,
            ),
            "llm": LLMResource(),
            "embedding": EmbeddingResource(),
        },
        executor=in_process_executor,  # "Materialize all" and automation runs too (see jobs.py)
    )
