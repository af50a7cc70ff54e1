"""Damaged and left-over files of the store, and what a dry run writes: each fault is made
by the test on the files a real ``graphrag-index`` (a subprocess with a real Dagster
instance) wrote, and the message must name the file or setting, keep what is indexed, and
let a plain rerun (or the repair command it names) complete."""

from __future__ import annotations

import json
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from graphrag_assets.storage.duckdb_store import IndexStore
from graphrag_assets.storage.location import index_location
from graphrag_assets.storage.snapshot import pointer_path, snapshot_dir

from .conftest import REPO
from .test_reliability import Indexer, published_snapshot

COUNTS = "SELECT (SELECT count(*) FROM entities) AS entities, (SELECT count(*) FROM text_units) AS text_units"


def test_a_damaged_index_file_is_named_at_once_and_rebuilt_from_the_published_snapshot(tmp_path):
    indexer = Indexer(tmp_path)
    assert indexer.run().returncode == 0
    published = indexer.query(COUNTS, snapshot=True)
    # A page of the file overwritten: DuckDB reports a checksum mismatch "in block at location ...".
    with open(indexer.database, "r+b") as file:
        file.seek(4096)
        file.write(b"\xff" * 4096)

    started = time.monotonic()
    damaged = indexer.run()  # with the default lock wait of 600 s
    assert time.monotonic() - started < 120
    assert damaged.returncode == 2, damaged.stderr[-3000:]
    assert f"{indexer.database} is damaged" in damaged.stderr
    assert str(published_snapshot(indexer.database)) in damaged.stderr
    assert "--repair-from-snapshot" in damaged.stderr
    assert "held by" not in damaged.stderr and "Traceback" not in damaged.stderr

    repair = subprocess.run(
        [*indexer.command, "--repair-from-snapshot"], cwd=REPO, env=indexer.env, capture_output=True, text=True
    )
    assert repair.returncode == 0, repair.stderr[-3000:]
    kept = indexer.database.with_name(indexer.database.name + ".damaged")
    assert str(kept) in repair.stdout and kept.is_file()
    assert indexer.query(COUNTS).equals(published)

    rerun = indexer.run()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert indexer.query(COUNTS, snapshot=True).equals(published)
    assert indexer.query(COUNTS).equals(published)


def test_a_pointer_that_is_not_json_is_repaired_from_the_snapshots(tmp_path):
    indexer = Indexer(tmp_path)
    assert indexer.run().returncode == 0
    snapshot = published_snapshot(indexer.database)
    published = indexer.query(COUNTS, snapshot=True)
    pointer = pointer_path(indexer.database)
    pointer.write_text('{"backend": "duckdb", "snapsh')  # cut short, as by a full disk

    rerun = indexer.run()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"{pointer} was not valid JSON" in rerun.stderr
    assert pointer.with_name(pointer.name + ".damaged").read_text() == '{"backend": "duckdb", "snapsh'
    assert json.loads(pointer.read_text())["snapshot"] == str(snapshot)
    assert indexer.query(COUNTS, snapshot=True).equals(published)
    assert "no work: index is up to date" in rerun.stdout


