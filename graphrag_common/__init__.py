"""Small things both the indexer (graphrag_assets) and the query side (graphrag_query) use:
ids and content hashes, token counting, sentence splitting, and the lexical terms and BM25
that the index stores and the queries search. Imports neither package."""
