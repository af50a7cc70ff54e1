"""Where the index lives: DuckDB tables (one owned write path) and LanceDB vectors."""
