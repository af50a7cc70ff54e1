"""Published read-only snapshots of the index.

DuckDB admits one writer process, and while it writes no other process can even open
the file read-only. So after each successful graph build the index is copied to a
snapshot file and a small pointer (``<db>.published.json``) is swapped atomically to
it, together with the LanceDB table versions of that moment. Readers
(``graphrag_query``) open the snapshot the pointer names: they never wait for the
indexer, never block it, and never see a half-written index.

A DuckLake keeps every commit as a snapshot of its own, and its data files never change
once written, so publishing copies no data: the pointer records the lake's snapshot
version, and readers attach the catalog read-only as of that version (time travel). A
PostgreSQL or SQLite catalog is read where it is, beside the writers; a DuckDB catalog
file is held by its writer like the DuckDB index, so its copy (metadata only, not the
data) is what readers open. The lake keeps the snapshots of the last published versions
and expires the older ones, with the files only they still used.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb

from graphrag_common.ids import content_hash

from .location import LAKE_ALIAS, DuckLake, IndexLocation, current_snapshot, open_lake_snapshot
from .vector_store import VectorStore

KEEP_SNAPSHOTS = 3
RESTORE_DAYS = 7
log = logging.getLogger(__name__)


class PublishedElsewhere(LookupError):
    """The settings name a store that has not published, beside one that has: the message
    names both."""


def _location(location: IndexLocation | str | Path) -> IndexLocation:
    return location if isinstance(location, IndexLocation) else IndexLocation(str(location))


def pointer_path(location: IndexLocation | str | Path) -> Path:
    """The published pointer of the index at ``location`` (a path: the DuckDB file)."""
    location = _location(location)
    database = Path(location.database)
    if location.lake is None:
        return database.with_name(database.name + ".published.json")
    tag = content_hash(location.lake.catalog_for_readers())[:12]
    return database.with_name(f"{database.name}.ducklake-{tag}.published.json")


def restore_points_path(location: IndexLocation | str | Path) -> Path:
    pointer = pointer_path(location)
    return pointer.with_name(pointer.name.replace(".published.json", ".restore.json"))


def restore_points(location: IndexLocation | str | Path) -> list[dict]:
    """The restore points younger than ``RESTORE_DAYS``, oldest first: each the pointer of
    the snapshot published before a deleting pass, the sources it deleted, and when."""
    try:
        points = json.loads(restore_points_path(location).read_text())
    except FileNotFoundError:
        return []
    now = dt.datetime.now(dt.UTC).isoformat()
    return [point for point in points if point["expires_at"] > now]


def save_restore_points(location: IndexLocation | str | Path, points: list[dict]) -> None:
    path = restore_points_path(location)
    staged = path.with_suffix(".tmp")
    staged.write_text(json.dumps(points, indent=2))
    os.replace(staged, path)


def record_restore_point(location: IndexLocation | str | Path, sources: list[str], reason: str) -> dict | None:
    """Keep the snapshot published now for ``RESTORE_DAYS``, as the way back from deleting
    ``sources``; None when nothing was published yet (nothing to restore from)."""
    pointer = read_pointer(location)
    if not published_exists(pointer):
        return None
    created = dt.datetime.now(dt.UTC)
    point = {
        "created_at": created.isoformat(),
        "expires_at": (created + dt.timedelta(days=RESTORE_DAYS)).isoformat(),
        "reason": reason,
        "sources": sorted(sources),
        "pointer": pointer,
    }
    save_restore_points(location, restore_points(location) + [point])
    return point


def query_calls_path(database: str | Path) -> Path:
    """The file queries append their LLM calls to (JSON lines): beside the index, since a
    query reads a read-only snapshot and must never hold the index file itself."""
    database = Path(database)
    return database.with_name(database.name + ".query_calls.jsonl")


def snapshot_dir(database: str | Path) -> Path:
    database = Path(database)
    return database.parent / f".{database.stem}.snapshots"


def publish_snapshot(location: IndexLocation | str | Path, vectors: str | Path, corpus: str) -> dict:
    """Publish the index as it is now (closed by its writer): a copy of the DuckDB file, or
    the DuckLake's current snapshot, with the views for SQL users; then point readers at it."""
    location = location if isinstance(location, IndexLocation) else IndexLocation(str(location))
    database = Path(location.database)
    # The view of query calls reads this file: it exists before the first query writes to it.
    query_calls = query_calls_path(database)
    query_calls.parent.mkdir(parents=True, exist_ok=True)
    query_calls.touch()
    stamp = dt.datetime.now(dt.UTC)
    if location.lake is None:
        published = {"backend": "duckdb"} | _copy_of_the_file(database, stamp, query_calls)
    else:
        published = _lake_snapshot(location, stamp, query_calls)
    pointer = published | {
        "written_by": location.describe(),
        "published_at": stamp.isoformat(),
        "corpus": corpus,
        "lancedb": str(Path(vectors).resolve()),
        "lancedb_versions": VectorStore(vectors).table_versions(),
    }
    staged = pointer_path(location).with_suffix(".tmp")
    staged.write_text(json.dumps(pointer, indent=2))
    os.replace(staged, pointer_path(location))
    # Older snapshots go, but those of restore points; a reader that still has one open keeps
    # its file handle (POSIX).
    folder = snapshot_dir(database)
    pinned = {point["pointer"].get("snapshot") for point in restore_points(location)}
    for suffix in ("duckdb", "ducklake"):
        for old in sorted(folder.glob(f"{database.stem}.*.{suffix}"))[:-KEEP_SNAPSHOTS]:
            if str(old.resolve()) not in pinned:
                old.unlink(missing_ok=True)
    return pointer


