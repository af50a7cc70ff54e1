"""Plain functions over Polars frames: no Dagster, no database, no model calls (the import
contract in pyproject.toml checks it), tested without Dagster. Reading the input files
(inputs.py) and writing the community maps (graph_pictures.py) are its only I/O."""
