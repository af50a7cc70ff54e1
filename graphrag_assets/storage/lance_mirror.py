"""The process that writes the LanceDB mirror.

Importing LanceDB costs about a second and a half of CPU (its REST namespace client builds
hundreds of pydantic models), and a Python process computes on one core at a time: in the
indexer's process that second would hold up the steps and the event loop waiting for
answers. So the mirror is written by a process of its own, on the other core: started
(``start``) as soon as a pass knows it will build a graph, it imports LanceDB while the
indexer starts its runs, and by the time the embeddings step hands it the vectors it is
ready. A step that finds none running (a run launched from the UI) starts it then.

The indexer's side sends one request at a time as a JSON line on the process's standard
input, the vectors in an Arrow IPC file beside the mirror, and reads a JSON line back; a
failure comes back as the error's text and is raised here. The process ends when its input
closes: at the exit of the process that started it, which waits for it (its CPU counts
as that process's children's), or when that one dies.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import threading
import traceback
from pathlib import Path

import polars as pl

from ..core.embedding import EMBEDDING_KINDS


class MirrorError(RuntimeError):
    """The mirror process failed a request or ended."""


class _MirrorProcess:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.pid = os.getpid()  # a process forked from this one must start its own
        self.used = False
        atexit.register(self.stop)

    def stop(self) -> None:
        if self.pid != os.getpid() or self.process.poll() is not None:
            return
        if not self.used:
            self.process.terminate()  # never asked anything (the pass failed early): nothing to finish
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def request(self, **message) -> dict:
        self.used = True
        try:
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline()
        except (BrokenPipeError, OSError):
            answer = ""
        if not answer:
            code = self.process.wait()
            raise MirrorError(f"the LanceDB mirror process ended (exit code {code}); its error is on stderr above")
        reply = json.loads(answer)
        if "error" in reply:
            raise MirrorError(f"writing the LanceDB mirror failed: {reply['error']}")
        return reply


_lock = threading.Lock()
_running: _MirrorProcess | None = None


def start() -> None:
    """Start the mirror process of this process if none runs yet (without waiting for it)."""
    with _lock:
        _serving()


def _serving() -> _MirrorProcess:
    """This process's mirror process, started if there is none (called under ``_lock``)."""
    global _running
    if _running is None or _running.pid != os.getpid() or _running.process.poll() is not None:
        _running = _MirrorProcess()
    return _running


def _call(**message) -> dict:
    with _lock:  # one request at a time on the pipes
        return _serving().request(**message)


def replace_corpus(path: Path, corpus: str, embeddings: pl.DataFrame) -> tuple[dict[str, int], bool]:
    """Replace the corpus's rows of each kind's table with ``embeddings`` (id, kind,
    corpus, vector): (rows per kind written, whether a table was made anew for vectors of
    another size, dropping the other corpora's rows of it)."""
    path.mkdir(parents=True, exist_ok=True)
    staged = path / f".incoming-{os.getpid()}-{threading.get_ident()}.arrow"
    # The oldest Arrow layout (large strings and lists), which pyarrow computes on everywhere.
    embeddings.select("id", "kind", "corpus", "vector").write_ipc(staged, compat_level=pl.CompatLevel.oldest())
    try:
        reply = _call(op="replace_corpus", path=str(path), corpus=corpus, vectors=str(staged))
        return reply["counts"], reply["remade"]
    finally:
        staged.unlink(missing_ok=True)


def table_versions(path: Path) -> dict[str, int]:
    """kind -> the version of its LanceDB table (tables that exist)."""
    return _call(op="table_versions", path=str(path))["versions"]


# -- the mirror process ------------------------------------------------------------------


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _replace_corpus(lancedb, pa, pc, path: str, corpus: str, vectors: str) -> dict:
    db = lancedb.connect(path)
    remade = False
    existing = set(db.list_tables().tables)
    rows = pa.ipc.open_file(vectors).read_all()
    counts = {}
    for kind in EMBEDDING_KINDS:
        of_kind = rows.filter(pc.equal(rows["kind"], kind))
        values = of_kind["vector"].combine_chunks()
        dimensions = len(values[0]) if of_kind.num_rows else None
        table = None
        if kind in existing:
            try:
                table = db.open_table(kind)
                stored = table.schema.field("vector").type.list_size
                if dimensions is None or stored == dimensions:
                    table.delete(f"corpus = {_quote(corpus)}")
            except (OSError, RuntimeError, ValueError) as error:
                # A damaged table (a data file cut short, its manifests gone) cannot be read or
                # dropped by LanceDB: its folder goes and the table is made again from DuckDB's
                # vectors, the other corpora's rows by the next pass, as below.
                print(f"LanceDB table {Path(path) / f'{kind}.lance'} is damaged, made again: {error}", file=sys.stderr)
                shutil.rmtree(Path(path) / f"{kind}.lance", ignore_errors=True)
                table, remade = None, True
            if table is not None and dimensions is not None and stored != dimensions:
                # A new embedding model: vectors of another size cannot share a column.
                # The other corpora lose their rows of this kind: their mirror is behind
                # (graphrag_mirror.json, vector_store.py), and the next pass rebuilds it.
                db.drop_table(kind)
                table, remade = None, True
        if of_kind.num_rows:
            flat = values.flatten().cast(pa.float32())
            arrow = pa.table(
                {
                    "id": of_kind["id"].cast(pa.string()),
                    "corpus": of_kind["corpus"].cast(pa.string()),
                    "vector": pa.FixedSizeListArray.from_arrays(flat, dimensions),
                }
            )
            if table is None:
                db.create_table(kind, arrow)
            else:
                table.add(arrow)
        counts[kind] = of_kind.num_rows
    return {"counts": counts, "remade": remade}


def _table_versions(lancedb, path: str) -> dict[str, int]:
    db = lancedb.connect(path)
    names = set(db.list_tables().tables)
    return {kind: db.open_table(kind).version for kind in EMBEDDING_KINDS if kind in names}


def main() -> None:
    import lancedb
    import pyarrow as pa
    import pyarrow.compute as pc

    for line in sys.stdin:
        message = json.loads(line)
        try:
            if message["op"] == "replace_corpus":
                reply = _replace_corpus(lancedb, pa, pc, message["path"], message["corpus"], message["vectors"])
            else:
                reply = {"versions": _table_versions(lancedb, message["path"])}
        except Exception as error:
            traceback.print_exc()
            reply = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    # Every request is answered and nothing is left to write: no teardown of LanceDB's
    # runtime and modules, which would only delay the process waiting for this one.
    os._exit(0)


if __name__ == "__main__":
    main()
