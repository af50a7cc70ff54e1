"""Definitions for given settings (the CLI and tests build their own; the workspace's
``defs`` reads the environment)."""

from dagster import Definitions, load_assets_from_modules

from ..llm.resources import EmbeddingResource, LLMResource
from ..settings import IndexSettings
from .assets import graph, sources
from .jobs import build_graph_job, index_sources_job


def build_definitions(settings: IndexSettings) -> Definitions:
    return Definitions(
        assets=load_assets_from_modules([sources, graph]),
        jobs=[index_sources_job, build_graph_job],
        resources={"settings": settings, "llm": LLMResource(), "embedding": EmbeddingResource()},
    )