def _snapshot_file(database: Path, stamp: dt.datetime, suffix: str) -> Path:
    folder = snapshot_dir(database)
    folder.mkdir(parents=True, exist_ok=True)
    # Copies a publish that died (a kill, a full disk) left half made: each is as large as the
    # index, and only the one writer of the index makes them, so none is still being written.
    for partial in folder.glob(f"{database.stem}.*.partial"):
        partial.unlink(missing_ok=True)
    return folder / f"{database.stem}.{stamp.strftime('%Y%m%dT%H%M%S%f')}.{suffix}"


def _staged_copy(target: Path, copy: Callable[[Path], None]) -> None:
    """``copy(partial)`` writes the copy beside ``target``, which it then becomes; a copy that
    fails (a full disk) is removed at once rather than left to fill the disk."""
    partial = target.with_suffix(".partial")
    try:
        copy(partial)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)


def _checkpointed_copy(database: Path, target: Path) -> None:
    """Copy the DuckDB file, closed by its writer, with everything its WAL holds."""
    with duckdb.connect(str(database)) as connection:
        connection.execute("CHECKPOINT")
    shutil.copyfile(database, target)


def _copy_of_the_file(database: Path, stamp: dt.datetime, query_calls: Path) -> dict:
    # Comments, views and macros for SQL users go into the copy, from the code publishing it
    # (see storage/views.py); closing the connection checkpoints them into the file. Imported
    # here: readers import this module for read_pointer, and the views' schema code would
    # add to every query's start-up.
    from .views import describe_for_sql_users

    def copy(partial: Path) -> None:
        _checkpointed_copy(database, partial)
        with duckdb.connect(str(partial)) as snapshot:
            describe_for_sql_users(snapshot, str(query_calls.resolve()))

    target = _snapshot_file(database, stamp, "duckdb")
    _staged_copy(target, copy)
    return {"snapshot": str(target.resolve())}


def copy_for_evaluation(database: Path, folder: Path) -> Path:
    """A copy of the DuckDB index as it is now (closed by its writer), in ``folder``, for
    readers to ask before the build is published: beside it no pointer, so a reader opens
    the copy itself."""
    target = folder / database.name
    _checkpointed_copy(database, target)
    return target


