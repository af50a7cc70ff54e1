"""Someone holding the live DuckDB file (a SQL shell, a notebook): another process with a
read-only connection open, which blocks every writer until it lets go."""

from __future__ import annotations

import subprocess
import sys


class Holder:
    """Another process with a read-only connection open on the live file."""

    def __init__(self, database: str):
        code = (
            "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); print('open', flush=True); "
            "sys.stdin.read()"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, database], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout.readline().strip() == "open"

    def release(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)

    def __enter__(self) -> Holder:
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()  # a no-op once released
