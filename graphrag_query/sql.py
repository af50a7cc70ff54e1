"""``graphrag-sql``: SQL over the published snapshot of the index.

The snapshot is the copy of the index that is always readable and never in the indexer's
way: a connection to the live DuckDB file, even read-only, stops the indexer from writing
(it waits, then its run fails and is retried). So SQL users, notebooks and BI tools read
the snapshot: ``graphrag-sql "SELECT ..."``, an interactive prompt, or ``graphrag-sql
--path`` for a tool of their own (``duckdb -readonly "$(graphrag-sql --path)"``). On the
DuckLake backend the snapshot is a version of the lake, and ``--path`` prints the
``ATTACH`` statement that opens it in any DuckDB client with the ducklake extension.
"""

from __future__ import annotations

import argparse
import sys

import duckdb

from graphrag_assets.storage.location import configured_location
from graphrag_assets.storage.snapshot import (
    PublishedElsewhere,
    open_published,
    pointer_for_readers,
    published_description,
    published_exists,
)


class NoSnapshot(LookupError):
    pass


def published_pointer(database: str | None = None) -> dict:
    """The published snapshot readers should open for the index at ``database`` (env GRAPHRAG_DB)."""
    location = configured_location(database)
    try:
        pointer = pointer_for_readers(location)
    except PublishedElsewhere as error:
        raise NoSnapshot(str(error)) from None
    if not published_exists(pointer):
        raise NoSnapshot(f"no published index for {location.describe()}: run graphrag-index first (or set GRAPHRAG_DB)")
    return pointer


def snapshot_path(pointer: dict) -> str:
    """What another DuckDB client opens: the snapshot file, or the lake's ATTACH statement."""
    if pointer.get("backend") == "ducklake":
        return (
            f"ATTACH 'ducklake:{pointer['catalog']}' AS graphrag "
            f"(READ_ONLY, SNAPSHOT_VERSION {pointer['snapshot_version']}); USE graphrag;"
        )
    return pointer["snapshot"]


def _without_file_access(connection: duckdb.DuckDBPyConnection, pointer: dict) -> None:
    """No reading or writing of files other than the index: ``COPY ... TO``, ``read_csv`` and
    ``ATTACH`` of any path fail. A lake keeps its own data folder readable. This cannot be
    undone on the connection, so a statement cannot turn it back on."""
    if pointer.get("backend") == "ducklake":
        connection.execute("SET allowed_directories = [?]", [pointer["data_path"]])
    connection.execute("SET enable_external_access = false")


def _run(connection: duckdb.DuckDBPyConnection, text: str) -> None:
    # DuckDB's own parser splits the text, so a ';' inside a string or identifier stays in it.
    for statement in duckdb.extract_statements(text):
        relation = connection.sql(statement.query)
        if relation is not None:
            relation.show(max_width=200, max_rows=200)


def _prompt(connection: duckdb.DuckDBPyConnection, snapshot: str) -> None:
    print(f"graphrag-sql: {snapshot} (read-only; end statements with ';', quit with Ctrl-D)")
    pending = ""
    while True:
        try:
            line = input("sql> " if not pending else "...> ")
        except EOFError:
            print()
            return
        pending += line + "\n"
        if pending.rstrip().endswith(";"):
            try:
                _run(connection, pending)
            except duckdb.Error as error:
                print(error, file=sys.stderr)
            pending = ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="graphrag-sql", description="SQL over the published snapshot of the index (read-only)."
    )
    parser.add_argument("sql", nargs="*", help="statements to run (none: read them from stdin, or prompt)")
    parser.add_argument("--db", help="DuckDB index (env GRAPHRAG_DB, default data/graphrag.duckdb)")
    parser.add_argument(
        "--path", action="store_true", help="print the snapshot's path (DuckLake: its ATTACH statement) and exit"
    )
    parser.add_argument(
        "--allow-file-access",
        action="store_true",
        help="let statements read and write other files (COPY ... TO, read_csv, ATTACH); off by default",
    )
    args = parser.parse_args(argv)
    try:
        pointer = published_pointer(args.db)
    except NoSnapshot as error:
        print(f"graphrag-sql: {error}", file=sys.stderr)
        return 2
    if args.path:
        print(snapshot_path(pointer))
        return 0
    with open_published(pointer) as connection:
        if not args.allow_file_access:
            _without_file_access(connection, pointer)
        if not args.sql and sys.stdin.isatty():
            _prompt(connection, published_description(pointer))
            return 0
        try:
            _run(connection, " ".join(args.sql) if args.sql else sys.stdin.read())
        except duckdb.Error as error:
            print(f"graphrag-sql: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
