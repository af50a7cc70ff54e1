"""Dagster entry point (workspace.yaml loads ``defs``); settings come from GRAPHRAG_*."""

import warnings

from dagster import BetaWarning

# Dagster 1.13 labels two parameters the graph relies on as beta and warns in every process
# that loads the code location (code server, each run worker): `backfill_policy` (documents'
# single-run backfills, docs/architecture.md) and `use_user_code_server` (the graph
# automation's Python condition, defs/sensors.py). Nothing to act on; other warnings still show.
for _parameter in ("backfill_policy", "use_user_code_server"):
    warnings.filterwarnings("ignore", message=f"Parameter `{_parameter}` of ", category=BetaWarning)

from graphrag_assets.settings import IndexSettings  # noqa: E402

from .build import build_definitions  # noqa: E402 (the warnings are raised while it is imported)

defs = build_definitions(IndexSettings.from_env())
