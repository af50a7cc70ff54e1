"""The code location's definitions for given settings (graphrag-index and the tests build
their own; the workspace's ``defs`` reads the environment): the indexer's assets, jobs,
sensors and resources with the evaluation of each build, which joins the graph group, so
the graph job runs it before publishing."""

from dagster import Definitions, load_assets_from_modules

from graphrag_assets.defs.build import build_definitions as indexer_definitions
from graphrag_assets.settings import IndexSettings

from . import assets


def build_definitions(settings: IndexSettings) -> Definitions:
    evaluation = Definitions(assets=load_assets_from_modules([assets]))
    return Definitions.merge(indexer_definitions(settings), evaluation)
