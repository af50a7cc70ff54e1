import json
import os
import shutil
import subprocess
import sys

import duckdb
import polars as pl
import pytest

from graphrag_assets.core.inputs import InputError, SourceFile, TableColumns, discover_sources, read_source

from .conftest import REPO, SAMPLE_CORPUS


def _source(tmp_path, name: str, content: bytes, corpus: str = "default") -> SourceFile:
    path = tmp_path / name
    path.write_bytes(content)
    return SourceFile(corpus, name, path)


def test_discovery_maps_folders_to_corpora_and_loose_files_to_default(tmp_path):
    (tmp_path / "novels").mkdir()
    (tmp_path / "novels" / "a.txt").write_text("A story.")
    (tmp_path / "novels" / "deep").mkdir()
    (tmp_path / "novels" / "deep" / "b.md").write_text("# B")
    (tmp_path / "loose file.txt").write_text("Loose.")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.txt").write_text("ignored")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    keys = [s.partition_key for s in discover_sources(tmp_path)]
    assert keys == ["default/loose file.txt", "novels/a.txt", "novels/deep/b.md"]
    forced = [s.partition_key for s in discover_sources(tmp_path, corpus="all")]
    assert forced == ["all/loose file.txt", "all/novels/a.txt", "all/novels/deep/b.md"]


def test_sample_corpus_reads_every_format():
    sources = discover_sources(SAMPLE_CORPUS)
    frames = {s.relative_path: read_source(s) for s in sources}
    assert {p.rsplit(".", 1)[1] for p in frames} >= {"txt", "md", "csv", "jsonl"}
    assert frames["city_council.csv"].height == 3
    assert frames["festival_notes.jsonl"].height == 4
    titles = frames["festival_notes.jsonl"]["title"].to_list()
    assert all(titles) and len(set(titles)) == 4
    assert "卡尔德港" in frames["sister_city_zh.txt"]["text"][0]


def test_parquet_with_custom_columns_and_stable_document_ids(tmp_path):
    path = tmp_path / "rows.parquet"
    pl.DataFrame({"body": ["First doc.", "Second doc."], "name": ["One", "Two"], "key": ["k1", "k2"]}).write_parquet(
        path
    )
    source = SourceFile("default", "rows.parquet", path)
    columns = TableColumns(text_column="body", title_column="name", id_column="key")
    documents = read_source(source, columns)
    assert documents["title"].to_list() == ["One", "Two"]
    # Identity comes from location + row key: editing the text keeps the id.
    pl.DataFrame(
        {"body": ["First doc, edited.", "Second doc."], "name": ["One", "Two"], "key": ["k1", "k2"]}
    ).write_parquet(path)
    assert read_source(source, columns)["id"].to_list() == documents["id"].to_list()


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("empty.txt", b"  \n", "file is empty"),
        ("binary.txt", b"\x00\x01\x02PK\x03\x04" * 10, "binary"),
        ("latin1.txt", "Café crème".encode("latin-1"), "not valid UTF-8"),
        ("bad.csv", b'id,text\n1,"unterminated\n2,ok,extra,fields\n', "unreadable CSV"),
        ("notext.csv", b"id,body\n1,hello\n", "text column 'text' not found (columns: id, body)"),
        ("bad.jsonl", b'{"text": "ok"}\n{not json}\n', "line 2 is not valid JSON"),
        ("bad.parquet", b"PAR1 this is not parquet", "unreadable Parquet"),
    ],
)
def test_bad_input_gets_a_clear_error_naming_the_file(tmp_path, name, content, message):
    with pytest.raises(InputError) as error:
        read_source(_source(tmp_path, name, content))
    assert f"default/{name}" in str(error.value)
    assert message in str(error.value)


def test_utf8_bom_and_empty_rows(tmp_path):
    content = "\ufeffid,title,text\n1,A,Hello there.\n2,B,\n".encode("utf-8")
    documents = read_source(_source(tmp_path, "bom.csv", content))
    assert documents["title"].to_list() == ["A"]  # the empty row is not a document