def _lake_snapshot(location: IndexLocation, stamp: dt.datetime, query_calls: Path) -> dict:
    from .views import describe_for_sql_users

    lake = location.lake
    previous = read_pointer(location) or {}
    pinned = [point["pointer"]["snapshot_version"] for point in restore_points(location)]
    with location.connect() as connection:
        # In the lake itself: a reader of this version finds them, a reader of an older one its own.
        describe_for_sql_users(connection, str(query_calls.resolve()), in_lake=True)
        version = current_snapshot(connection)
        kept = sorted({*previous.get("kept_versions", []), version})[-KEEP_SNAPSHOTS:]
        _expire_snapshots_before(connection, min([kept[0], *pinned]))
    published = {
        "backend": "ducklake",
        "catalog": lake.catalog_for_readers(),
        "data_path": lake.data_path,
        "snapshot_version": version,
        "kept_versions": kept,
    }
    if lake.kind != "duckdb":
        return published
    # The writer holds a DuckDB catalog file as it holds a DuckDB index: readers get a copy of
    # the catalog (metadata and rows small enough to be kept inline; the data files are shared).
    target = _snapshot_file(Path(location.database), stamp, "ducklake")
    _staged_copy(target, lambda partial: shutil.copyfile(lake.catalog, partial))
    return published | {"catalog": str(target.resolve()), "snapshot": str(target.resolve())}


def _expire_snapshots_before(connection: duckdb.DuckDBPyConnection, version: int) -> None:
    """Forget the lake's snapshots older than ``version`` and delete the data files only
    they used (the snapshots readers may still open are kept)."""
    expired = [
        row[0]
        for row in connection.execute(
            f"SELECT snapshot_id FROM {LAKE_ALIAS}.snapshots() WHERE snapshot_id < ?", [version]
        ).fetchall()
    ]
    if expired:
        connection.execute(f"CALL ducklake_expire_snapshots('{LAKE_ALIAS}', versions => ?)", [expired])
    connection.execute(f"CALL ducklake_cleanup_old_files('{LAKE_ALIAS}', cleanup_all => true)")


def open_published(pointer: dict) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the published snapshot the pointer names."""
    if pointer.get("backend") == "ducklake":
        return open_lake_snapshot(DuckLake(pointer["catalog"], pointer["data_path"]), pointer["snapshot_version"])
    return duckdb.connect(pointer["snapshot"], read_only=True)


def published_description(pointer: dict) -> str:
    """The published snapshot, for messages: its file, or the lake's catalog and version."""
    if pointer.get("backend") == "ducklake":
        return f"DuckLake {pointer['catalog']} at snapshot version {pointer['snapshot_version']}"
    return pointer["snapshot"]


def published_exists(pointer: dict | None) -> bool:
    """Whether the snapshot the pointer names can still be opened (its file is there)."""
    if pointer is None:
        return False
    if pointer.get("backend") == "ducklake" and pointer.get("snapshot") is None:
        return True  # a catalog server's snapshot: found when opened
    return Path(pointer["snapshot"]).is_file()


def read_pointer(location: IndexLocation | str | Path) -> dict | None:
    path = pointer_path(location)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _repaired_pointer(_location(location), path)


def _repaired_pointer(location: IndexLocation, path: Path) -> dict | None:
    """A pointer that is not valid JSON (a disk that filled, an editor) is kept aside as
    ``<pointer>.damaged`` and replaced by one naming the newest snapshot that opens, so readers
    keep a published index. None when no snapshot opens (a DuckLake's pointer too: its
    version is in no file): the next pass publishes again."""
    damaged = path.with_name(path.name + ".damaged")
    os.replace(path, damaged)
    database = Path(location.database)
    snapshots = [] if location.lake else sorted(snapshot_dir(database).glob(f"{database.stem}.*.duckdb"))
    for snapshot in reversed(snapshots):
        try:
            with duckdb.connect(str(snapshot), read_only=True) as connection:
                connection.execute("SELECT count(*) FROM corpus_builds").fetchone()
        except duckdb.Error:
            continue
        pointer = {
            "backend": "duckdb",
            "snapshot": str(snapshot.resolve()),
            "written_by": location.describe(),
            "published_at": dt.datetime.fromtimestamp(snapshot.stat().st_mtime, dt.UTC).isoformat(),
            "repaired_from": str(damaged),
            "lancedb_versions": {},
        }
        staged = path.with_suffix(".tmp")
        staged.write_text(json.dumps(pointer, indent=2))
        os.replace(staged, path)
        log.warning(f"{path} was not valid JSON (kept as {damaged}): it names the newest snapshot again, {snapshot}")
        return pointer
    log.warning(f"{path} was not valid JSON (kept as {damaged}) and no snapshot opens: the next pass publishes again")
    return None


