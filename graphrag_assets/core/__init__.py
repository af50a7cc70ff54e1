"""Functional core: pure functions over Polars frames, tested without Dagster."""
