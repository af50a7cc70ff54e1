"""``graphrag-sql``: SQL over the published snapshot of the index.

The snapshot is the copy of the index that is always readable and never in the indexer's
way: a connection to the live DuckDB file, even read-only, stops the indexer from writing
(it waits, then its run fails and is retried). So SQL users, notebooks and BI tools read
the snapshot: ``graphrag-sql "SELECT ..."``, an interactive prompt, or ``graphrag-sql
--path`` for a tool of their own (``duckdb -readonly "$(graphrag-sql --path)"``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

from graphrag_assets.configuration import value_of
from graphrag_assets.storage.snapshot import read_pointer


class NoSnapshot(LookupError):
    pass


def published_snapshot(database: str | None = None) -> Path:
    """The snapshot readers should open for the index at ``database`` (env GRAPHRAG_DB)."""
    database = database or value_of("GRAPHRAG_DB")
    pointer = read_pointer(database)
    if pointer is None or not Path(pointer["snapshot"]).is_file():
        raise NoSnapshot(f"no published index for {database}: run graphrag-index first (or set GRAPHRAG_DB)")
    return Path(pointer["snapshot"])


def _statements(text: str) -> list[str]:
    return [statement.strip() for statement in text.split(";") if statement.strip()]


def _run(connection: duckdb.DuckDBPyConnection, text: str) -> None:
    for statement in _statements(text):
        relation = connection.sql(statement)
        if relation is not None:
            relation.show(max_width=200, max_rows=200)


def _prompt(connection: duckdb.DuckDBPyConnection, snapshot: Path) -> None:
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
    parser.add_argument("--path", action="store_true", help="print the snapshot's path and exit")
    args = parser.parse_args(argv)
    try:
        snapshot = published_snapshot(args.db)
    except NoSnapshot as error:
        print(f"graphrag-sql: {error}", file=sys.stderr)
        return 2
    if args.path:
        print(snapshot)
        return 0
    with duckdb.connect(str(snapshot), read_only=True) as connection:
        if not args.sql and sys.stdin.isatty():
            _prompt(connection, snapshot)
            return 0
        try:
            _run(connection, " ".join(args.sql) if args.sql else sys.stdin.read())
        except duckdb.Error as error:
            print(f"graphrag-sql: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
