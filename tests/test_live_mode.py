"""The live mode against someone holding the live DuckDB file (a SQL shell, a notebook),
driven the way the Dagster daemon drives it (sensor ticks, then automation): a short hold
delays the run, a long one fails it, and the file still reaches the published index
once the holder lets go, with no manual step."""

from __future__ import annotations

import threading

import duckdb

from graphrag_assets.storage.snapshot import read_pointer

from .daemon import GRAPH_ASSETS, Daemon
from .holder import Holder


def published(database: str, sql: str) -> int:
    with duckdb.connect(read_pointer(database)["snapshot"], read_only=True) as connection:
        return connection.execute(sql).fetchone()[0]


def test_a_file_added_while_a_reader_holds_the_index_reaches_the_published_index(
    instance, input_dir, settings_for, monkeypatch
):
    settings = settings_for(input_dir)
    for name, value in {
        "GRAPHRAG_INPUT_DIR": str(input_dir),
        "GRAPHRAG_DB": settings.db,
        "GRAPHRAG_VECTORS": settings.vectors,
    }.items():
        monkeypatch.setenv(name, value)
    daemon = Daemon(instance, settings, allow_failures=True)
    daemon.tick()
    assert not daemon.failed and read_pointer(settings.location()) is not None

    # A hold shorter than the lock wait: the run waits for it and succeeds.
    (input_dir / "default" / "pier_notes.txt").write_text(
        "Ines Valcourt repaired the Gullwing Pier lights with Mara Ellison.\n"
    )
    holder = Holder(settings.db)
    monkeypatch.setenv("GRAPHRAG_LOCK_WAIT_SECONDS", "120")
    threading.Timer(3.0, holder.release).start()  # let go 3 s into the run
    daemon.tick()
    assert not daemon.failed, daemon.runs
    assert published(settings.db, "SELECT count(*) FROM documents WHERE text LIKE '%Ines Valcourt%'") == 1, daemon.runs

    # A hold longer than the wait and the step's retries: the run fails, and the file is
    # not taken as seen; the first tick after the holder is gone brings it in.
    (input_dir / "default" / "lighthouse.txt").write_text(
        "Orla Brennick kept the Beacon Point lighthouse log for Clara Okafor.\n"
    )
    holder = Holder(settings.db)
    monkeypatch.setenv("GRAPHRAG_LOCK_WAIT_SECONDS", "1")
    daemon.tick()
    assert daemon.failed == [("index_sources", "default/lighthouse.txt..")]
    holder.release()
    daemon.runs.clear()
    daemon.tick()
    assert daemon.runs[0] == ("index_sources", "default/lighthouse.txt..")
    assert len(daemon.failed) == 1
    assert published(settings.db, "SELECT count(*) FROM documents WHERE text LIKE '%Orla Brennick%'") == 1
    assert published(settings.db, "SELECT count(*) FROM entities WHERE title = 'Orla Brennick'") == 1

    # Then a quiet tick: nothing left to retry.
    daemon.runs.clear()
    daemon.tick()
    assert daemon.runs == []


def test_a_file_added_to_one_of_three_corpora_builds_that_corpus_once(tmp_path, instance, settings_for, monkeypatch):
    input_dir = tmp_path / "input"
    corpora = {
        "harbor": "Ines Valcourt repaired the Gullwing Pier lights with Mara Ellison.\n",
        "recipes": "Chef Amara Quist cooked fennel soup at the Larkspur Inn with Hugo Brandt.\n",
        "archive": "Clara Okafor catalogued the Port Calder letters of Victor Ashdown.\n",
    }
    for corpus, text in corpora.items():
        (input_dir / corpus).mkdir(parents=True)
        (input_dir / corpus / "first.txt").write_text(text)
    settings = settings_for(input_dir)
    for variable, value in settings.environment().items():  # where the sensor reads its settings
        monkeypatch.setenv(variable, value)
    daemon = Daemon(instance, settings)
    daemon.tick()
    assert sorted(corpus for job, corpus in daemon.runs if job.startswith("automation")) == sorted(corpora)

    daemon.runs.clear()
    (input_dir / "recipes" / "tart.txt").write_text("Amara Quist served a plum tart to Mayor Helen Strand.\n")
    daemon.tick()
    assert daemon.runs == [("index_sources", "recipes/tart.txt.."), ("automation:" + ",".join(GRAPH_ASSETS), "recipes")]
    # The corpus's own snapshot has the file: a local search of recipes can answer about it.
    assert published(settings.db, "SELECT count(*) FROM entities WHERE title = 'Helen Strand'") == 1
    daemon.runs.clear()
    daemon.follow_automation()
    daemon.tick()
    assert daemon.runs == []  # no second build
