"""Where the index's tables live: one DuckDB file (the default), or a DuckLake.

A DuckLake keeps the same tables as parquet files in a folder or object store
(``GRAPHRAG_DUCKLAKE_DATA_PATH``) and their metadata in a catalog database
(``GRAPHRAG_DUCKLAKE_CATALOG``): a DuckDB file (one process at a time, like the default
backend), SQLite (several processes on one machine) or PostgreSQL (several processes and
machines). Every commit is a snapshot that readers can open as of that moment.

Both are opened here and nowhere else. A DuckLake is attached to an in-memory DuckDB
connection and made its default catalog (``USE``), so every statement of the write path,
the LLM cache and the query side runs unchanged on either backend. Extensions are loaded
from the packages that ship DuckDB's signed binaries (``duckdb-extension-ducklake`` and
the scanners of the catalog databases), with signature checks on; without the package,
``LOAD`` finds an extension installed the usual way (``INSTALL ducklake`` with internet).
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from .connection import connect, initialising, is_lock_error, opened_with_lock_wait

LAKE_ALIAS = "graphrag"
# The extension each catalog database needs besides ducklake itself, and the Python package
# shipping DuckDB's signed build of each.
CATALOG_EXTENSIONS = {"duckdb": (), "sqlite": ("sqlite_scanner",), "postgres": ("postgres_scanner",)}
EXTENSION_PACKAGES = {
    "ducklake": "duckdb_extension_ducklake",
    "sqlite_scanner": "duckdb_extension_sqlite_scanner",
    "postgres_scanner": "duckdb_extension_postgres_scanner",
}
# A SQLite catalog's writers wait for each other this long (ms) instead of failing at once.
SQLITE_BUSY_TIMEOUT_MS = 60_000


class BackendUnavailable(RuntimeError):
    """The DuckLake backend was asked for, but an extension it needs cannot be loaded."""


def extension_file(name: str) -> Path | None:
    """The extension's binary from its package, for this DuckDB version (None: not installed)."""
    spec = importlib.util.find_spec(EXTENSION_PACKAGES[name])
    if spec is None or not spec.submodule_search_locations:
        return None
    found = Path(next(iter(spec.submodule_search_locations))) / "extensions" / f"v{duckdb.__version__}"
    path = found / f"{name}.duckdb_extension"
    return path if path.is_file() else None


def load_extension(connection: duckdb.DuckDBPyConnection, name: str) -> None:
    path = extension_file(name)
    try:
        connection.execute(f"LOAD '{path}'" if path else f"LOAD {name}")
    except duckdb.Error as error:
        package = EXTENSION_PACKAGES[name].replace("_", "-")
        raise BackendUnavailable(
            f"GRAPHRAG_DUCKLAKE_CATALOG needs DuckDB's {name} extension: install the ducklake extra "
            f"(pip install 'graphrag-dagster[ducklake]', which brings {package}=={duckdb.__version__}), or run "
            f"INSTALL {name} with internet access ({error})"
        ) from error


@dataclass(frozen=True)
class DuckLake:
    """A DuckLake catalog and the folder (or object store URL) of its data files."""

    catalog: str  # a DuckDB file path, sqlite:PATH or postgres:CONNINFO (a leading ducklake: is allowed)
    data_path: str

    def __post_init__(self):
        object.__setattr__(self, "catalog", self.catalog.removeprefix("ducklake:"))

    @property
    def kind(self) -> str:
        prefix = self.catalog.split(":", 1)[0]
        return prefix if prefix in ("sqlite", "postgres") else "duckdb"

    @property
    def several_writers(self) -> bool:
        """Whether processes can write at the same time (a DuckDB catalog file has one writer)."""
        return self.kind != "duckdb"

    @property
    def catalog_file(self) -> Path | None:
        """The catalog's local file (DuckDB or SQLite), None for PostgreSQL."""
        if self.kind == "postgres":
            return None
        return Path(self.catalog.removeprefix("sqlite:"))

    def attach(
        self, connection: duckdb.DuckDBPyConnection, read_only: bool = False, snapshot_version: int | None = None
    ) -> None:
        """Attach the lake as the connection's default catalog."""
        for extension in ("ducklake", *CATALOG_EXTENSIONS[self.kind]):
            load_extension(connection, extension)
        options = []
        if read_only:
            options.append("READ_ONLY")
        else:
            options.append(f"DATA_PATH '{_quoted(self.data_path)}'")
        if snapshot_version is not None:
            options.append(f"SNAPSHOT_VERSION {int(snapshot_version)}")
        if self.kind == "sqlite":
            # Write-ahead logging: readers of a published version do not block the writers.
            options += ["META_JOURNAL_MODE 'WAL'", f"META_BUSY_TIMEOUT {SQLITE_BUSY_TIMEOUT_MS}"]
        connection.execute(f"ATTACH '{_quoted('ducklake:' + self.catalog)}' AS {LAKE_ALIAS} ({', '.join(options)})")
        connection.execute(f"USE {LAKE_ALIAS}")

    def catalog_for_readers(self) -> str:
        """The catalog as the published pointer records it: a PostgreSQL password is left out
        (readers take theirs from PGPASSWORD or ~/.pgpass, as libpq does)."""
        return (
            "postgres:" + _without_password(self.catalog.removeprefix("postgres:"))
            if self.kind == "postgres"
            else self.catalog
        )

    def describe(self) -> str:
        return f"DuckLake {self.catalog_for_readers()} (data {self.data_path})"


