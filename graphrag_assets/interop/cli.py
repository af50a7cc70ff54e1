"""``graphrag-import`` and ``graphrag-export``: Microsoft GraphRAG 3.x parquet output in
and out of the index."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def import_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="graphrag-import",
        description=(
            "Load a Microsoft GraphRAG 3.x output folder (parquet) into the index as one corpus, replacing that "
            "corpus, "
            "and publish it."
        ),
    )
    parser.add_argument(
        "folder", help="graphrag's output folder (documents.parquet, text_units.parquet, entities.parquet, ...)"
    )
    parser.add_argument(
        "--corpus", required=True, help="corpus to load it as (its rows of before are replaced; other corpora are kept)"
    )
    parser.add_argument("--db", help="DuckDB file (env GRAPHRAG_DB, default: data/graphrag.duckdb)")
    parser.add_argument("--vectors", help="LanceDB directory (env GRAPHRAG_VECTORS, default: data/lancedb)")
    args = parser.parse_args(argv)

    from ..settings import IndexSettings
    from .loading import import_graphrag

    try:
        settings = IndexSettings.from_env(db=args.db, vectors=args.vectors)
        rows = import_graphrag(Path(args.folder), args.corpus, settings)
    except ValueError as error:  # a bad folder, file, column or setting (GraphragFormatError included)
        print(f"graphrag-import: {error}", file=sys.stderr)
        return 2
    print(f"graphrag-import: {args.folder} -> corpus {args.corpus} in {settings.db}, published")
    print("  " + ", ".join(f"{name} {count}" for name, count in rows.items()))
    return 0


def export_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="graphrag-export",
        description="Write a corpus of the index as a Microsoft GraphRAG 3.x output folder (parquet).",
    )
    parser.add_argument("folder", help="folder to write documents.parquet, text_units.parquet, ... into")
    parser.add_argument("--corpus", required=True)
    parser.add_argument(
        "--db", help="DuckDB index (env GRAPHRAG_DB, default: data/graphrag.duckdb); its published snapshot is read"
    )
    args = parser.parse_args(argv)

    from graphrag_assets.storage.published_tables import IndexNotFound

    from .loading import export_graphrag

    try:
        rows = export_graphrag(args.db, args.corpus, Path(args.folder))
    except IndexNotFound as error:
        print(f"graphrag-export: {error}", file=sys.stderr)
        return 2
    print(f"graphrag-export: corpus {args.corpus} -> {args.folder}")
    print("  " + ", ".join(f"{name} {count}" for name, count in rows.items()))
    return 0