def test_jsonl_documents_keep_their_ids_as_keys(tmp_path):
    lines = [json.dumps({"id": "x", "text": "One."}), json.dumps({"id": "x", "text": "Two."})]
    with pytest.raises(InputError, match="duplicate document ids"):
        read_source(_source(tmp_path, "dup.jsonl", "\n".join(lines).encode()))


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_with_a_byte_order_mark_are_read_as_text(tmp_path, encoding):
    text = "Mara Ellison sailed to Port Calder. 卡尔德港的码头。\n"
    raw = "\ufeff".encode(encoding) + text.encode(encoding)
    assert read_source(_source(tmp_path, "wide.txt", raw))["text"].to_list() == [text]
    table = read_source(_source(tmp_path, "wide.csv", "\ufeffid,text\n1,Hello there.\n".encode(encoding)))
    assert table.select("title", "text").rows() == [("wide.csv#1", "Hello there.")]  # the header's first name is "id"


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe\x00\x00binary",  # a UTF-32 mark by chance, then no UTF-32
        "no mark".encode("utf-16-le"),  # UTF-16 needs its byte order mark
        b"\xff\xfe" + "a\x00b".encode("utf-16-le"),  # decodes, but to NUL characters
    ],
)
def test_bytes_that_only_look_like_wide_text_are_binary(tmp_path, content):
    with pytest.raises(InputError, match="file looks binary"):
        read_source(_source(tmp_path, "odd.txt", content))


def test_duplicate_ids_are_named_not_the_titles(tmp_path):
    lines = [
        {"id": "x", "title": "One", "text": "One."},
        {"id": "x", "title": "Two", "text": "Two."},
        {"id": 7, "title": "Three", "text": "3."},
    ]
    lines += [{"id": 7, "title": "Four", "text": "4."}, {"id": "y", "title": "Five", "text": "5."}]
    with pytest.raises(InputError) as error:
        read_source(_source(tmp_path, "dup.jsonl", "\n".join(map(json.dumps, lines)).encode()))
    assert str(error.value) == "default/dup.jsonl: duplicate document ids in id column 'id': 'x', '7'"


@pytest.mark.parametrize(
    "name, write, kind",
    [
        ("ints.parquet", lambda path: pl.DataFrame({"text": [1, 2]}).write_parquet(path), "int"),
        ("lists.parquet", lambda path: pl.DataFrame({"text": [["a", "b"], ["c"]]}).write_parquet(path), "list"),
        ("numbers.jsonl", lambda path: path.write_text('{"text": "Fine."}\n{"text": 42}\n'), "int"),
        ("lists.jsonl", lambda path: path.write_text('{"text": ["a", "b"]}\n'), "list"),
        ("objects.jsonl", lambda path: path.write_text('{"text": {"en": "Hi."}}\n'), "dict"),
    ],
)
def test_a_text_column_that_is_not_text_is_refused_naming_the_file_and_column(tmp_path, name, write, kind):
    write(tmp_path / name)
    with pytest.raises(InputError) as error:
        read_source(SourceFile("default", name, tmp_path / name))
    assert str(error.value).startswith(f"default/{name}: text column 'text' holds {kind} values, not strings")


