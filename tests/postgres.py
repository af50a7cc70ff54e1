"""A throwaway PostgreSQL server for tests: initdb in a temporary directory, the server on
a free local port, one database per test.

initdb and postgres refuse to run as root (CI runs as root), so there they run as the
user ``nobody``, which owns the data directory."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import closing
from pathlib import Path

import psycopg2

BINARIES = ("initdb", "postgres")
USER = "dagster"


def missing_binaries() -> list[str]:
    return [name for name in BINARIES if shutil.which(name) is None]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="graphrag-postgres-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.process: subprocess.Popen | None = None
        # As root, the server's files and processes belong to nobody (the temporary
        # directory is outside pytest's root-only tmp_path, so nobody can reach it).
        self.account = pwd.getpwnam("nobody") if os.geteuid() == 0 else None
        if self.account:
            os.chown(self.root, self.account.pw_uid, self.account.pw_gid)

    def _as_owner(self) -> dict:
        if self.account is None:
            return {}
        return {"user": self.account.pw_uid, "group": self.account.pw_gid, "extra_groups": []}

    def start(self) -> PostgresServer:
        subprocess.run(
            ["initdb", "-D", str(self.data), "-U", USER, "--auth=trust", "--encoding=UTF8", "--no-sync"],
            check=True,
            capture_output=True,
            **self._as_owner(),
        )
        self.process = subprocess.Popen(
            [
                "postgres",
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-k",
                str(self.data),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(self.root / "server.log").open("w"),
            **self._as_owner(),
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg2.connect(**self.connection("postgres")).close()
                return self
            except psycopg2.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"PostgreSQL did not start: {(self.root / 'server.log').read_text()[-2000:]}"
                    ) from None
                time.sleep(0.2)

    def connection(self, database: str) -> dict:
        return {"host": "127.0.0.1", "port": self.port, "user": USER, "dbname": database}

    def environment(self, database: str) -> dict[str, str]:
        """The DAGSTER_PG_* variables deploy/postgres/dagster.yaml reads."""
        return {
            "DAGSTER_PG_HOST": "127.0.0.1",
            "DAGSTER_PG_PORT": str(self.port),
            "DAGSTER_PG_USER": USER,
            "DAGSTER_PG_PASSWORD": "",
            "DAGSTER_PG_DB": database,
        }

    def create_database(self, name: str) -> str:
        with closing(psycopg2.connect(**self.connection("postgres"))) as connection:
            connection.autocommit = True  # CREATE DATABASE cannot run in a transaction
            connection.cursor().execute(f'CREATE DATABASE "{name}"')
        return name

    def query(self, database: str, sql: str, parameters: tuple = ()) -> list[tuple]:
        with closing(psycopg2.connect(**self.connection(database))) as connection, connection.cursor() as cursor:
            cursor.execute(sql, parameters)
            return cursor.fetchall()

    def stop(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGINT)  # "fast" shutdown: does not wait for clients
            self.process.wait(timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)