def pointer_for_readers(location: IndexLocation) -> dict | None:
    """The published pointer of the store the settings name, None when it has none. Raises
    PublishedElsewhere, naming both stores, when the pointer was written by another backend
    or when only another store beside it has published."""
    pointer = read_pointer(location)
    mine = location.describe()
    if pointer is not None:
        theirs = pointer.get("written_by") or (
            f"DuckLake {pointer['catalog']}" if pointer.get("backend") == "ducklake" else location.database
        )
        # The pointer's name is the store's own; another backend's pointer there is one an
        # older version wrote (it shared one pointer between backends).
        if pointer.get("backend", "duckdb") != ("ducklake" if location.lake else "duckdb"):
            raise PublishedElsewhere(
                f"the settings name {mine}, but {pointer_path(location)} was published by {theirs}: run "
                f"graphrag-index with these settings to publish {mine}, or change GRAPHRAG_DB / "
                "GRAPHRAG_DUCKLAKE_CATALOG to read the other"
            )
        return pointer
    database = Path(location.database)
    others = sorted(set(database.parent.glob(f"{database.name}*.published.json")) - {pointer_path(location)})
    for other in others:
        theirs = json.loads(other.read_text()).get("written_by", str(other))
        raise PublishedElsewhere(
            f"nothing is published for {mine}; {theirs} is (pointer {other}): set GRAPHRAG_DB / "
            "GRAPHRAG_DUCKLAKE_CATALOG as the indexer had them to read it, or run graphrag-index with these settings"
        )
    return None


def published_builds(location: IndexLocation | str | Path) -> dict[str, int]:
    """corpus -> the build (``corpus_builds.built_at``, epoch microseconds) each corpus has
    in the published snapshot; empty when nothing is published or the snapshot is gone."""
    pointer = read_pointer(location)
    if not published_exists(pointer):
        return {}
    with open_published(pointer) as connection:
        try:
            return dict(connection.execute("SELECT corpus, epoch_us(built_at) FROM corpus_builds").fetchall())
        except duckdb.CatalogException:
            return {}


class NothingToRepairFrom(LookupError):
    """A damaged index file was to be rebuilt from the published snapshot, and there is none."""


def repair_from_snapshot(database: Path) -> tuple[Path, dict]:
    """Rebuild the damaged DuckDB file ``database`` from the last published snapshot: the
    damaged file (and its WAL) is kept as ``<db>.damaged``, a new file gets the schema and
    every row of the snapshot. Returns the kept file and the pointer. What was indexed after
    that snapshot is redone by the next pass; the LLM answers it paid for are in the snapshot's
    ``llm_cache`` up to that publish."""
    from .duckdb_store import IndexStore
    from .schema import TABLES

    pointer = read_pointer(database)
    if not published_exists(pointer) or pointer.get("backend") == "ducklake":
        raise NothingToRepairFrom(f"{database}: no published snapshot to repair it from ({pointer_path(database)})")
    damaged = database.with_name(database.name + ".damaged")
    for live, kept in ((database, damaged), (database.with_name(database.name + ".wal"), damaged.with_suffix(".wal"))):
        if live.exists():
            os.replace(live, kept)
    store = IndexStore(database)
    with store:
        store.ensure_schema()
        connection = store.open_connection
        connection.execute(f"ATTACH '{pointer['snapshot'].replace(chr(39), chr(39) * 2)}' AS published (READ_ONLY)")
        present = {
            row[0]
            for row in connection.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = 'published'"
            ).fetchall()
        }
        connection.execute("BEGIN TRANSACTION")
        for name in TABLES:
            if name in present:
                connection.execute(f'INSERT INTO "{name}" BY NAME SELECT * FROM published."{name}"')
        connection.execute("COMMIT")
        connection.execute("DETACH published")
    return damaged, pointer