def test_what_is_not_a_regular_file_is_a_source_that_says_what_it_is(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "fine.txt").write_text("Fine.")
    os.symlink("loop.txt", folder / "loop.txt")
    os.symlink("missing.txt", folder / "dangling.txt")
    os.symlink(".", folder / "again")  # a folder symlink: not followed
    os.symlink("/dev/null", folder / "null.txt")
    os.symlink("missing", folder / "unsupported.png")  # not a supported suffix: ignored like any .png
    sources = {s.relative_path: s for s in discover_sources(tmp_path)}
    assert sorted(sources) == ["again", "dangling.txt", "fine.txt", "loop.txt", "null.txt"]
    expected = {
        "loop.txt": "c/loop.txt: symlink loop (too many levels of symbolic links); not read",
        "dangling.txt": "c/dangling.txt: dangling symlink (its target missing.txt does not exist); not read",
        "again": (
            "c/again: symlink to a folder (not followed: it may loop or lead out of the input folder), not a regular "
            "file; not read"
        ),
        "null.txt": (
            f"c/null.txt: resolves to /dev/null, outside the input folder {os.path.realpath(tmp_path)}; not read"
        ),
    }
    for name, message in expected.items():
        assert sources[name].read_hash()  # planned like any source; reading records why it is not one
        with pytest.raises(InputError) as error:
            read_source(sources[name])
        assert str(error.value) == message
    outside_any_folder = SourceFile("c", "null.txt", folder / "null.txt")  # no input folder to stay in
    with pytest.raises(InputError, match="symlink to a character device, not a regular file; not read"):
        read_source(outside_any_folder)


def test_graphrag_index_records_every_input_it_cannot_index_and_reads_wide_text(tmp_path, dagster_home):
    """Each kind of input that used to be skipped without a word, or indexed wrongly, gets a
    ``source_errors`` row naming its file; UTF-16 text is indexed. A subprocess with a
    timeout: a reader that opened the FIFO would block for good."""
    folder = tmp_path / "in" / "c"
    folder.mkdir(parents=True)
    shutil.copy(SAMPLE_CORPUS / "default" / "calder_shipping.txt", folder / "fine.txt")
    wide = "Clara Okafor sailed from Port Calder to the Harbor Institute.\n"
    (folder / "wide.txt").write_bytes(b"\xff\xfe" + wide.encode("utf-16-le"))
    os.symlink("loop.txt", folder / "loop.txt")
    os.symlink("missing.txt", folder / "dangling.txt")
    os.symlink("..", folder / "up")
    os.mkfifo(folder / "pipe.txt")
    (folder / "dup.jsonl").write_text(
        '{"id": "k1", "title": "First", "text": "One."}\n{"id": "k1", "title": "Second", "text": "Two."}\n'
    )
    (folder / "numbers.jsonl").write_text('{"text": 42}\n')
    pl.DataFrame({"text": [1, 2]}).write_parquet(folder / "ints.parquet")
    pl.DataFrame({"text": [["a"], ["b"]]}).write_parquet(folder / "lists.parquet")
    database = tmp_path / "out" / "index.duckdb"
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "DAGSTER_HOME": str(dagster_home)}
    command = [sys.executable, "-c", "import sys; from graphrag_evaluation.cli import main; sys.exit(main())"]
    command += ["--input", str(tmp_path / "in"), "--db", str(database), "--vectors", str(tmp_path / "out" / "lancedb")]
    result = subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=600)
    assert result.returncode == 2, result.stderr[-3000:]

    expected = {
        "c/loop.txt": "symlink loop",
        "c/dangling.txt": "dangling symlink (its target missing.txt does not exist)",
        "c/up": "symlink to a folder (not followed",
        "c/pipe.txt": "a FIFO (named pipe), not a regular file; not read",
        "c/dup.jsonl": "duplicate document ids in id column 'id': 'k1'",
        "c/numbers.jsonl": "text column 'text' holds int values, not strings",
        "c/ints.parquet": "text column 'text' holds int values, not strings",
        "c/lists.parquet": "text column 'text' holds list values, not strings",
    }
    with duckdb.connect(str(database), read_only=True) as connection:
        errors = dict(
            connection.execute("SELECT source_partition, error FROM source_errors WHERE corpus = 'c'").fetchall()
        )
        documents = dict(connection.execute("SELECT source_path, text FROM documents WHERE corpus = 'c'").fetchall())
    assert set(errors) == set(expected)
    for key, reason in expected.items():
        assert errors[key].startswith(f"{key}: ") and reason in errors[key], errors[key]
        assert f"unreadable source: {errors[key]}" in result.stderr
    assert documents["wide.txt"] == wide
    assert set(documents) == {"fine.txt", "wide.txt"}
