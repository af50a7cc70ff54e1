"""Published read-only snapshots of the index.

DuckDB admits one writer process, and while it writes no other process can even open
the file read-only. So after each successful graph build the index is copied to a
snapshot file and a small pointer (``<db>.published.json``) is swapped atomically to
it, together with the LanceDB table versions of that moment. Readers
(``graphrag_query``) open the snapshot the pointer names: they never wait for the
indexer, never block it, and never see a half-written index.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import duckdb

from ..core.embedding import EMBEDDING_KINDS

KEEP_SNAPSHOTS = 3


def pointer_path(database: str | Path) -> Path:
    database = Path(database)
    return database.with_name(database.name + ".published.json")


def query_calls_path(database: str | Path) -> Path:
    """The file queries append their LLM calls to (JSON lines): beside the index, since a
    query reads a read-only snapshot and must never hold the index file itself."""
    database = Path(database)
    return database.with_name(database.name + ".query_calls.jsonl")


def snapshot_dir(database: str | Path) -> Path:
    database = Path(database)
    return database.parent / f".{database.stem}.snapshots"


def lancedb_versions(vectors: str | Path) -> dict[str, int]:
    import lancedb

    db = lancedb.connect(str(vectors))
    names = set(db.list_tables().tables)
    return {kind: db.open_table(kind).version for kind in EMBEDDING_KINDS if kind in names}


def publish_snapshot(database: str | Path, vectors: str | Path, corpus: str) -> dict:
    """Copy the (closed, checkpointed) index to a new snapshot, add the views for SQL users,
    and point readers at it."""
    database = Path(database)
    with duckdb.connect(str(database)) as connection:
        connection.execute("CHECKPOINT")
    folder = snapshot_dir(database)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC)
    target = folder / f"{database.stem}.{stamp.strftime('%Y%m%dT%H%M%S%f')}.duckdb"
    partial = target.with_suffix(".partial")
    shutil.copyfile(database, partial)
    # Comments, views and macros for SQL users go into the copy, from the code publishing it
    # (see storage/views.py); closing the connection checkpoints them into the file. Imported
    # here: readers import this module for read_pointer, and the views' schema code would
    # add to every query's start-up.
    from .views import describe_for_sql_users

    # The view of query calls reads this file: it exists before the first query writes to it.
    query_calls = query_calls_path(database)
    query_calls.touch()
    with duckdb.connect(str(partial)) as snapshot:
        describe_for_sql_users(snapshot, str(query_calls.resolve()))
    os.replace(partial, target)
    pointer = {
        "snapshot": str(target.resolve()),
        "published_at": stamp.isoformat(),
        "corpus": corpus,
        "lancedb": str(Path(vectors).resolve()),
        "lancedb_versions": lancedb_versions(vectors),
    }
    staged = pointer_path(database).with_suffix(".tmp")
    staged.write_text(json.dumps(pointer, indent=2))
    os.replace(staged, pointer_path(database))
    # Older snapshots go; a reader that still has one open keeps its file handle (POSIX).
    for old in sorted(folder.glob(f"{database.stem}.*.duckdb"))[:-KEEP_SNAPSHOTS]:
        old.unlink(missing_ok=True)
    return pointer


def read_pointer(database: str | Path) -> dict | None:
    path = pointer_path(database)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None


def published_builds(database: str | Path) -> dict[str, int]:
    """corpus -> the build (``corpus_builds.built_at``, epoch microseconds) each corpus has
    in the published snapshot; empty when nothing is published or the snapshot is gone."""
    pointer = read_pointer(database)
    if pointer is None or not Path(pointer["snapshot"]).is_file():
        return {}
    with duckdb.connect(pointer["snapshot"], read_only=True) as connection:
        try:
            return dict(connection.execute("SELECT corpus, epoch_us(built_at) FROM corpus_builds").fetchall())
        except duckdb.CatalogException:
            return {}
