"""Other GraphRAG indexes: Microsoft GraphRAG's parquet output in and out of ours."""