@dataclass(frozen=True)
class IndexLocation:
    """The index: ``database``, the DuckDB file, or with ``lake`` the name beside which the
    index's own files are kept (the published pointer, the query-call log, the pictures)."""

    database: str
    lake: DuckLake | None = None

    @property
    def several_writers(self) -> bool:
        return self.lake is not None and self.lake.several_writers

    def connect(
        self, read_only: bool = False, wait_seconds: float | None = None, config: dict | None = None
    ) -> duckdb.DuckDBPyConnection:
        """Open the index, waiting while another process holds the file (or DuckDB catalog)."""
        if self.lake is None:
            return connect(self.database, read_only=read_only, wait_seconds=wait_seconds, config=config)
        if not read_only:
            for folder in (self.lake.catalog_file, None if "://" in self.lake.data_path else Path(self.lake.data_path)):
                if folder is not None:
                    (folder.parent if folder == self.lake.catalog_file else folder).mkdir(parents=True, exist_ok=True)

        def open_lake() -> duckdb.DuckDBPyConnection:
            connection = duckdb.connect(":memory:", config=config or {})
            try:
                with contextlib.nullcontext() if read_only else self.creating():
                    self.lake.attach(connection, read_only=read_only)
            except duckdb.Error as error:
                connection.close()
                if isinstance(error, duckdb.IOException) and is_lock_error(error):
                    raise  # another process holds a DuckDB catalog file: waited for
                raise BackendUnavailable(
                    f"GRAPHRAG_DUCKLAKE_CATALOG: cannot open the {self.lake.describe()}: {error}"
                ) from error
            except BaseException:
                connection.close()
                raise
            return connection

        return opened_with_lock_wait(open_lake, self.lake.catalog, wait_seconds)

    def creating(self) -> contextlib.AbstractContextManager:
        """Held while a writer may create the lake's catalog or tables: two writers attaching a
        fresh SQLite or DuckDB catalog file at once would both create them, and one fails. A
        DuckDB index file has one writer at a time anyway; PostgreSQL orders its writers."""
        catalog = self.lake.catalog_file if self.lake else None
        if catalog is None:
            return contextlib.nullcontext()
        return initialising(catalog.with_name(catalog.name + ".init.lock"))

    def exists(self) -> bool:
        if self.lake is None:
            return Path(self.database).exists()
        catalog = self.lake.catalog_file
        return catalog.exists() if catalog is not None else True

    def describe(self) -> str:
        return self.lake.describe() if self.lake else str(self.database)


def index_location(db: str, ducklake_catalog: str = "", ducklake_data_path: str = "") -> IndexLocation:
    """The index as the settings name it (GRAPHRAG_DB, GRAPHRAG_DUCKLAKE_CATALOG/_DATA_PATH)."""
    if not ducklake_catalog:
        return IndexLocation(db)
    data_path = ducklake_data_path or str(Path(db).with_suffix(".lake"))
    if "://" not in data_path:
        data_path = str(Path(data_path).resolve())  # the catalog records it; relative to nowhere later
    catalog = ducklake_catalog.removeprefix("ducklake:")
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", catalog)
    if scheme and scheme.group(1) not in ("sqlite", "postgres"):
        raise ValueError(
            f"GRAPHRAG_DUCKLAKE_CATALOG={ducklake_catalog!r}: unknown catalog scheme {scheme.group(1)!r}; use a "
            "DuckDB file path, sqlite:PATH or postgres:CONNINFO (a file whose name has a colon: start it with ./)"
        )
    if not catalog.startswith("postgres:"):
        prefix = "sqlite:" if catalog.startswith("sqlite:") else ""
        catalog = prefix + str(Path(catalog.removeprefix(prefix)).resolve())
    return IndexLocation(db, DuckLake(catalog, data_path))


def configured_location(database: str | None = None) -> IndexLocation:
    """The index the environment's settings name (GRAPHRAG_DB, or ``database``, and the
    DuckLake settings): what readers open, as ``IndexSettings.location`` is for writers."""
    from ..configuration import value_of

    return index_location(
        db=database or value_of("GRAPHRAG_DB"),
        ducklake_catalog=value_of("GRAPHRAG_DUCKLAKE_CATALOG") or "",
        ducklake_data_path=value_of("GRAPHRAG_DUCKLAKE_DATA_PATH") or "",
    )


def open_lake_snapshot(lake: DuckLake, snapshot_version: int) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the lake as it was at ``snapshot_version``."""
    connection = duckdb.connect(":memory:")
    try:
        lake.attach(connection, read_only=True, snapshot_version=snapshot_version)
    except BaseException:
        connection.close()
        raise
    return connection


def current_snapshot(connection: duckdb.DuckDBPyConnection) -> int:
    """The lake's latest committed snapshot, as this connection sees it."""
    return connection.execute(f"SELECT id FROM {LAKE_ALIAS}.current_snapshot()").fetchone()[0]


def _quoted(text: str) -> str:
    return text.replace("'", "''")


def _without_password(conninfo: str) -> str:
    return " ".join(part for part in conninfo.split() if not part.lower().startswith("password="))
