"""Dagster entry point (workspace.yaml loads ``defs``); settings come from GRAPHRAG_*."""

from .defs.build import build_definitions
from .settings import IndexSettings

defs = build_definitions(IndexSettings.from_env())
