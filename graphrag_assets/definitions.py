"""Dagster entry point (workspace.yaml loads ``defs``)."""

from dagster import Definitions, load_assets_from_modules

from .defs.assets import graph, sources
from .defs.jobs import build_graph_job, index_sources_job
from .settings import IndexSettings


def build_definitions(settings: IndexSettings) -> Definitions:
    return Definitions(
        assets=load_assets_from_modules([sources, graph]),
        jobs=[index_sources_job, build_graph_job],
        resources={"settings": settings},
    )


defs = build_definitions(IndexSettings.from_env())
