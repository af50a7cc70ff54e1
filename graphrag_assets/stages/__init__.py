"""The stages of a build as plain functions over an open index store (the write path,
storage/duckdb_store.py) and the methods bundle chosen once from the settings
(``methods.methods_for``): no Dagster here. The assets (defs/assets/) are their wiring,
``interop`` and the tests call them directly (``build.build_corpus`` runs them all)."""
