"""The LanceDB mirror, written by its own process (storage/lance_mirror.py): what it writes
is what LanceDB reads back, a corpus's rows are replaced and the others kept, vectors of a
new size make the table anew and say so, a failed request is an error naming its cause
that leaves the process serving, and the process ends with the one that started it."""

import os
import subprocess
import sys
import time

import lancedb
import numpy as np
import polars as pl
import pytest

from graphrag_assets.storage import lance_mirror
from graphrag_assets.storage.vector_store import VectorStore


def _rows(corpus: str, kind: str, n: int, dimensions: int = 8) -> pl.DataFrame:
    vectors = np.random.default_rng(n).random((n, dimensions), dtype=np.float32)
    return pl.DataFrame(
        {
            "id": [f"{corpus}-{kind}-{i}" for i in range(n)],
            "kind": [kind] * n,
            "corpus": [corpus] * n,
            "vector": vectors.tolist(),
        },
        schema_overrides={"vector": pl.List(pl.Float32)},
    )


def test_the_mirror_holds_each_corpus_rows_once_and_lancedb_reads_them(tmp_path):
    store = VectorStore(tmp_path / "lancedb")
    both = pl.concat([_rows("a", "entity_description", 5), _rows("a", "text_unit_text", 3)])
    counts = store.replace_corpus("a", both, build=1)
    assert counts == {"text_unit_text": 3, "entity_description": 5, "community_full_content": 0}
    store.replace_corpus("b", _rows("b", "entity_description", 2), build=2)
    store.replace_corpus("a", _rows("a", "entity_description", 4), build=3)  # replaces a's rows only

    db = lancedb.connect(str(tmp_path / "lancedb"))
    entities = db.open_table("entity_description").to_arrow()
    assert sorted(entities["corpus"].to_pylist()) == ["a"] * 4 + ["b"] * 2
    written = dict(zip(entities["id"].to_pylist(), entities["vector"].to_pylist()))
    expected = _rows("a", "entity_description", 4)
    for key, vector in zip(expected["id"], expected["vector"]):
        assert np.allclose(written[key], vector)
    assert db.open_table("text_unit_text").count_rows() == 0  # a's new rows have none of this kind
    assert store.mirrored_builds() == {"a": 3, "b": 2}
    assert set(store.table_versions()) == {"entity_description", "text_unit_text"}


def test_vectors_of_a_new_size_make_the_table_anew_and_the_other_corpora_behind(tmp_path):
    store = VectorStore(tmp_path / "lancedb")
    store.replace_corpus("a", _rows("a", "entity_description", 3, dimensions=8), build=1)
    store.replace_corpus("b", _rows("b", "entity_description", 3, dimensions=8), build=2)
    store.replace_corpus("a", _rows("a", "entity_description", 3, dimensions=16), build=3)
    table = lancedb.connect(str(tmp_path / "lancedb")).open_table("entity_description")
    assert table.schema.field("vector").type.list_size == 16
    assert set(table.to_arrow()["corpus"].to_pylist()) == {"a"}
    assert store.mirrored_builds() == {"a": 3}  # b's mirror is behind: the next pass rebuilds it


def test_a_failed_request_names_its_cause_and_the_process_goes_on(tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    with pytest.raises(lance_mirror.MirrorError, match="LanceDB mirror"):
        lance_mirror.table_versions(not_a_folder)
    store = VectorStore(tmp_path / "lancedb")
    assert store.replace_corpus("a", _rows("a", "community_full_content", 2), build=1)["community_full_content"] == 2


def test_the_mirror_process_ends_with_the_process_that_started_it(tmp_path):
    script = (
        "from graphrag_assets.storage import lance_mirror; lance_mirror.start(); "
        "print(lance_mirror._running.process.pid, flush=True)"
    )
    started = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    child = int(started.stdout.split()[-1])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.1)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by init) is not alive
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
