"""Corpus names are one path segment wherever they enter (CLI, environment, folder names,
partition keys from the UI or the sensor): no name or key reads a file outside the input
folder."""

from __future__ import annotations

import os

import duckdb
import pytest
from dagster import AssetKey

from graphrag_assets.core.inputs import InputError, check_corpus_name, discover_sources
from graphrag_evaluation.build import build_definitions
from graphrag_evaluation.cli import main

SECRET = "The launch code is swordfish."
BAD_NAMES = ["a/../../outside", "../x", "/abs", "..", ".", "", "a\\b", "new\nline", "nul\x00", "tab\tname"]


@pytest.fixture
def layout(tmp_path):
    """<tmp>/in/a/note.txt to index, and <tmp>/outside/secret.txt beside the input folder."""
    (tmp_path / "in" / "a").mkdir(parents=True)
    (tmp_path / "in" / "a" / "note.txt").write_text(
        "Mara Ellison met Tobias Renn at the Harbor Institute.", encoding="utf-8"
    )
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(SECRET, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("name", BAD_NAMES)
def test_invalid_corpus_names_are_refused_naming_the_setting_and_the_value(name):
    with pytest.raises(ValueError) as error:
        check_corpus_name(name, "GRAPHRAG_CORPUS (--corpus)")
    assert f"GRAPHRAG_CORPUS (--corpus) {name!r} is not a valid corpus name" in str(error.value)


@pytest.mark.parametrize("name", ["novels", "my corpus", "été", "v1.2", "default", ".notes"])
def test_one_folder_name_is_a_corpus_name(name):
    assert check_corpus_name(name, "corpus") == name


@pytest.mark.parametrize("name", ["a/../../outside", "../outside", "/abs", "..", "a\\b", "x\ny", "nul\x00"])
def test_cli_refuses_a_traversal_corpus_with_exit_2_and_reads_nothing(layout, dagster_home, capsys, name):
    database = layout / "out" / "index.duckdb"
    status = main(
        [
            "--input",
            str(layout / "in"),
            "--corpus",
            name,
            "--db",
            str(database),
            "--vectors",
            str(layout / "out" / "lancedb"),
        ]
    )
    error = capsys.readouterr().err
    assert status == 2
    assert "invalid setting: GRAPHRAG_CORPUS (--corpus)" in error and repr(name) in error
    assert not database.exists()


def test_environment_corpus_is_validated_too(layout, dagster_home, capsys, monkeypatch):
    monkeypatch.setenv("GRAPHRAG_CORPUS", "../outside")
    status = main(["--input", str(layout / "in"), "--db", str(layout / "out" / "index.duckdb")])
    assert status == 2
    assert (
        "invalid setting: GRAPHRAG_CORPUS (--corpus) '../outside' is not a valid corpus name" in capsys.readouterr().err
    )


@pytest.mark.parametrize("folder", ["back\\slash", "bell\x07"])
def test_a_folder_whose_name_is_no_corpus_name_is_named_and_not_indexed(layout, dagster_home, capsys, folder):
    (layout / "in" / folder).mkdir()
    (layout / "in" / folder / "doc.txt").write_text("Clara Okafor sailed to Port Calder.", encoding="utf-8")
    with pytest.raises(InputError, match="folder name .* is not a valid corpus name"):
        discover_sources(layout / "in")
    status = main(
        [
            "--input",
            str(layout / "in"),
            "--db",
            str(layout / "out" / "index.duckdb"),
            "--vectors",
            str(layout / "out" / "lancedb"),
        ]
    )
    assert status == 2
    assert (
        f"graphrag-index: {layout / 'in' / folder}: folder name {folder!r} is not a valid corpus name"
        in capsys.readouterr().err
    )
    # Forced into one corpus, the folder's name is only a path inside it.
    assert [s.partition_key for s in discover_sources(layout / "in", "all")] == sorted(
        ["all/a/note.txt", f"all/{folder}/doc.txt"]
    )


def test_partition_keys_from_the_ui_never_read_outside_the_input_folder(layout, instance, settings_for):
    """Keys a user adds in the UI (or a sensor computes) go straight to the reader: each is
    refused with an error naming it, and the secret beside the input folder stays unread."""
    os.symlink(layout / "outside", layout / "in" / "a" / "door")  # a folder symlink leading out
    os.symlink(layout / "outside" / "secret.txt", layout / "in" / "a" / "leak.txt")  # a file symlink leading out
    settings = settings_for(layout / "in")
    refused = {
        "../outside/secret.txt": "not a source partition key: corpus '..'",
        "a/../../outside/secret.txt": "must be relative, without empty, '.' or '..' parts",
        f"{layout / 'outside' / 'secret.txt'}": (
            "not a source partition key: corpus '' is not a valid corpus name: it is empty"
        ),
        "a//secret.txt": "must be relative",
        "no-slash": "must be relative",
        "a/door/secret.txt": "outside the input folder",
        "a/leak.txt": "outside the input folder",
    }
    instance.add_dynamic_partitions("sources", ["a/note.txt", *refused])
    job = build_definitions(settings).resolve_implicit_global_asset_job_def()
    for key in ["a/note.txt", *refused]:
        assert job.execute_in_process(
            instance=instance, asset_selection=[AssetKey("documents")], partition_key=key
        ).success
    with duckdb.connect(settings.db, read_only=True) as connection:
        documents = connection.execute("SELECT source_partition, text FROM documents").fetchall()
        errors = dict(connection.execute("SELECT source_partition, error FROM source_errors").fetchall())
    assert [key for key, _ in documents] == ["a/note.txt"]
    assert not any(SECRET in text for _, text in documents)
    assert set(errors) == set(refused)
    for key, message in refused.items():
        assert errors[key].startswith(f"{key}: ") and message in errors[key], errors[key]