def test_copies_left_by_publishes_that_died_are_removed(tmp_path):
    indexer = Indexer(tmp_path)
    assert indexer.run().returncode == 0
    folder = snapshot_dir(indexer.database)
    size = indexer.database.stat().st_size
    # A publish that cannot finish its copy (the file-size limit of a full disk) leaves none.
    code = (
        "import resource, signal, sys\n"
        "from graphrag_assets.storage.snapshot import publish_snapshot\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), int(sys.argv[3])))\n"
        "try:\n"
        "    publish_snapshot(sys.argv[1], sys.argv[2], 'default')\n"
        "except OSError as error:\n"
        "    print('failed', error.errno)\n"
    )
    full = subprocess.run(
        [sys.executable, "-c", code, str(indexer.database), str(indexer.vectors), str(size // 2)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert full.stdout.startswith("failed"), full.stdout + full.stderr[-3000:]
    assert not list(folder.glob("*.partial"))
    # Those a killed publish left are removed by the next one.
    for stamp in ("20260101T000000000000", "20260102T000000000000"):
        (folder / f"{indexer.database.stem}.{stamp}.partial").write_bytes(indexer.database.read_bytes())
    indexer.edit()
    rerun = indexer.run()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert not list(folder.glob("*.partial"))
    assert indexer.query("SELECT count(*) AS n FROM text_units WHERE text LIKE '%Quillon%'", snapshot=True)["n"][0]


def test_a_dry_run_writes_no_index_and_an_unknown_catalog_scheme_names_the_setting(tmp_path):
    indexer = Indexer(tmp_path)
    dry = subprocess.run([*indexer.command, "--dry-run"], cwd=REPO, env=indexer.env, capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "dry run: 7 new" in dry.stdout
    assert not indexer.database.parent.exists()
    assert not indexer.vectors.exists()

    odd = indexer.run(GRAPHRAG_DUCKLAKE_CATALOG="mysql:foo")
    assert odd.returncode == 2
    assert "GRAPHRAG_DUCKLAKE_CATALOG" in odd.stderr and "mysql" in odd.stderr and "Traceback" not in odd.stderr
    assert not (REPO / "mysql:foo").exists() and not indexer.database.parent.exists()

    assert indexer.run().returncode == 0
    assert indexer.query(COUNTS, snapshot=True)["text_units"][0] == 13


def test_a_damaged_vector_mirror_is_rebuilt_from_duckdb(tmp_path):
    indexer = Indexer(tmp_path)
    assert indexer.run().returncode == 0
    tables = sorted(indexer.vectors.glob("*.lance"))
    assert len(tables) >= 2
    # One table's data files cut short, another's manifests gone.
    for data in (tables[0] / "data").iterdir():
        with open(data, "r+b") as file:
            file.truncate(10)
    shutil.rmtree(tables[1] / "_versions")

    rerun = indexer.run()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"vectors damaged ({tables[0]}" in rerun.stdout or f"vectors damaged ({tables[1]}" in rerun.stdout
    import lancedb

    mirror = lancedb.connect(str(indexer.vectors))
    counts = indexer.query("SELECT kind, count(*) AS n FROM embeddings GROUP BY kind")
    assert counts.height == len(tables)
    for kind, n in counts.iter_rows():
        table = mirror.open_table(kind)
        assert table.count_rows() == n
        assert table.to_arrow().num_rows == n  # every data file reads whole
    assert indexer.query(COUNTS, snapshot=True)["text_units"][0] == 13
    assert "no work: index is up to date" in indexer.run().stdout


def test_commands_starting_together_on_a_fresh_home_and_a_fresh_lake_both_succeed(tmp_path):
    for trial in range(2):
        indexer = Indexer(tmp_path / f"trial{trial}")
        together = [
            subprocess.Popen(
                [*indexer.command, "--dry-run"],
                cwd=REPO,
                env=indexer.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(2)
        ]
        for command in together:
            out, err = command.communicate(timeout=600)
            assert command.returncode == 0, err.decode()[-3000:]
        home = Path(indexer.env["DAGSTER_HOME"])
        for storage in home.rglob("*.db"):
            with sqlite3.connect(storage) as connection:
                tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if "alembic_version" in tables:
                    assert connection.execute("SELECT count(*) FROM alembic_version").fetchone()[0] == 1, storage
    assert indexer.run().returncode == 0

    # Two writers creating the tables of one fresh SQLite DuckLake catalog at once.
    catalog = f"sqlite:{tmp_path / 'lake' / 'catalog.sqlite'}"
    code = (
        "import sys\n"
        "from graphrag_assets.storage.duckdb_store import IndexStore\n"
        "from graphrag_assets.storage.location import index_location\n"
        "IndexStore(index_location(sys.argv[1], sys.argv[2])).ensure_schema()\n"
    )
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path / "lake" / "graphrag.duckdb"), catalog],
            cwd=REPO,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=600)
        assert writer.returncode == 0, err.decode()[-3000:]
    with IndexStore(index_location(str(tmp_path / "lake" / "graphrag.duckdb"), catalog), read_only=True) as store:
        assert store.read("SELECT count(*) AS n FROM entities")["n"][0] == 0


def _file_size_limit(limit: int):
    """What a full disk does to the writes of a process: they fail (EFBIG, not a kill)."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_full_disk_under_dagster_home_is_named_and_loses_nothing(tmp_path):
    indexer = Indexer(tmp_path)
    assert indexer.run().returncode == 0
    indexed = indexer.query(COUNTS)
    home = tmp_path / "full_home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home)
    env = indexer.env | {"DAGSTER_HOME": str(home)}

    full = subprocess.run(
        indexer.command, cwd=REPO, env=env, capture_output=True, text=True, preexec_fn=_file_size_limit(64 * 1024)
    )
    assert full.returncode == 1
    assert f"DAGSTER_HOME={home}" in full.stderr and "disk is full" in full.stderr
    assert "Traceback" not in full.stderr
    assert indexer.query(COUNTS).equals(indexed)

    rerun = subprocess.run(indexer.command, cwd=REPO, env=env, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert indexer.query(COUNTS, snapshot=True).equals(indexed)
